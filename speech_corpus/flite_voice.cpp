#include "flite_voice.h"

#include <cstdlib>
#include <stdexcept>

#ifdef CADENZA_HAVE_FLITE
#include <flite/flite.h>

extern "C" {
cst_voice* register_cmu_us_slt(const char* voxdir);
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_kal16(const char* voxdir);
}
#endif

namespace cadenza::speech_corpus {
namespace {

#ifdef CADENZA_HAVE_FLITE
struct FliteVoiceEntry {
    const char* name;
    cst_voice* (*register_voice)(const char*);
};

const FliteVoiceEntry flite_voices[] = {
    {"slt", register_cmu_us_slt},
    {"rms", register_cmu_us_rms},
    {"awb", register_cmu_us_awb},
    {"kal16", register_cmu_us_kal16},
};
#endif

}  // namespace

std::vector<std::string> flite_voice_names() {
    std::vector<std::string> names;
#ifdef CADENZA_HAVE_FLITE
    for (const auto& entry : flite_voices) names.push_back(entry.name);
#endif
    return names;
}

audio::Waveform FliteSynthesizer::synthesize(const std::string& voice_name, const std::string& text,
                                             double duration_stretch, std::vector<PhoneSegment>* segments) {
#ifdef CADENZA_HAVE_FLITE
    cst_voice*& voice = voices_[voice_name];
    if (!voice) {
        static const bool initialized = flite_init() == 0;
        (void)initialized;
        for (const auto& entry : flite_voices)
            if (voice_name == entry.name) voice = entry.register_voice(nullptr);
        if (!voice) {
            voices_.erase(voice_name);
            throw std::runtime_error("flite has no voice '" + voice_name + "'");
        }
    }
    feat_set_float(voice->features, "duration_stretch", static_cast<float>(duration_stretch));
    // flite's statistical voices excite with noise from the C library's rand():
    // reseeding it as a fresh flite process starts makes each utterance
    // independent of what the process spoke before.
    std::srand(1);
    cst_utterance* utterance = flite_synth_text(text.c_str(), voice);
    if (!utterance) throw std::runtime_error("flite produced no audio");
    if (segments) {
        segments->clear();
        for (cst_item* s = relation_head(utt_relation(utterance, "Segment")); s; s = item_next(s))
            segments->push_back({item_feat_string(s, "name"), item_feat_float(s, "end")});
    }
    const cst_wave* wave = utt_wave(utterance);
    if (!wave) {
        delete_utterance(utterance);
        throw std::runtime_error("flite produced no audio");
    }
    audio::Waveform waveform;
    waveform.sample_rate = wave->sample_rate;
    const int channels = wave->num_channels > 0 ? wave->num_channels : 1;
    waveform.samples.resize(static_cast<size_t>(wave->num_samples));
    for (size_t i = 0; i < waveform.samples.size(); ++i) {
        float sum = 0.0f;
        for (int c = 0; c < channels; ++c) sum += wave->samples[i * channels + c];
        waveform.samples[i] = sum / (32768.0f * channels);
    }
    delete_utterance(utterance);
    if (waveform.samples.empty()) throw std::runtime_error("flite produced no audio");
    return waveform;
#else
    (void)text;
    (void)duration_stretch;
    (void)segments;
    throw std::runtime_error("this build has no flite (install flite1-dev and rebuild): cannot speak with '" +
                             voice_name + "'");
#endif
}

}  // namespace cadenza::speech_corpus
