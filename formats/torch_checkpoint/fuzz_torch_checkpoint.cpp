// libFuzzer entry point (CADENZA_FUZZ=ON, clang). The first input byte picks
// the mode:
//  - even: the rest is a whole archive, loaded by Checkpoint::from_bytes;
//    the tensors of a checkpoint that loads are then read in full;
//  - odd: the rest is a data.pkl, run by the pickle machine directly with
//    every storage resolved to zero bytes (so that mutations are not stopped
//    by the CRC-32 of data.pkl).
// Every input must either load or be refused with TorchCheckpointError; any
// other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pickle_machine.h"
#include "torch_checkpoint.h"

namespace tc = cadenza::torch_checkpoint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    tc::Options options;
    options.verify_crc = false;  // let mutated tensor data through, to the readers
    // Small limits so that the fuzzer explores them instead of memory.
    options.max_objects = 1u << 16;
    options.max_stack = 1u << 12;
    options.max_memo = 1u << 12;
    options.max_expanded_elements = 1u << 16;
    try {
        if (data[0] & 1) {
            static const std::vector<uint8_t> zeros(1u << 22, 0);
            const tc::detail::StorageResolver resolve = [](const std::string& key, tc::DType dtype, uint64_t numel) {
                tc::detail::ResolvedStorage out;
                if (numel * tc::dtype_size(dtype) > zeros.size() || key.empty())
                    out.error = "storage too large for the fuzzer";
                else
                    out.bytes = zeros.data();
                return out;
            };
            (void)tc::detail::run_state_dict_pickle(data + 1, size - 1, "fuzz: data.pkl", options, resolve);
        } else {
            const auto checkpoint =
                tc::Checkpoint::from_bytes(std::vector<uint8_t>(data + 1, data + size), "fuzz", options);
            for (const auto& tensor : checkpoint.tensors()) {
                if (tc::is_floating_point(tensor.dtype))
                    (void)checkpoint.read_f32(tensor);
                else
                    (void)checkpoint.read_i64(tensor);
            }
        }
    } catch (const tc::TorchCheckpointError&) {
    }
    return 0;
}
