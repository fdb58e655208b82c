#pragma once
// The English voices the corpus can use, and which of them are installed:
// flite's voices compiled into this build, festival's voices found by asking
// festival itself.
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

enum class SynthesisEngine { flite, festival };

struct Voice {
    std::string name;          // "flite.slt", "festival.kal_diphone"
    SynthesisEngine engine = SynthesisEngine::flite;
    std::string engine_voice;  // the synthesizer's own name: "slt", "kal_diphone"
    std::string package;       // the Debian package that provides it
};

// Every voice the corpus knows, in a fixed order.
std::vector<Voice> known_voices();

struct VoiceDetection {
    std::vector<Voice> installed;
    std::vector<Voice> missing;
};

VoiceDetection detect_voices();

// The voices named in a comma-separated list ("flite.slt,festival.kal_diphone"),
// in catalog order; throws std::invalid_argument naming an unknown or missing voice.
std::vector<Voice> select_voices(const VoiceDetection& detection, const std::string& names);

}  // namespace cadenza::speech_corpus
