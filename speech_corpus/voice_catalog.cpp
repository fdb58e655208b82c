#include "voice_catalog.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "festival_voice.h"
#include "flite_voice.h"

namespace cadenza::speech_corpus {

std::vector<Voice> known_voices() {
    return {
        {"flite.slt", SynthesisEngine::flite, "slt", "flite1-dev"},
        {"flite.rms", SynthesisEngine::flite, "rms", "flite1-dev"},
        {"flite.awb", SynthesisEngine::flite, "awb", "flite1-dev"},
        {"flite.kal16", SynthesisEngine::flite, "kal16", "flite1-dev"},
        {"festival.kal_diphone", SynthesisEngine::festival, "kal_diphone", "festvox-kallpc16k"},
        {"festival.ked_diphone", SynthesisEngine::festival, "ked_diphone", "festvox-kdlpc16k"},
        {"festival.rab_diphone", SynthesisEngine::festival, "rab_diphone", "festvox-rablpc16k"},
        {"festival.cmu_us_slt_arctic_hts", SynthesisEngine::festival, "cmu_us_slt_arctic_hts", "festvox-us-slt-hts"},
    };
}

VoiceDetection detect_voices() {
    const std::vector<Voice> voices = known_voices();
    const std::vector<std::string> flite = flite_voice_names();
    std::vector<std::string> festival_candidates;
    for (const auto& voice : voices)
        if (voice.engine == SynthesisEngine::festival) festival_candidates.push_back(voice.engine_voice);
    const std::vector<std::string> festival = detect_festival_voices(festival_candidates);

    VoiceDetection detection;
    for (const auto& voice : voices) {
        const auto& available = voice.engine == SynthesisEngine::flite ? flite : festival;
        const bool installed = std::find(available.begin(), available.end(), voice.engine_voice) != available.end();
        (installed ? detection.installed : detection.missing).push_back(voice);
    }
    return detection;
}

std::vector<Voice> select_voices(const VoiceDetection& detection, const std::string& names) {
    std::vector<std::string> wanted;
    std::istringstream list(names);
    for (std::string name; std::getline(list, name, ',');)
        if (!name.empty()) wanted.push_back(name);
    std::string installed_names;
    for (const auto& voice : detection.installed) installed_names += (installed_names.empty() ? "" : ", ") + voice.name;
    for (const auto& name : wanted) {
        const auto named = [&](const Voice& v) { return v.name == name; };
        if (std::any_of(detection.installed.begin(), detection.installed.end(), named)) continue;
        const auto missing = std::find_if(detection.missing.begin(), detection.missing.end(), named);
        if (missing != detection.missing.end())
            throw std::invalid_argument("voice '" + name + "' is not installed (Debian package " + missing->package +
                                        "); installed: " + installed_names);
        throw std::invalid_argument("unknown voice '" + name + "'; installed: " + installed_names);
    }
    std::vector<Voice> selected;
    for (const auto& voice : detection.installed)
        if (std::find(wanted.begin(), wanted.end(), voice.name) != wanted.end()) selected.push_back(voice);
    return selected;
}

}  // namespace cadenza::speech_corpus
