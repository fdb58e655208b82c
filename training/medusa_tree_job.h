// `cadenza build-tree`: the sparse candidate tree of draft.medusa. Runs the
// target over a held-out token corpus, measures how often each head's rank-r
// prediction is the true token, builds the tree with MEDUSA's greedy
// algorithm (repeatedly add the candidate node of highest expected
// acceptance, the product of its path's rank accuracies, until the node
// budget), cuts it where the expected tokens per unit of measured step cost
// peak, and writes the choices file (docs/formats.md, "Choices file").
// Plain types only (no LibTorch in this header), as train_jobs.h.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace cadenza::training {

struct MedusaTreeJob {
    std::string target;   // checkpoint: a directory, a safetensors file or an index .json (config.json beside it)
    std::string heads;    // the heads file
    std::string corpus;   // "prompt_ids | target_ids" per line
    std::string output;   // the choices file to write
    int64_t budget = 64;  // nodes of the tree
    int64_t top_k = 10;   // candidates per head (ranks < top_k)
    int64_t max_depth = 0;  // 0: every head
    int threads = 0;        // 0: one per core
    // "speedup": the greedy tree cut where expected tokens per unit of
    // measured step cost peak; "acceptance": all `budget` nodes.
    std::string objective = "speedup";
    double temperature = 0.7;  // the pipeline's sampling, for the cost of its distributions
    double top_p = 0.9;
    int64_t context = 256;     // committed tokens before the measured passes
};

// Measures, builds and writes the tree, reporting each stage to `out`.
void run_medusa_tree_job(const MedusaTreeJob& job, std::ostream& out);

}  // namespace cadenza::training
