// Internal: the restricted pickle machine that rebuilds a torch.save state
// dict. Not installed; used by torch_checkpoint.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "torch_checkpoint.h"

namespace cadenza::torch_checkpoint::detail {

// The bytes of the storage entry for a persistent id, or an error message
// (the machine adds the pickle offset).
struct ResolvedStorage {
    const uint8_t* bytes = nullptr;
    std::string error;
};
using StorageResolver = std::function<ResolvedStorage(const std::string& key, DType dtype, uint64_t numel)>;

struct PickleOutput {
    std::vector<TensorEntry> tensors;
    std::vector<SkippedEntry> skipped;
    std::vector<ModuleMetadata> metadata;
    PickleStats stats;
};

// Runs the pickle in [data, data + size). `where` starts every message
// ("<file>: <archive>/data.pkl"). Called once per distinct storage key.
PickleOutput run_state_dict_pickle(const uint8_t* data, size_t size, const std::string& where, const Options& options,
                                   const StorageResolver& resolve);

}  // namespace cadenza::torch_checkpoint::detail
