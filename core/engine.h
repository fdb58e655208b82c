// The orchestrator: turns text into audio through the pipeline's plugins
// with one decoding loop for every method. Each step the drafter (if any)
// proposes a token tree, the backbone evaluates the unevaluated tokens and
// the tree in one pass, the acceptor picks the accepted path and the next
// token, and the backbone's cache is compacted to that path. Without a
// drafter the same loop is plain autoregressive decoding.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codes_file.h"
#include "decoding_stats.h"
#include "pipeline_config.h"
#include "plugin_instance.h"

namespace cadenza {

struct EngineStages;
class SynthesisAudioStream;

struct SynthesisRequest {
    std::string text;
    std::optional<uint64_t> seed;       // the pipeline's seed when empty
    double max_audio_seconds = 0.0;     // the pipeline's limit when 0
    // Mono audio of the voice to imitate (any sample rate; resampled to the
    // codec's). Empty: the pipeline's voice_prompt file, if it names one.
    std::vector<float> voice_prompt;
    int voice_prompt_sample_rate = 0;
    // Receives audio as it is decoded; returning false cancels the synthesis.
    std::function<bool(const float* samples, size_t count)> on_audio;
    // Receives every token the backbone emits, in order: codes, phone
    // markers and the end token (as backbone ids).
    std::function<void(int32_t token)> on_token;
};

class Engine {
public:
    // Creates every stage's plugin and checks that they agree with each
    // other. Throws cadenza::Error on any problem.
    explicit Engine(PipelineConfig config);
    ~Engine();

    // The whole audio, or (with on_audio) an empty vector once every chunk
    // was delivered. Throws cadenza::Error; CDZ_STATUS_CANCELLED when the
    // callback cancelled.
    std::vector<float> synthesize(const SynthesisRequest& request);

    // The backbone's continuation of `prompt`, sampled as a synthesis samples
    // it (same loop, markers, limits and seed use), up to and including the
    // end token; no frontend or codec runs. `prompt` is a token corpus
    // line's prompt (docs/formats.md): text ids, the audio start token, and
    // optionally a voice prompt's codes and a second audio start. For
    // corpora of the target's own samples (self-distillation).
    std::vector<int32_t> continue_prompt(const std::vector<int32_t>& prompt, uint64_t seed, double max_audio_seconds);

    // What one backbone pass costs for `sizes` tokens, and one drafter
    // proposal, measured on this machine (median of `repeats`).
    struct CostProfile {
        std::vector<int> sizes;
        std::vector<double> verify_seconds;  // per size
        double draft_seconds = 0.0;          // one proposal; 0 without a drafter
        // One level of a proposal: each proposal's seconds over the levels it
        // drew (a drafter with a dynamic length may stop before max_depth).
        double draft_level_seconds = 0.0;
        double draft_levels = 0.0;           // levels per proposal here (median)
        int32_t draft_depth = 0;             // the drafter's max_depth
        int32_t draft_nodes = 0;             // the drafter's max_nodes
        // The target's pass of a full step's size (max_nodes + 1 verifying,
        // max_nodes not), timed right after a proposal as the loop runs it.
        int32_t step_size = 0;
        double step_after_proposal_seconds = 0.0;
        // The same pass in turns with one-token passes, as the sizes time
        // it, several passes after the proposal, in the same turn as the
        // pass after it: the two drift alike, so their ratio is what a
        // proposal costs the pass. 0: not measured (the sizes' own cost).
        double step_alone_in_turns_seconds = 0.0;
        // Passes of more than one token are timed without logits when the
        // pipeline does not verify: its loop's passes compute none (the
        // drafter applies the target's head, timed in its proposals).
        bool passes_without_logits = false;
        int64_t weight_bytes = 0;            // the backbone's parameters; 0: unknown
        int64_t context_length = 0;          // the committed tokens each pass attends to
    };
    // After the committed context this engine's syntheses decoded at on
    // average (64 tokens before any synthesis), as a synthesis pays it.
    // Without `with_drafter`, the target's passes of `sizes` alone.
    CostProfile measure_costs(const std::vector<int>& sizes, int repeats, bool with_drafter = true);

