// An error count of the recognizer as JSON, the same in every report.
#pragma once

#include <nlohmann/json.hpp>

#include "error_rate.h"

namespace cadenza::cli {

// {rate, errors, substitutions, deletions, insertions, reference_length}
nlohmann::json edit_counts_json(const recognition::EditCounts& counts);

}  // namespace cadenza::cli
