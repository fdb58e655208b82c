// The whole loop keeps the target's distribution: a pipeline that verifies
// its drafts with acceptor.exact must emit tokens distributed as plain
// decoding's, whatever the loop does around the acceptor (trees, KV
// compaction, the phone-marker rule on verified rows, the nucleus). The
// acceptors' own tests check the rule on hand-made rows; this checks the
// rows the loop hands it. On the test doubles: the same prompt continued
// with many seeds, the token at several positions compared between the two
// pipelines by a chi-square test of homogeneity, and a biased acceptor as
// the control the test must catch.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "acceptor_harness.h"
#include "engine.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

constexpr int continuations = 3000;
const std::vector<size_t> positions = {1, 3, 8, 20, 40};

// Plain decoding without `speculation`; with it, the [draft] and [acceptor]
// tables' lines. Phone markers with a short maximum phone (5 frames), so
// that the rule rewrites verified rows often; the nucleus trims each row.
// `pipeline_lines` go into [pipeline].
std::unique_ptr<Engine> engine_with(const std::string& speculation, const std::string& pipeline_lines = "") {
    const std::string pipeline =
        "[pipeline]\nseed = 1\nmax_audio_seconds = 1.0\n" + pipeline_lines +
        "[sampling]\ntemperature = 0.9\ntop_p = 0.95\n"
        "[logits]\nprocessors = [\"phone_markers\"]\n[logits.phone_markers]\nmax_phone_seconds = 0.1\n"
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = 80\n"
        "phone_markers = true\n" +
        (speculation.empty() ? std::string()
                             : "[draft]\nplugin = \"test.markov_drafter\"\ntext_tokens = 80\naudio_tokens = 32\n"
                               "end_after = 80\nphone_markers = true\nnoise = 1.0\n" + speculation);
    return std::make_unique<Engine>(load_pipeline_config_string(pipeline, "distribution.toml", test::source_dir(),
                                                                {{test::test_plugin_dir("doubles"), "test", true}}));
}

// counts[p][token]: how often each token came at positions[p] of the
// continuations of one prompt, seeds 1..continuations.
std::vector<std::vector<int64_t>> token_counts(Engine& engine) {
    std::vector<int32_t> prompt = engine.text_ids("The same words, said again and again.");
    prompt.push_back(engine.backbone_info().audio_start_token);
    const auto vocab = static_cast<size_t>(engine.backbone_info().vocab_size);
    std::vector<std::vector<int64_t>> counts(positions.size(), std::vector<int64_t>(vocab, 0));
    for (uint64_t seed = 1; seed <= continuations; ++seed) {
        const std::vector<int32_t> tokens = engine.continue_prompt(prompt, seed, 1.0);
        if (tokens.size() <= positions.back()) {
            ADD_FAILURE() << "seed " << seed << ": " << tokens.size() << " tokens, too few for position "
                          << positions.back();
            continue;
        }
        for (size_t p = 0; p < positions.size(); ++p) ++counts[p][static_cast<size_t>(tokens[positions[p]])];
    }
    return counts;
}

struct Comparison {
    double statistic = 0.0, critical = 0.0;
    int degrees = 0;
};

// Each position's chi-square of `speculative` against `plain`.
std::vector<Comparison> compare(const std::vector<std::vector<int64_t>>& plain,
                                const std::vector<std::vector<int64_t>>& speculative) {
    std::vector<Comparison> out(positions.size());
    for (size_t p = 0; p < positions.size(); ++p) {
        out[p].statistic = test::chi_square_two_samples(plain[p], speculative[p], out[p].degrees);
        out[p].critical = test::chi_square_critical_999(out[p].degrees);
    }
    return out;
}

const std::vector<std::vector<int64_t>>& plain_counts() {
    static const auto counts = [] {
        const auto engine = engine_with("");
        return token_counts(*engine);
    }();
    return counts;
}

void expect_plain_distribution(const std::string& speculation, const std::string& pipeline_lines = "") {
    const auto engine = engine_with(speculation, pipeline_lines);
    const auto results = compare(plain_counts(), token_counts(*engine));
    for (size_t p = 0; p < positions.size(); ++p)
        EXPECT_LT(results[p].statistic, results[p].critical)
            << "position " << positions[p] << ", " << results[p].degrees << " degrees of freedom";
    EXPECT_GT(engine->stats().mean_accepted_length(), 1.0);  // the drafts were kept, not only corrected
}

TEST(SpeculativeDistribution, ExactOnATreeIsPlainDecoding) {
    expect_plain_distribution("depth = 3\nbranching = 2\n[acceptor]\nplugin = \"acceptor.exact\"\n");
}

TEST(SpeculativeDistribution, ExactBlockVerificationOfAChainIsPlainDecoding) {
    expect_plain_distribution("depth = 4\n[acceptor]\nplugin = \"acceptor.exact\"\nverification = \"block\"\n");
}

// The next chain drafted beside the pass (draft_ahead) and verified from
// the chain's last token, in place of the bonus token, when the whole chain
// was accepted; the rows in the drafter's own tensor, which the loop holds a
// copy of while the drafter makes the next.
TEST(SpeculativeDistribution, ExactWithTheNextChainDraftedAheadIsPlainDecoding) {
    expect_plain_distribution("depth = 4\nlent_buffer = false\n[acceptor]\nplugin = \"acceptor.exact\"\n",
                              "draft_ahead = true\n");
}

// The control: acceptor.bias with beta = 0.05 accepts a drafted token 5
// points more often than the exact rule, so its tokens lean towards the
// draft's, and the comparison above must see it. (Handing the phone-marker
// rule the verified rows without their tree fails both tests above at every
// position: checked.)
TEST(SpeculativeDistribution, ABiasTowardsTheDraftIsCaught) {
    const auto engine = engine_with("depth = 3\n[acceptor]\nplugin = \"acceptor.bias\"\nbeta = 0.05\n");
    const auto results = compare(plain_counts(), token_counts(*engine));
    int caught = 0;
    for (const auto& r : results) caught += r.statistic > r.critical;
    EXPECT_GE(caught, 2) << "positions whose chi-square exceeded the 0.999 quantile";
}

}  // namespace
}  // namespace cadenza
