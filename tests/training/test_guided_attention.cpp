// The guided-attention loss: which rows and queries it guides, its value for
// attention on and off the diagonal, and a tiny target that learns to read
// its "text" along the diagonal when guided (and resumes only so).
#include <gtest/gtest.h>

#include <unistd.h>

#include <random>
#include <sstream>

#include "error.h"
#include "guided_attention.h"
#include "language_model_task.h"
#include "thread_policy.h"
#include "tiny_training.h"
#include "trainer.h"

namespace cadenza::training {
namespace {

// Text ids 0..7, codes 8..27, audio start 28, end 29.
SpeechTokenLayout tiny_layout() {
    SpeechTokenLayout layout;
    layout.text_token_offset = 0;
    layout.text_token_count = 8;
    layout.audio_token_offset = 8;
    layout.audio_token_count = 20;
    layout.audio_start_token = 28;
    layout.end_token = 29;
    return layout;
}

// [text][start] | [codes][end], each text id spoken as `frames` codes of its own.
TokenSequence spoken(const std::vector<int32_t>& text, int frames) {
    TokenSequence s;
    s.tokens = text;
    s.tokens.push_back(28);
    s.prompt_length = static_cast<int64_t>(s.tokens.size());
    for (const int32_t id : text)
        for (int f = 0; f < frames; ++f) s.tokens.push_back(8 + 2 * id + (f == 0 ? 0 : 1));
    s.tokens.push_back(29);
    return s;
}

Batch batch_of(const std::vector<TokenSequence>& sequences, int64_t width) {
    Batch batch;
    const auto rows = static_cast<int64_t>(sequences.size());
    batch.tokens = at::zeros({rows, width}, at::kLong);
    batch.trained = at::zeros({rows, width}, at::kBool);
    batch.real = at::zeros({rows, width}, at::kBool);
    for (int64_t b = 0; b < rows; ++b) {
        const auto& s = sequences[b];
        for (int64_t t = 0; t < width && t < static_cast<int64_t>(s.tokens.size()); ++t) {
            batch.tokens[b][t] = s.tokens[t];
            batch.real[b][t] = true;
            batch.trained[b][t] = t >= s.prompt_length;
        }
    }
    batch.sequences = rows;
    return batch;
}

GuidedAttention guide_on(std::vector<int64_t> layers) {
    GuidedAttention guide;
    guide.layers = std::move(layers);
    guide.layout = tiny_layout();
    return guide;
}

TEST(GuidedAttention, GuidesTheFedCodesOfRowsHoldingTextAndEnd) {
    const TokenSequence whole = spoken({1, 2, 3, 4}, 2);  // 4 text, start, 8 codes, end: 14 tokens
    const Batch batch = batch_of({whole, whole}, 14);
    Batch truncated = batch_of({whole, whole}, 14);
    truncated.tokens[1][13] = 9;  // the second row's window ends before its end token

    const GuideTargets targets = guide_targets(batch, guide_on({0}));
    EXPECT_EQ(targets.query_count, 16);  // 8 fed codes per row (the end token is never fed)
    ASSERT_EQ(targets.penalty.sizes(), (at::IntArrayRef{2, 13, 4}));
    EXPECT_EQ(targets.queries[0][4].item<float>(), 0.0f);  // the audio start predicts a code but is prompt
    EXPECT_EQ(targets.queries[0][5].item<float>(), 1.0f);
    // Frame 0 on text 0 and frame 4 of 8 on text 2 of 4 sit on the diagonal: W = 0.
    EXPECT_FLOAT_EQ(targets.penalty[0][5][0].item<float>(), -1.0f);
    EXPECT_FLOAT_EQ(targets.penalty[0][9][2].item<float>(), -1.0f);
    EXPECT_GT(targets.penalty[0][5][3].item<float>(), -0.01f);  // frame 0 on the last text: far off

    EXPECT_EQ(guide_targets(truncated, guide_on({0})).query_count, 8);
}

TEST(GuidedAttention, LossIsLowOnTheDiagonalAndHighOffIt) {
    const TokenSequence whole = spoken({1, 2, 3, 4}, 2);
    const Batch batch = batch_of({whole}, 14);
    const GuideTargets targets = guide_targets(batch, guide_on({0}));
    const int64_t time = batch.time();

    at::Tensor diagonal = at::zeros({1, time, time});
    at::Tensor on_codes = at::zeros({1, time, time});
    for (int64_t q = 0; q < time; ++q) {
        const int64_t frame = q - 5;
        diagonal[0][q][frame >= 0 ? frame / 2 : 0] = 1.0f;
        on_codes[0][q][q] = 1.0f;  // every query on itself: no text at all
    }
    const at::Tensor uniform_on_text = at::full({1, time, time}, 0.0f).index_fill_(2, at::arange(4), 0.25f);
    EXPECT_LT(guided_attention_loss({diagonal}, targets).item<double>(), 0.1);
    EXPECT_NEAR(guided_attention_loss({on_codes}, targets).item<double>(), 1.0, 1e-6);
    const double uniform = guided_attention_loss({uniform_on_text}, targets).item<double>();
    EXPECT_GT(uniform, 0.3);
    EXPECT_LT(uniform, 0.9);
    // Averaged over layers.
    EXPECT_NEAR(guided_attention_loss({diagonal, on_codes}, targets).item<double>(),
                (guided_attention_loss({diagonal}, targets).item<double>() + 1.0) / 2, 1e-6);
}

TokenCorpus spoken_corpus() {
    std::mt19937 random(3);
    TokenCorpus corpus;
    corpus.name = "spoken";
    for (int n = 0; n < 300; ++n) {
        std::vector<int32_t> text(3 + random() % 4);
        for (auto& id : text) id = static_cast<int32_t>(random() % 8);
        corpus.sequences.push_back(spoken(text, 2 + static_cast<int>(random() % 2)));
    }
    return corpus;
}

double off_diagonal(LanguageModelTask& task, const TokenCorpus& corpus) {
    at::NoGradGuard no_grad;
    std::vector<const TokenSequence*> all;
    for (const auto& s : corpus.sequences) all.push_back(&s);
    Metrics metrics;
    for (const auto& batch : evaluation_batches(all, 16, 40)) task.evaluate(batch, metrics);
    return metrics.mean("attention off the text diagonal");
}

TEST(GuidedAttention, ATinyTargetLearnsToReadAlongTheDiagonalAndResumesOnlyGuided) {
    llama::apply_thread_policy(1);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("cadenza-guided-attention-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const TokenCorpus corpus = spoken_corpus();
    LanguageModelTask task(tiny_config(), 4);
    task.set_guided_attention(guide_on({1}));
    const double before = off_diagonal(task, corpus);

    TrainOptions o = tiny_options(300);
    o.seq_len = 40;
    std::ostringstream log;
    const TrainResult result = train(task, corpus, o, dir, log);
    const double after = off_diagonal(task, corpus);
    std::cout << "  attention off the diagonal: " << before << " before, " << after << " after\n";
    EXPECT_GT(before, 0.5);
    EXPECT_LT(after, 0.25);
    EXPECT_TRUE(result.heldout.contains("attention off the text diagonal"));

    LanguageModelTask unguided(tiny_config(), 4);
    o.steps = 310;
    o.resume = true;
    EXPECT_THROW(train(unguided, corpus, o, dir, log), Error);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cadenza::training
