// Exactness through the real engine: with acceptor.exact at temperature 0,
// every drafter's output equals plain greedy decoding of the same target,
// token for token, on 20 prompts. A divergence is only tolerated at a
// near-tie of the target's top two logits (within 1e-4), where a batched
// verification pass and a one-token pass may round differently; such cases
// are counted and reported. Also: draft.mtp without verification
// (acceptor.viterbi) end to end, and each drafter's cost per proposal
// relative to one target token.
#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "draft_fixtures.h"
#include "llama_model.h"
#include "../core/test_fixtures.h"
#include "transition_matrix.h"

namespace cadenza {
namespace {

const std::vector<std::string> prompts = {
    "hello world.",
    "speculative decoding keeps the target's distribution.",
    "a shallow draft guesses, the target checks.",
    "the quick brown fox jumps over the lazy dog.",
    "one, two, three, four.",
    "is this the real life? is this just fantasy?",
    "tiny models make fast tests.",
    "good morning, how are you today?",
    "medusa heads look a few tokens ahead.",
    "multi-token prediction with viterbi.",
    "she sells sea shells by the sea shore.",
    "numbers like 42 and 1999 are spelled out.",
    "a.",
    "to be, or not to be: that is the question.",
    "greedy decoding is deterministic.",
    "the rain in spain stays mainly in the plain.",
    "please call stella.",
    "we choose to go to the moon in this decade.",
    "every token counts.",
    "the end.",
};

constexpr double max_seconds = 1.0;
constexpr size_t max_frames = 50;  // 1 s at 50 frames per second

// The emitted tokens of a synthesis: the audio's codes as backbone ids, then
// the end token if it stopped before the frame limit.
std::vector<int32_t> emitted_tokens(const std::vector<float>& audio) {
    std::vector<int32_t> tokens;
    for (int32_t code : test::codes_of(audio)) tokens.push_back(test::audio_begin + code);
    if (tokens.size() < max_frames) tokens.push_back(test::end_token);
    return tokens;
}

// The gap between the target's two largest allowed logits after `context`.
double top_two_gap(const llama::LlamaModel& model, const std::vector<int32_t>& context) {
    c10::InferenceMode inference;
    const at::Tensor ids = at::tensor(std::vector<int64_t>(context.begin(), context.end()), at::kLong).unsqueeze(0);
    const at::Tensor logits = model.logits(model.forward_sequence(ids))[0][-1];
    std::vector<float> allowed;
    for (int32_t t = test::audio_begin; t < test::audio_end; ++t) allowed.push_back(logits[t].item<float>());
    allowed.push_back(logits[test::end_token].item<float>());
    std::partial_sort(allowed.begin(), allowed.begin() + 2, allowed.end(), std::greater<float>());
    return static_cast<double>(allowed[0]) - allowed[1];
}

struct ExactnessReport {
    int identical = 0;
    int near_ties = 0;
    int other = 0;
    int64_t tokens = 0, steps = 0;
    double draft_seconds = 0, verify_seconds = 0;
    int64_t draft_passes = 0, target_passes = 0;
};

ExactnessReport check_exactness(const std::string& name, const std::string& stages) {
    const auto& models = test::draft_models();
    Engine plain = test::make_engine(test::pipeline_text("", 0.0, max_seconds));
    Engine drafted = test::make_engine(test::pipeline_text(stages + "[acceptor]\nplugin = \"acceptor.exact\"\n", 0.0,
                                                           max_seconds));
    const llama::LlamaModel reference(models.target_weights, 512);
    ExactnessReport report;
    for (const auto& prompt : prompts) {
        SynthesisRequest request;
        request.text = prompt;
        const auto expected = plain.synthesize(request);
        const auto got = drafted.synthesize(request);
        const auto& stats = drafted.stats();
        report.tokens += stats.tokens_generated();
        report.steps += stats.steps();
        report.draft_seconds += stats.draft_seconds;
        report.verify_seconds += stats.verify_seconds;
        report.draft_passes += stats.draft_passes();
        report.target_passes += stats.target_passes();
        if (got == expected) {
            ++report.identical;
            continue;
        }
        const auto a = emitted_tokens(expected), b = emitted_tokens(got);
        size_t j = 0;
        while (j < a.size() && j < b.size() && a[j] == b[j]) ++j;
        std::vector<int32_t> context = test::prompt_tokens(prompt);
        context.insert(context.end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(j));
        const double gap = top_two_gap(reference, context);
        if (gap < 1e-4) {
            ++report.near_ties;
        } else {
            ++report.other;
            ADD_FAILURE() << name << ": '" << prompt << "' diverges at token " << j << " (greedy "
                          << (j < a.size() ? a[j] : -1) << ", drafted " << (j < b.size() ? b[j] : -1)
                          << ") where the target's top two logits are " << gap << " apart";
        }
    }
    const auto costs = drafted.measure_costs({1}, 50);
    const double ratio = costs.draft_seconds / costs.verify_seconds[0];
    std::printf("[%s] identical %d/%zu, near-tie divergences %d, other %d; %.3f tokens per step (%lld tokens, %lld "
                "steps); in synthesis: %.3f ms per proposal, %.3f ms per target pass; measure_costs: proposal %.3f "
                "ms (%d nodes), target token %.3f ms, ratio %.3f\n",
                name.c_str(), report.identical, prompts.size(), report.near_ties, report.other,
                static_cast<double>(report.tokens) / static_cast<double>(report.steps),
                static_cast<long long>(report.tokens), static_cast<long long>(report.steps),
                1e3 * report.draft_seconds / static_cast<double>(std::max<int64_t>(report.draft_passes, 1)),
                1e3 * report.verify_seconds / static_cast<double>(std::max<int64_t>(report.target_passes, 1)),
                1e3 * costs.draft_seconds, costs.draft_nodes, 1e3 * costs.verify_seconds[0], ratio);
    ::testing::Test::RecordProperty("identical", report.identical);
    ::testing::Test::RecordProperty("near_tie_divergences", report.near_ties);
    ::testing::Test::RecordProperty("draft_to_target_cost", std::to_string(ratio));
    EXPECT_EQ(report.other, 0);
    EXPECT_GT(report.tokens, report.steps) << name << ": no draft was ever accepted";
    return report;
}

TEST(DraftExactness, ShallowChainEqualsGreedyDecoding) {
    check_exactness("draft.shallow length 3", "[draft]\nplugin = \"draft.shallow\"\nmodel = \"" +
                                                  test::draft_models().draft.string() + "\"\nlength = 3\n");
}

TEST(DraftExactness, ShallowTreeEqualsGreedyDecoding) {
    check_exactness("draft.shallow length 3 branching 2",
                    "[draft]\nplugin = \"draft.shallow\"\nmodel = \"" + test::draft_models().draft.string() +
                        "\"\nlength = 3\nbranching = 2\n");
}

TEST(DraftExactness, ShallowSelfDraftHasEveryDraftAccepted) {
    // The target as its own draft: every draft is accepted, so each step
    // syncs only the bonus token, and the output is still greedy decoding.
    const auto report = check_exactness("draft.shallow = the target, length 3",
                                        "[draft]\nplugin = \"draft.shallow\"\nmodel = \"" +
                                            test::draft_models().target.string() + "\"\nlength = 3\n");
    EXPECT_GT(static_cast<double>(report.tokens) / static_cast<double>(report.steps), 3.5);
}

TEST(DraftExactness, MtpEqualsGreedyDecoding) {
    const auto& m = test::draft_models();
    check_exactness("draft.mtp 4 heads", "[draft]\nplugin = \"draft.mtp\"\nheads = \"" + m.heads_mtp.string() +
                                             "\"\ntarget = \"" + m.target.string() + "\"\n");
}

TEST(DraftExactness, CodeDigitHeadsAndDraftEqualGreedyDecoding) {
    const auto& m = test::draft_models();
    check_exactness("draft.mtp 4 code-digit heads", "[draft]\nplugin = \"draft.mtp\"\nheads = \"" +
                                                        m.heads_digits.string() + "\"\ntarget = \"" + m.target.string() +
                                                        "\"\n");
    check_exactness("draft.shallow with a code-digit head, length 3", "[draft]\nplugin = \"draft.shallow\"\nmodel = \"" +
                                                                          m.draft_digits.string() + "\"\nlength = 3\n");
}

TEST(DraftExactness, RecurrentDraftEqualsGreedyDecoding) {
    const auto& m = test::draft_models();
    check_exactness("draft.recurrent, length 3", "[draft]\nplugin = \"draft.recurrent\"\nmodel = \"" +
                                                     m.recurrent.string() + "\"\ntarget = \"" + m.target.string() +
                                                     "\"\n");
    check_exactness("draft.recurrent, 8 candidates scored by the table",
                    "[draft]\nplugin = \"draft.recurrent\"\nmodel = \"" + m.recurrent_table_scored.string() +
                        "\"\ntarget = \"" + m.target.string() + "\"\ncandidates = 8\n");
}

TEST(DraftExactness, MedusaEqualsGreedyDecoding) {
    const auto& m = test::draft_models();
    check_exactness("draft.medusa 9 nodes", "[draft]\nplugin = \"draft.medusa\"\nheads = \"" + m.heads_medusa.string() +
                                                "\"\ntarget = \"" + m.target.string() + "\"\nchoices = \"" +
                                                m.choices.string() + "\"\ntop_k = 3\n");
}

TEST(DraftEndToEnd, SelfDraftFromTheTargetsCacheDecodesAsAfterItsOwnPrefill) {
    // prefix_from_target (plugin ABI 1.2): the target as its own draft takes
    // the backbone's keys and values of the prompt. They are the bits its own
    // prefill computes, so sampled syntheses come out the same, seed for seed.
    const std::string draft =
        "[draft]\nplugin = \"draft.shallow\"\nmodel = \"" + test::draft_models().target.string() + "\"\nlength = 3\n";
    const std::string acceptor = "[acceptor]\nplugin = \"acceptor.exact\"\n";
    Engine own = test::make_engine(test::pipeline_text(draft + acceptor, 0.8, max_seconds));
    Engine shared = test::make_engine(test::pipeline_text(draft + "prefix_from_target = true\n" + acceptor, 0.8, max_seconds));
    for (size_t i = 0; i < 5; ++i) {
        SynthesisRequest request;
        request.text = prompts[i];
        EXPECT_EQ(shared.synthesize(request), own.synthesize(request)) << prompts[i];
    }
}

TEST(DraftEndToEnd, MtpWithViterbiEmitsWithoutVerification) {
    const auto& m = test::draft_models();
    const auto file = m.directory / "uniform.cdztrn";
    std::vector<float> uniform(static_cast<size_t>(test::vocab_size * test::vocab_size), 1.0f / test::vocab_size);
    TransitionMatrix::make_dense(test::vocab_size, uniform, {}).save(file.string());
    for (double temperature : {0.0, 0.8}) {
        Engine engine = test::make_engine(test::pipeline_text(
            "[draft]\nplugin = \"draft.mtp\"\nheads = \"" + m.heads_mtp.string() + "\"\ntarget = \"" +
                m.target.string() + "\"\n[acceptor]\nplugin = \"acceptor.viterbi\"\ntransitions = \"" + file.string() +
                "\"\ntop_k = 3\n",
            temperature, max_seconds));
        EXPECT_FALSE(engine.verifies_drafts());
        SynthesisRequest request;
        request.text = "viterbi over the heads.";
        const auto audio = engine.synthesize(request);
        const auto& stats = engine.stats();
        EXPECT_GT(audio.size(), 0u);
        // Four tokens per step (the target's head then heads 0..2), one target pass per step.
        EXPECT_GT(stats.mean_accepted_length(), 3.0) << "temperature " << temperature;
        EXPECT_EQ(stats.draft_passes(), stats.steps());
        EXPECT_EQ(engine.synthesize(request), audio);  // the seed repeats it
        std::printf("[draft.mtp + acceptor.viterbi, temperature %.1f] %lld tokens in %lld steps, %lld target passes\n",
                    temperature, static_cast<long long>(stats.tokens_generated()),
                    static_cast<long long>(stats.steps()), static_cast<long long>(stats.target_passes()));
    }
}

}  // namespace
}  // namespace cadenza
