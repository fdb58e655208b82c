// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a MEDUSA choices file
// (drafts/medusa/medusa_tree.h), parsed and validated as draft.medusa reads
// one, with top_k from the input's first byte, then made into its tree.
// Every input is read or refused with cadenza::sdk::Error; anything else, a crash
// or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "medusa_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const int64_t top_k = data[0] % 64 + 1;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        auto choices = cadenza::medusa::parse_choices(text, "choices.txt", top_k);
        const auto tree = cadenza::medusa::make_tree(std::move(choices));
        for (size_t node = 0; node < tree.choices.size(); ++node) (void)cadenza::medusa::format_choice(tree.choices[node]);
    } catch (const cadenza::sdk::Error&) {
    }
    return 0;
}
