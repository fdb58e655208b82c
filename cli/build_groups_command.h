// `cadenza build-groups`: Acoustic Similarity Groups for acceptor.pcg from a
// token-embedding matrix in a safetensors checkpoint (PCG, Yanuka et al.,
// Eq. 1): G(t) = {t' : cos(E_t, E_t') > theta}, written as a groups file.
#pragma once

#include <cstdint>
#include <string>

#include "command.h"

namespace cadenza::cli {

struct BuildGroupsOptions {
    std::string embeddings;   // a .safetensors file, an index .json or a checkpoint directory
    std::string tensor;       // the embedding matrix, [vocab, dim]
    std::string rows;         // "START:END" (END exclusive; either may be omitted), "" = all
    double theta = 0.4;
    std::string output;
    int64_t vocab_size = -1;  // -1: the tensor's row count
    unsigned threads = 0;     // 0: all cores
    int64_t block_rows = 768;
    int64_t max_members = 200'000'000;
    bool quiet = false;       // no progress lines
};

int build_groups(const BuildGroupsOptions& options);

Command add_build_groups_command(CLI::App& app);

}  // namespace cadenza::cli
