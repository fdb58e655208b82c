// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a transitions file
// (.cdztrn, docs/formats.md), loaded as acceptor.viterbi loads one, then a
// few rows read the way the acceptor reads them. Every input loads or is
// refused with TransitionFileError; anything else, a crash or a sanitizer
// report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input_file.h"
#include "transition_matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = cadenza::fuzz::write_fuzz_input_file(data, size, ".cdztrn");
    try {
        const cadenza::TransitionMatrix matrix = cadenza::TransitionMatrix::load(path);
        const int64_t vocab = matrix.vocab_size();
        for (const int64_t from : {int64_t{0}, vocab / 2, vocab - 1}) {
            const auto row = static_cast<int32_t>(from);
            (void)matrix.probability(row, 0);
            (void)matrix.probability(row, static_cast<int32_t>(vocab - 1));
            if (matrix.is_sparse()) (void)matrix.sparse_row(row);
            const std::vector<int32_t> to{0, static_cast<int32_t>(vocab / 3), static_cast<int32_t>(vocab - 1)};
            std::vector<float> out(to.size());
            if (vocab >= 3) matrix.gather_row(row, to.data(), to.size(), out.data());
        }
    } catch (const cadenza::TransitionFileError&) {
    }
    return 0;
}
