// Token sequences for a zero-shot TTS target, in the manner of VALL-E and
// LLaSA: the text's frontend ids, the audio start token, a voice prompt (the
// codes of another utterance by the same voice and variation), the audio
// start token again, then the target's codes and the end token. The prompt
// part conditions; the target part is trained on. The engine builds the same
// prompt at synthesis (core/engine.cpp). No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "token_corpus.h"

namespace cadenza::training {

struct SpeechTokenLayout {
    int64_t text_token_offset = 0;
    int64_t text_token_count = 0;
    int64_t audio_token_offset = 0;
    int64_t audio_token_count = 0;
    int64_t audio_start_token = 0;
    int64_t end_token = 0;
    bool phone_markers = false;  // text ids also appear among the target's codes (PhoneMarker)
    // The frontend's <pad> (a frontend id), which text dropout's null text is
    // made of; -1: not recorded (a layout written before the key).
    int64_t text_pad_id = -1;
    int64_t vocab_size() const;

    // Text ids first, then codes, then the audio start and end tokens.
    static SpeechTokenLayout packed(int64_t text_count, int64_t code_count);
    std::string to_json() const;
    static SpeechTokenLayout from_json(const std::string& text, const std::string& where);
};

// A phone marker: the text id of a phone, placed in the target's audio
// before the first code the phone is spoken in (ELLA-V's interleaving of
// phones with codes). The target then always has the phone it is speaking in
// its recent history and emits the next one when the phone ends.
struct PhoneMarker {
    int64_t frame = 0;  // the marker goes before codes[frame]; == codes.size(): before the end
    int32_t text_id = 0;
};

struct EncodedUtterance {
    std::string id, voice, variation;
    std::vector<int32_t> text_ids;  // frontend ids
    std::vector<int32_t> codes;     // one codebook
    std::vector<PhoneMarker> markers;  // ascending frames; empty: codes only
};

// Markers from where each phone ends (seconds, ascending): frame f, centred at
// f / frame_rate, belongs to the first phone that ends after it (the last
// phone takes any frames beyond); a phone without frames still gets its
// marker, right before the next phone's.
std::vector<PhoneMarker> place_phone_markers(const std::vector<int32_t>& phone_ids,
                                             const std::vector<double>& phone_ends, int64_t frames,
                                             double frame_rate);

struct VoicePromptChoice {
    size_t prompt_index = 0;  // into the utterances given
    int64_t begin = 0, length = 0;  // the window of its codes used
};

// For each utterance, another of the same voice and variation (seeded), its
// codes cut to at most `max_prompt_frames` from a seeded start. An utterance
// alone in its group gets none (prompt_index == its own index, length 0).
std::vector<VoicePromptChoice> choose_voice_prompts(const std::vector<EncodedUtterance>& utterances,
                                                    int64_t max_prompt_frames, uint64_t seed);

// One sequence per utterance that has a voice prompt; the utterance's phone
// markers (text ids) go between its target codes.
std::vector<TokenSequence> make_speech_sequences(const std::vector<EncodedUtterance>& utterances,
                                                 const std::vector<VoicePromptChoice>& prompts,
                                                 const SpeechTokenLayout& layout);

}  // namespace cadenza::training
