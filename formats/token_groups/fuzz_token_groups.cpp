// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a token groups file
// (.cdzgrp, docs/formats.md), read as acceptor.pcg reads one, then written
// back and read again. Every input is read or refused with GroupsError;
// anything else, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "token_groups.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = cadenza::fuzz::write_fuzz_input_file(data, size, ".cdzgrp");
    try {
        const cadenza::pcg::TokenGroups groups = cadenza::pcg::read_token_groups(path);
        cadenza::pcg::write_token_groups(path, groups);
        if (cadenza::pcg::read_token_groups(path).members != groups.members) __builtin_trap();
    } catch (const cadenza::pcg::GroupsError&) {
    }
    return 0;
}