    // The pipeline's frontend and codec on their own (no backbone needed):
    // text to frontend ids, audio (any rate) to codes, codes to audio.
    using Codes = codes_file::Codes;  // [codebooks, frames]
    std::vector<int32_t> text_ids(const std::string& text);
    // The frontend's symbol for one of its ids.
    std::string text_symbol(int32_t id);
    Codes encode_audio(const std::vector<float>& samples, int sample_rate);
    std::vector<float> decode_audio(const Codes& codes);
    const cdz_frontend_info& frontend_info() const;  // valid with a frontend
    const cdz_codec_info& codec_info() const;        // valid with a codec
    const cdz_backbone_info& backbone_info() const;  // valid with a backbone
    bool has_codec() const;
    bool has_frontend() const;

    bool has_drafter() const;
    int32_t draft_max_nodes() const;  // 0 without a drafter
    bool verifies_drafts() const;

    const PipelineConfig& config() const { return config_; }
    const DecodingStats& stats() const { return stats_; }
    uint32_t sample_rate() const;

private:
    // A synthesis's prompt: text ids, the audio start token, and a voice
    // prompt's codes closed by a second start token.
    struct Prompt {
        std::vector<int32_t> tokens;
        size_t text_tokens = 0;   // the text ids at the start
        size_t voice_tokens = 0;  // the voice prompt's codes
    };
    struct DecodedTokens {
        std::vector<int32_t> codes;  // audio frames, codec ids
        bool finished = false;       // the end token came
    };
    void require_synthesis_stages() const;
    // Resets the statistics and reseeds every stage for one synthesis.
    void start_synthesis(uint64_t seed);
    Prompt text_prompt(const SynthesisRequest& request);
    Prompt token_prompt(const std::vector<int32_t>& tokens) const;
    // The positions the loop's sessions need; throws when the backbone has
    // fewer.
    int64_t loop_capacity(const Prompt& prompt, size_t max_frames, size_t max_markers) const;
    // The decoding loop from `prompt` to the end token or a limit;
    // `after_step` sees the codes so far after every step.
    DecodedTokens decode_tokens(Prompt prompt, double max_audio_seconds, const std::function<void(int32_t)>& on_token,
                                const std::function<void(const std::vector<int32_t>&)>& after_step);
    // decode_tokens, feeding `audio_stream` (may be null) after every step,
    // with stats_.loop_seconds measured less the time the stream took.
    DecodedTokens run_decoding_loop(Prompt prompt, double max_audio_seconds,
                                    const std::function<void(int32_t)>& on_token, SynthesisAudioStream* audio_stream);
    // The stream that hands the audio to request.on_audio as it is decoded;
    // null without a callback or when the codec cannot stream.
    std::unique_ptr<SynthesisAudioStream> open_audio_stream(const SynthesisRequest& request);
    // The stream's last chunk delivered, and its times in the statistics.
    void finish_streamed_audio(SynthesisAudioStream& audio_stream, const std::vector<int32_t>& codes);
    // The codes decoded at once: returned, or handed to request.on_audio.
    std::vector<float> decode_whole_audio(const SynthesisRequest& request, const std::vector<int32_t>& codes);
    // The backbone ids of a voice prompt: its codec codes, one codebook.
    std::vector<int32_t> voice_prompt_tokens(const std::vector<float>& samples, int sample_rate);

    PipelineConfig config_;
    std::vector<int32_t> default_voice_tokens_;  // of config_.voice_prompt, encoded once
    bool default_voice_encoded_ = false;
    std::unique_ptr<EngineStages> stages_;
    DecodingStats stats_;
    double context_positions_ = 0.0;  // the sequence length at each step, summed over every synthesis
    int64_t context_steps_ = 0;
    // The longest sequence a synthesis decoded (prompt and tokens): the
    // context measure_costs times passes and proposals after.
    std::vector<int32_t> speech_context_;
};

}  // namespace cadenza
