// Tiny models for the drafter tests, built once per process: a 4-layer
// LLaMA target in LLaSA's layout (tests/llama/tiny_llama.h), a shallow draft
// made of its layers 0 and 3 (SSD: lower and upper layers, with the target's
// embedding, norm and head), a file of 4 heads (written twice, as "mtp" and
// "medusa"), a small MEDUSA choices file and a recurrent draft; and helpers to run pipelines on
// them and to drive a drafter plugin directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "engine.h"
#include "llama_weights.h"
#include "pipeline_config.h"
#include "plugin_instance.h"

namespace cadenza::test {

struct DraftModels {
    std::filesystem::path directory;
    std::filesystem::path target;        // checkpoint directory
    std::filesystem::path draft;         // draft.shallow's model directory
    std::filesystem::path heads_mtp;     // cadenza.kind = "mtp"
    std::filesystem::path heads_medusa;  // the same weights, cadenza.kind = "medusa"
    std::filesystem::path choices;       // 9 nodes, 4 levels
    std::filesystem::path heads_digits;  // 4 heads with code-digit output heads (write_code_digit_heads, seed 7)
    std::filesystem::path draft_digits;  // the shallow draft with a code-digit head instead of its vocabulary head
    std::filesystem::path recurrent;     // a recurrent draft: cell 48, depth 3, code digits (seed 9)
    std::filesystem::path recurrent_table_scored;  // the same, marked as trained with --table-scoring
    llama::LlamaWeights target_weights;
    int64_t head_count = 4;
};

const DraftModels& draft_models();

// The tiny layout's token ranges: audio codes at [258, 320), end 257.
constexpr int32_t audio_begin = 258, audio_end = 320, end_token = 257, audio_start = 256;
constexpr int64_t vocab_size = 320, hidden_size = 64;
// Its 62 codes as a code grid: 2 x 31.
constexpr const char* code_levels = "2,31";

// A heads file of 4 random heads near the identity with code-digit output
// heads on code_levels near the factorized form of `table` (the target's
// output table); `output` is its cadenza.output.
void write_code_digit_heads(const std::filesystem::path& file, const at::Tensor& table, uint64_t seed,
                            const std::string& output = "code_digits");

// Whether a drafted row [vocab_size] is the softmax at `temperature` of
// `scores` [K] over `tokens` [K] (int64) and zero elsewhere, within 1e-5,
// with the drafted token among them: a row of table-scored candidates.
void expect_candidate_row(const float* row, const at::Tensor& tokens, const at::Tensor& scores, double temperature,
                          int32_t drafted, const std::string& what);

// A whole pipeline: frontend.chars, test.tone_codec with 62 codes, the tiny
// target, then `stages` ("[draft]\n...[acceptor]\n..."), at `temperature`.
// One intra-op thread (the drafters keep the backbone's setting): on two
// cores shared with other work, LibTorch's two-thread passes of 8 or more
// rows stalled for about 30 ms each.
std::string pipeline_text(const std::string& stages, double temperature = 0.0, double max_audio_seconds = 1.0);
Engine make_engine(const std::string& text);

// The prompt the engine builds for `text` (its ids and the audio start).
std::vector<int32_t> prompt_tokens(const std::string& text);
// The codes of test.tone_codec's audio (its encoder inverts its decoder).
std::vector<int32_t> codes_of(const std::vector<float>& audio);

// Sampling restricted to the synthesis's tokens, as the engine sets it.
cdz_sampling synthesis_sampling(double temperature);

// One drafter plugin on its own, from a "[draft]" table.
class DrafterPlugin {
public:
    explicit DrafterPlugin(const std::string& draft_table, uint64_t seed = 1);
    ~DrafterPlugin();

    struct Proposal {
        std::vector<int32_t> tokens, parents;
        std::vector<float> probabilities;  // [nodes, vocab]
    };
    cdz_drafter_info info() const;
    // Proposes on `session` (made by new_session) for `tokens`; the hidden
    // state at `hidden_position` when `hidden` is not empty.
    // With `target_keys` and `target_values`, the target's cache of
    // tokens[0, n) (plugin ABI 1.2's cdz_draft_input fields).
    Proposal propose(void* session, const std::vector<int32_t>& tokens, const cdz_sampling& sampling,
                     const std::vector<float>& hidden = {}, int64_t hidden_position = -1,
                     const DLTensor* target_keys = nullptr, const DLTensor* target_values = nullptr);
    void* new_session(int64_t capacity = 256);
    void reseed(uint64_t seed) { instance_->reseed(seed); }

private:
    PipelineConfig config_;
    std::unique_ptr<PluginInstance> instance_;
    std::vector<void*> sessions_;
};

}  // namespace cadenza::test
