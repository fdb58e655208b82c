#pragma once
// flite's voices, in process. flite keeps global state that is not safe to
// share between threads, so one FliteSynthesizer is used by one thread; the
// corpus generator runs each in its own worker process.
#include <map>
#include <string>
#include <vector>

#include "phone_alignment.h"
#include "wav_file.h"

struct cst_voice_struct;

namespace cadenza::speech_corpus {

// The flite voices compiled into this build ("slt", "rms", "awb", "kal16");
// empty when cadenza was built without flite1-dev.
std::vector<std::string> flite_voice_names();

class FliteSynthesizer {
public:
    // Speaks `text` with durations stretched by `duration_stretch` (> 1 is
    // slower), at the voice's own sample rate. Throws std::runtime_error when
    // the voice is unknown or flite produced no audio. `segments`, when
    // given, receives where each phone ends (seconds of the returned audio).
    audio::Waveform synthesize(const std::string& voice, const std::string& text, double duration_stretch,
                               std::vector<PhoneSegment>* segments = nullptr);

private:
    std::map<std::string, cst_voice_struct*> voices_;  // registered on first use, kept for the process's life
};

}  // namespace cadenza::speech_corpus
