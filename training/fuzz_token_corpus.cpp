// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a token corpus
// (docs/formats.md), parsed as training and `cadenza build-transitions` read
// one, then checked against a vocabulary taken from the input's first byte.
// Every input is read or refused with cadenza::Error; anything else, a crash
// or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "error.h"
#include "token_corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const int64_t vocab_size = int64_t{1} << (data[0] % 32);
    std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
    try {
        const cadenza::training::TokenCorpus corpus = cadenza::training::parse_token_corpus(in, "corpus.txt");
        (void)corpus.fingerprint();
        (void)corpus.token_count();
        (void)corpus.max_token();
        corpus.check_vocabulary(vocab_size, "model");
        for (const auto& sequence : corpus.sequences) (void)cadenza::training::format_sequence(sequence);
    } catch (const cadenza::Error&) {
    }
    return 0;
}
