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
    int64_t vocab_size() const;

    // Text ids first, then codes, then the audio start and end tokens.
    static SpeechTokenLayout packed(int64_t text_count, int64_t code_count);
    std::string to_json() const;
    static SpeechTokenLayout from_json(const std::string& text, const std::string& where);
};

struct EncodedUtterance {
    std::string id, voice, variation;
    std::vector<int32_t> text_ids;  // frontend ids
    std::vector<int32_t> codes;     // one codebook
};

struct VoicePromptChoice {
    size_t prompt_index = 0;  // into the utterances given
    int64_t begin = 0, length = 0;  // the window of its codes used
};

// For each utterance, another of the same voice and variation (seeded), its
// codes cut to at most `max_prompt_frames` from a seeded start. An utterance
// alone in its group gets none (prompt_index == its own index, length 0).
std::vector<VoicePromptChoice> choose_voice_prompts(const std::vector<EncodedUtterance>& utterances,
                                                    int64_t max_prompt_frames, uint64_t seed);

// One sequence per utterance that has a voice prompt.
std::vector<TokenSequence> make_speech_sequences(const std::vector<EncodedUtterance>& utterances,
                                                 const std::vector<VoicePromptChoice>& prompts,
                                                 const SpeechTokenLayout& layout);

}  // namespace cadenza::training
