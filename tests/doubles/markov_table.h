// The random next-token table shared by test.markov_backbone and
// test.markov_drafter, and the vocabulary layout both use:
// [text tokens][audio start][end][audio tokens] (or, for phone markers,
// [text tokens][audio tokens][audio start][end]).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace cadenza::test {

struct MarkovLayout {
    int64_t text_tokens = 0, audio_tokens = 0;
    // [text][audio][audio start][end] instead: text ids adjoin the audio, as
    // a backbone with phone markers needs.
    bool audio_after_text = false;
    int32_t audio_start() const {
        return static_cast<int32_t>(audio_after_text ? text_tokens + audio_tokens : text_tokens);
    }
    int32_t end_token() const { return audio_start() + 1; }
    int64_t audio_offset() const { return audio_after_text ? text_tokens : end_token() + 1; }
    int64_t vocab() const { return audio_after_text ? end_token() + 1 : audio_offset() + audio_tokens; }
    bool is_audio(int32_t token) const { return token >= audio_offset() && token < audio_offset() + audio_tokens; }
};

// [vocab x vocab] logits, normal(0, sharpness), from `seed`; with noise > 0,
// perturbed by normal(0, noise) from a second stream (a drafter's imperfect copy).
inline std::vector<float> markov_table(const MarkovLayout& layout, double sharpness, int64_t seed, double noise = 0.0) {
    const auto vocab = static_cast<size_t>(layout.vocab());
    std::vector<float> table(vocab * vocab);
    std::mt19937_64 generator(static_cast<uint64_t>(seed));
    std::normal_distribution<float> normal(0.0f, static_cast<float>(sharpness));
    for (auto& logit : table) logit = normal(generator);
    if (noise > 0.0) {
        std::mt19937_64 noise_generator(static_cast<uint64_t>(seed) ^ 0xD1B54A32D192ED03ULL);
        std::normal_distribution<float> perturbation(0.0f, static_cast<float>(noise));
        for (auto& logit : table) logit += perturbation(noise_generator);
    }
    return table;
}

}  // namespace cadenza::test
