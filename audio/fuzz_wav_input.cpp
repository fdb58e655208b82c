// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a sound file as `--voice`,
// `codec encode` and the corpus tools read one (read_waveform through
// libsndfile, which tells the format from the bytes). Every input is read or
// refused with AudioFileError; anything else, a crash, a sanitizer report or
// more than the fuzzer's memory limit is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "wav_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = cadenza::fuzz::write_fuzz_input_file(data, size, ".wav");
    try {
        const cadenza::audio::Waveform waveform = cadenza::audio::read_waveform(path);
        if (waveform.sample_rate <= 0) __builtin_trap();
    } catch (const cadenza::audio::AudioFileError&) {
    }
    return 0;
}
