// `cadenza bench -p a.toml -p b.toml ... --texts FILE [--json out.json]`:
// runs each pipeline on the same texts with the same seeds and prints one row
// per pipeline, with the speedup over the first and the ceiling it implies.
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_bench_command(CLI::App& app);

}  // namespace cadenza::cli
