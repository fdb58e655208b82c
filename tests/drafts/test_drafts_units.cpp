// The drafters one by one: draft.shallow's cache sync and tree rows against
// fresh drafters, draft.mtp's alignment of heads in both modes, draft.medusa's
// tree and ranks, the choices file's validation, MEDUSA's greedy tree against
// a brute-force optimum, and the heads' accuracy.
#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include "draft_fixtures.h"
#include "error.h"
#include "head_accuracy.h"
#include "hidden_state_heads.h"
#include "kv_cache.h"
#include "llama_model.h"
#include "managed_tensor.h"
#include "medusa_tree.h"
#include "safetensors.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

using test::DrafterPlugin;

std::string shallow_table(int length = 3, int branching = 1) {
    return "plugin = \"draft.shallow\"\nmodel = \"" + test::draft_models().draft.string() +
           "\"\nlength = " + std::to_string(length) + "\nbranching = " + std::to_string(branching) + "\n";
}

std::string mtp_table(int num_heads = 0) {
    const auto& m = test::draft_models();
    return "plugin = \"draft.mtp\"\nheads = \"" + m.heads_mtp.string() + "\"\ntarget = \"" + m.target.string() +
           "\"\nnum_heads = " + std::to_string(num_heads) + "\n";
}

std::string medusa_table(const std::filesystem::path& choices, int top_k = 3) {
    const auto& m = test::draft_models();
    return "plugin = \"draft.medusa\"\nheads = \"" + m.heads_medusa.string() + "\"\ntarget = \"" + m.target.string() +
           "\"\nchoices = \"" + choices.string() + "\"\ntop_k = " + std::to_string(top_k) + "\n";
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double worst = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
    return worst;
}

std::vector<float> row(const std::vector<float>& rows, size_t index) {
    return std::vector<float>(rows.begin() + static_cast<std::ptrdiff_t>(index * test::vocab_size),
                              rows.begin() + static_cast<std::ptrdiff_t>((index + 1) * test::vocab_size));
}

// ---------------------------------------------------------------------------
// draft.shallow

std::vector<float> restricted_softmax(const at::Tensor& logits);

TEST(ShallowDraft, ProposesAChainOfLengthTokens) {
    DrafterPlugin drafter(shallow_table(3));
    EXPECT_EQ(drafter.info().max_nodes, 3);
    EXPECT_EQ(drafter.info().max_depth, 3);
    EXPECT_EQ(drafter.info().needs_target_hidden, 0);
    const auto p = drafter.propose(drafter.new_session(), test::prompt_tokens("chain."), test::synthesis_sampling(0.0));
    EXPECT_EQ(p.tokens.size(), 3u);
    EXPECT_EQ(p.parents, (std::vector<int32_t>{-1, 0, 1}));
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        // Greedy: each row is one-hot at its node's token, an allowed token.
        EXPECT_EQ(row(p.probabilities, i)[static_cast<size_t>(p.tokens[i])], 1.0f);
        EXPECT_TRUE((p.tokens[i] >= test::audio_begin && p.tokens[i] < test::audio_end) || p.tokens[i] == test::end_token);
    }
}

TEST(ShallowDraft, StopProbabilityEndsTheChainAfterAnUnlikelyToken) {
    // Sampled at temperature 1, a chain of 8 stops right after the first
    // token whose own row gives it less than the threshold; every token
    // before it reached the threshold. The threshold 1 stops after one token.
    const std::string table = shallow_table(8) + "stop_probability = 0.05\n";
    DrafterPlugin drafter(table);
    EXPECT_EQ(drafter.info().max_nodes, 8);
    void* session = drafter.new_session();
    size_t shortened = 0;
    for (int step = 0; step < 12; ++step) {
        const auto p = drafter.propose(session, test::prompt_tokens("dynamic length " + std::to_string(step) + "."),
                                       test::synthesis_sampling(1.0));
        ASSERT_GE(p.tokens.size(), 1u);
        ASSERT_LE(p.tokens.size(), 8u);
        for (size_t i = 0; i < p.tokens.size(); ++i) {
            const float own = row(p.probabilities, i)[static_cast<size_t>(p.tokens[i])];
            if (i + 1 < p.tokens.size()) EXPECT_GE(own, 0.05f) << "step " << step << ", node " << i;
            else if (p.tokens.size() < 8) EXPECT_LT(own, 0.05f) << "step " << step << ", node " << i;
        }
        if (p.tokens.size() < 8) ++shortened;
    }
    EXPECT_GT(shortened, 0u);  // the random draft's rows are flat: chains do stop early
    DrafterPlugin always_stops(shallow_table(8) + "stop_probability = 1\n");
    const auto one = always_stops.propose(always_stops.new_session(), test::prompt_tokens("one."),
                                          test::synthesis_sampling(1.0));
    EXPECT_EQ(one.tokens.size(), 1u);
    EXPECT_THROW(DrafterPlugin(shallow_table(2, 2) + "stop_probability = 0.5\n"), Error);
}

TEST(ShallowDraft, RowsMatchTheDraftModelsOwnForwardPass) {
    // The one-token fast path and the tree pass against the independent
    // whole-sequence path of the draft's weights.
    c10::InferenceMode inference;
    const auto& m = test::draft_models();
    const llama::LlamaModel reference(
        llama::LlamaWeights::load(m.draft, llama::LlamaConfig::from_file(m.draft / "config.json"), at::kCPU), 512);
    DrafterPlugin drafter(shallow_table(4));
    void* session = drafter.new_session();
    std::vector<int32_t> sequence = test::prompt_tokens("fast path.");
    for (int step = 0; step < 3; ++step) {
        const auto p = drafter.propose(session, sequence, test::synthesis_sampling(1.0));
        ASSERT_EQ(p.tokens.size(), 4u);
        std::vector<int32_t> context = sequence;
        for (size_t i = 0; i < p.tokens.size(); ++i) {
            const at::Tensor ids = at::tensor(std::vector<int64_t>(context.begin(), context.end()), at::kLong);
            const at::Tensor logits = reference.logits(reference.forward_sequence(ids.unsqueeze(0)))[0][-1];
            EXPECT_LT(max_difference(row(p.probabilities, i), restricted_softmax(logits)), 1e-5)
                << "step " << step << ", node " << i;
            context.push_back(p.tokens[i]);
        }
        // Accept the first two drafts, then a correction.
        sequence.push_back(p.tokens[0]);
        sequence.push_back(p.tokens[1]);
        sequence.push_back(p.tokens[2] == 300 ? 301 : 300);
    }
}

TEST(ShallowDraft, CacheSyncAfterAcceptanceAndRejectionEqualsAFreshDrafter) {
    DrafterPlugin kept(shallow_table(3)), fresh(shallow_table(3));
    void* session = kept.new_session();
    const cdz_sampling sampling = test::synthesis_sampling(1.0);
    std::vector<int32_t> sequence = test::prompt_tokens("the cache follows the sequence.");
    auto first = kept.propose(session, sequence, sampling);
    auto other_than = [](int32_t token) { return token == 300 ? 301 : 300; };

    std::vector<std::pair<std::string, std::vector<int32_t>>> steps;
    // Every draft accepted, plus the target's bonus token.
    std::vector<int32_t> all = sequence;
    all.insert(all.end(), first.tokens.begin(), first.tokens.end());
    all.push_back(290);
    steps.emplace_back("all accepted", all);
    // Then the first draft accepted and the second rejected (a correction).
    steps.emplace_back("rejection", std::vector<int32_t>{});
    // Then back to a much shorter sequence sharing three tokens.
    std::vector<int32_t> shorter(sequence.begin(), sequence.begin() + 3);
    shorter.push_back(270);
    steps.emplace_back("shorter", shorter);
    // Then a sequence with nothing in common.
    steps.emplace_back("unrelated", std::vector<int32_t>{5, 6, 7, test::audio_start, 280, 281});
    // Then a one-token sequence.
    steps.emplace_back("one token", std::vector<int32_t>{9});

    std::vector<int32_t> previous_drafts = first.tokens;
    std::vector<int32_t> previous = sequence;
    for (auto& [name, next] : steps) {
        if (name == "rejection") {
            next = previous;
            next.push_back(previous_drafts[0]);
            next.push_back(other_than(previous_drafts[1]));
        }
        kept.reseed(11);
        fresh.reseed(11);
        const auto got = kept.propose(session, next, sampling);
        const auto expected = fresh.propose(fresh.new_session(), next, sampling);
        EXPECT_EQ(got.tokens, expected.tokens) << name;
        EXPECT_EQ(got.parents, expected.parents) << name;
        EXPECT_LT(max_difference(got.probabilities, expected.probabilities), 1e-5) << name;
        previous = next;
        previous_drafts = got.tokens;
    }
}

// The target's keys and values of `tokens`, as the backbone's
// session_read_cache hands them: [layers, kv_heads, n, head_dim] each.
std::pair<at::Tensor, at::Tensor> target_cache_of(const std::vector<int32_t>& tokens) {
    const auto& m = test::draft_models();
    const auto config = llama::LlamaConfig::from_file(m.target / "config.json");
    const llama::LlamaModel target(llama::LlamaWeights::load(m.target, config, at::kCPU), 512);
    llama::KvCache cache(config, 256, at::kCPU);
    std::vector<int32_t> parents(tokens.size());
    std::iota(parents.begin(), parents.end(), -1);
    target.forward_tree(cache, tokens, parents, llama::LlamaModel::no_logits);
    std::vector<at::Tensor> keys, values;
    for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        keys.push_back(cache.keys(layer));
        values.push_back(cache.values(layer));
    }
    return {at::stack(keys).contiguous(), at::stack(values).contiguous()};
}

TEST(ShallowDraft, PrefixFromTargetStartsTheCacheFromTheTargetsKeysAndValues) {
    // The target as its own draft: its proposals after the target's cache of
    // the prompt are those after its own prefill (the same model), and other
    // keys and values give other proposals, so the cache did come from them.
    c10::InferenceMode inference;
    const std::string table =
        "plugin = \"draft.shallow\"\nmodel = \"" + test::draft_models().target.string() + "\"\nlength = 3\n";
    DrafterPlugin shared(table + "prefix_from_target = true\n"), own(table);
    EXPECT_EQ(shared.info().reads_target_cache, 1);
    EXPECT_EQ(own.info().reads_target_cache, 0);
    const cdz_sampling sampling = test::synthesis_sampling(1.0);
    const std::vector<int32_t> sequence = test::prompt_tokens("the target's cache.");
    const auto [keys, values] = target_cache_of(std::vector<int32_t>(sequence.begin(), sequence.end() - 1));
    auto view = [](const at::Tensor& t) {
        return std::make_unique<TensorView>(t.data_ptr<float>(), DLDataType{kDLFloat, 32, 1}, t.sizes().vec());
    };
    const auto key_view = view(keys), value_view = view(values);
    const auto expected = own.propose(own.new_session(), sequence, sampling);
    const auto got = shared.propose(shared.new_session(), sequence, sampling, {}, -1, key_view->get(), value_view->get());
    EXPECT_EQ(got.tokens, expected.tokens);
    EXPECT_LT(max_difference(got.probabilities, expected.probabilities), 1e-5);
    // Without them (the cost measurement's proposals), the draft evaluates the prompt itself.
    shared.reseed(1);
    EXPECT_EQ(shared.propose(shared.new_session(), sequence, sampling).tokens, expected.tokens);

    const at::Tensor other_values = values * 0.5;
    const auto other_view = view(other_values);
    const auto other = shared.propose(shared.new_session(), sequence, sampling, {}, -1, key_view->get(), other_view->get());
    EXPECT_GT(max_difference(row(other.probabilities, 0), row(expected.probabilities, 0)), 1e-3);

    // A cache of another shape is an error naming the parameter.
    const at::Tensor fewer_layers = keys.narrow(0, 0, keys.size(0) - 1).contiguous();
    const auto fewer_view = view(fewer_layers);
    try {
        shared.propose(shared.new_session(), sequence, sampling, {}, -1, fewer_view->get(), value_view->get());
        FAIL() << "a cache of fewer layers was taken";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("prefix_from_target"), std::string::npos) << e.what();
    }
}

TEST(ShallowDraft, TreeRowsAreTheDistributionsAfterEachNode) {
    DrafterPlugin tree(shallow_table(2, 2)), chain(shallow_table(1));
    EXPECT_EQ(tree.info().max_nodes, 6);
    const cdz_sampling sampling = test::synthesis_sampling(1.0);
    const auto sequence = test::prompt_tokens("a tree of drafts.");
    const auto p = tree.propose(tree.new_session(), sequence, sampling);
    ASSERT_EQ(p.tokens.size(), 6u);
    EXPECT_EQ(p.parents, (std::vector<int32_t>{-1, -1, 0, 0, 1, 1}));
    const auto root = chain.propose(chain.new_session(), sequence, sampling);
    EXPECT_LT(max_difference(row(p.probabilities, 0), row(root.probabilities, 0)), 1e-5);
    EXPECT_EQ(row(p.probabilities, 0), row(p.probabilities, 1));  // siblings share their distribution
    for (int parent : {0, 1}) {
        std::vector<int32_t> extended = sequence;
        extended.push_back(p.tokens[static_cast<size_t>(parent)]);
        const auto after = chain.propose(chain.new_session(), extended, sampling);
        const size_t child = 2 + 2 * static_cast<size_t>(parent);
        EXPECT_LT(max_difference(row(p.probabilities, child), row(after.probabilities, 0)), 1e-5) << parent;
        EXPECT_EQ(row(p.probabilities, child), row(p.probabilities, child + 1));
    }
}

TEST(ShallowDraft, ErrorsNameThePlugin) {
    try {
        DrafterPlugin drafter("plugin = \"draft.shallow\"\nmodel = \"" + test::draft_models().heads_mtp.string() + "\"\n");
        FAIL() << "a heads file is not a draft model";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("draft.shallow"), std::string::npos) << e.what();
    }
}

// ---------------------------------------------------------------------------
// draft.mtp: the alignment of the heads

struct HeadsReference {
    at::Tensor weight, bias;  // [n, H, H], [n, H]
    at::Tensor lm_head;       // [V, H] (the tiny target ties it to the embedding)
};

HeadsReference heads_reference() {
    const auto& m = test::draft_models();
    const safetensors::File file(m.heads_mtp);
    HeadsReference r;
    std::vector<at::Tensor> weights, biases;
    for (int64_t i = 0; i < m.head_count; ++i) {
        auto w = file.read_f32("heads." + std::to_string(i) + ".linear.weight");
        auto b = file.read_f32("heads." + std::to_string(i) + ".linear.bias");
        weights.push_back(at::from_blob(w.data(), {test::hidden_size, test::hidden_size}, at::kFloat).clone());
        biases.push_back(at::from_blob(b.data(), {test::hidden_size}, at::kFloat).clone());
    }
    r.weight = at::stack(weights);
    r.bias = at::stack(biases);
    r.lm_head = m.target_weights.embed_tokens;
    return r;
}

// The distribution of logits restricted to the synthesis's tokens, at temperature 1.
std::vector<float> restricted_softmax(const at::Tensor& logits) {
    at::Tensor masked = at::full({test::vocab_size}, -std::numeric_limits<float>::infinity());
    masked.narrow(0, test::audio_begin, test::audio_end - test::audio_begin)
        .copy_(logits.narrow(0, test::audio_begin, test::audio_end - test::audio_begin));
    masked[test::end_token] = logits[test::end_token];
    const at::Tensor p = at::softmax(masked.to(at::kDouble), 0).to(at::kFloat).contiguous();
    return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + test::vocab_size);
}

std::vector<float> random_hidden(uint64_t seed) {
    at::manual_seed(seed);
    const at::Tensor h = at::randn({test::hidden_size}).contiguous();
    return std::vector<float>(h.data_ptr<float>(), h.data_ptr<float>() + test::hidden_size);
}

TEST(MtpDraft, VerifyingChainIsHeadsAfterThePendingToken) {
    c10::InferenceMode inference;
    DrafterPlugin mtp(mtp_table());
    EXPECT_EQ(mtp.info().max_nodes, 4);
    EXPECT_EQ(mtp.info().needs_target_hidden, 1);
    const auto r = heads_reference();
    const auto hidden = random_hidden(3);
    const at::Tensor h = at::from_blob(const_cast<float*>(hidden.data()), {test::hidden_size}, at::kFloat);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    // Verifying: the hidden state at N - 2 predicted the pending token 271;
    // node i is x_{N+i}, head i's.
    const auto p = mtp.propose(mtp.new_session(), sequence, test::synthesis_sampling(1.0), hidden,
                               static_cast<int64_t>(sequence.size()) - 2);
    ASSERT_EQ(p.tokens.size(), 4u);
    EXPECT_EQ(p.parents, (std::vector<int32_t>{-1, 0, 1, 2}));
    for (int64_t i = 0; i < 4; ++i) {
        const at::Tensor state = h + at::silu(at::mv(r.weight[i], h) + r.bias[i]);
        EXPECT_LT(max_difference(row(p.probabilities, static_cast<size_t>(i)), restricted_softmax(at::mv(r.lm_head, state))),
                  1e-5)
            << "head " << i;
    }
}

TEST(MtpDraft, StopProbabilityEndsTheChainAfterAnUnlikelyToken) {
    // The same seed draws the same tokens: the shortened chain is the full
    // chain's prefix up to its first token below the threshold.
    c10::InferenceMode inference;
    const auto hidden = random_hidden(5);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    const auto position = static_cast<int64_t>(sequence.size()) - 2;
    for (const double threshold : {0.0005, 0.002, 0.01, 1.0}) {
        DrafterPlugin full(mtp_table()), cut(mtp_table() + "stop_probability = " + std::to_string(threshold) + "\n");
        const auto all = full.propose(full.new_session(), sequence, test::synthesis_sampling(1.0), hidden, position);
        const auto some = cut.propose(cut.new_session(), sequence, test::synthesis_sampling(1.0), hidden, position);
        ASSERT_EQ(all.tokens.size(), 4u);
        size_t expected = all.tokens.size();
        for (size_t i = 0; i < all.tokens.size(); ++i)
            if (row(all.probabilities, i)[static_cast<size_t>(all.tokens[i])] < threshold) {
                expected = i + 1;
                break;
            }
        ASSERT_EQ(some.tokens.size(), expected) << "threshold " << threshold;
        EXPECT_TRUE(std::equal(some.tokens.begin(), some.tokens.end(), all.tokens.begin())) << "threshold " << threshold;
        EXPECT_EQ(some.probabilities.size(), expected * test::vocab_size);
    }
}

TEST(MtpDraft, NonVerifyingChainStartsWithTheTargetsOwnHead) {
    c10::InferenceMode inference;
    DrafterPlugin mtp(mtp_table());
    const auto r = heads_reference();
    const auto hidden = random_hidden(4);
    const at::Tensor h = at::from_blob(const_cast<float*>(hidden.data()), {test::hidden_size}, at::kFloat);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    // Not verifying: the hidden state at N - 1 (every token evaluated); x_N
    // is the target's head's, x_{N+i} head i - 1's.
    const auto p = mtp.propose(mtp.new_session(), sequence, test::synthesis_sampling(1.0), hidden,
                               static_cast<int64_t>(sequence.size()) - 1);
    ASSERT_EQ(p.tokens.size(), 4u);
    EXPECT_LT(max_difference(row(p.probabilities, 0), restricted_softmax(at::mv(r.lm_head, h))), 1e-5);
    for (int64_t i = 1; i < 4; ++i) {
        const at::Tensor state = h + at::silu(at::mv(r.weight[i - 1], h) + r.bias[i - 1]);
        EXPECT_LT(max_difference(row(p.probabilities, static_cast<size_t>(i)), restricted_softmax(at::mv(r.lm_head, state))),
                  1e-5)
            << "row " << i;
    }
    // Greedy: each node is its row's argmax.
    const auto greedy = mtp.propose(mtp.new_session(), sequence, test::synthesis_sampling(0.0), hidden,
                                    static_cast<int64_t>(sequence.size()) - 1);
    for (size_t i = 0; i < 4; ++i) {
        const auto distribution = row(p.probabilities, i);
        EXPECT_EQ(greedy.tokens[i], std::max_element(distribution.begin(), distribution.end()) - distribution.begin());
    }
}

TEST(MtpDraft, HeadCountNoHiddenStateAndMisplacedHiddenState) {
    DrafterPlugin two(mtp_table(2));
    EXPECT_EQ(two.info().max_nodes, 2);
    void* session = two.new_session();
    const std::vector<int32_t> sequence = {10, test::audio_start, 270};
    const auto hidden = random_hidden(5);
    EXPECT_EQ(two.propose(session, sequence, test::synthesis_sampling(0.0), hidden, 1).tokens.size(), 2u);
    EXPECT_EQ(two.propose(session, sequence, test::synthesis_sampling(0.0), hidden, 2).tokens.size(), 2u);
    EXPECT_TRUE(two.propose(session, {test::audio_start}, test::synthesis_sampling(0.0)).tokens.empty());
    try {
        two.propose(session, sequence, test::synthesis_sampling(0.0), hidden, 0);
        FAIL() << "a hidden state at position 0 of 3 fits neither mode";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("position 0"), std::string::npos) << e.what();
    }
    try {
        DrafterPlugin too_many(mtp_table(9));
        FAIL() << "the file holds 4 heads";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("asked for 9 heads"), std::string::npos) << e.what();
    }
}

TEST(MtpDraft, HeadsFileErrorsNameTheFile) {
    const auto& m = test::draft_models();
    const auto directory = test::fresh_directory("mtp-bad-heads");
    auto expect_error = [&](const std::filesystem::path& file, const std::string& fragment) {
        try {
            DrafterPlugin mtp("plugin = \"draft.mtp\"\nheads = \"" + file.string() + "\"\ntarget = \"" +
                              m.target.string() + "\"\n");
            FAIL() << fragment;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
        }
    };
    std::vector<float> square(32 * 32, 0.0f), vector(32, 0.0f);
    {
        safetensors::Writer writer;
        writer.add_f32("heads.0.linear.weight", {32, 32}, square.data());
        writer.add_f32("heads.0.linear.bias", {32}, vector.data());
        writer.write(directory / "narrow.safetensors");
        expect_error(directory / "narrow.safetensors", "heads.0.linear.weight");
    }
    {
        safetensors::Writer writer;
        std::vector<float> w(64 * 64, 0.0f), b(64, 0.0f);
        writer.add_f32("heads.0.linear.weight", {64, 64}, w.data());
        writer.add_f32("heads.0.linear.bias", {64}, b.data());
        writer.set_metadata("cadenza.heads", "3");
        writer.write(directory / "count.safetensors");
        expect_error(directory / "count.safetensors", "cadenza.heads = 3");
    }
    {
        safetensors::Writer writer;
        writer.add_f32("model.norm.weight", {32}, vector.data());
        writer.write(directory / "none.safetensors");
        expect_error(directory / "none.safetensors", "not a heads file");
    }
}

// ---------------------------------------------------------------------------
// draft.medusa

// The rank-ordered allowed tokens of some logits (ties to the lower id).
std::vector<int32_t> ranked(const at::Tensor& logits) {
    std::vector<int32_t> ids;
    for (int32_t t = test::audio_begin; t < test::audio_end; ++t) ids.push_back(t);
    ids.push_back(test::end_token);
    auto value = [&](int32_t t) { return logits[t].item<float>(); };
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
        return value(a) != value(b) ? value(a) > value(b) : a < b;
    });
    return ids;
}

TEST(MedusaDraft, TreeOfTopKCandidatesWithSharedRows) {
    c10::InferenceMode inference;
    const auto& m = test::draft_models();
    DrafterPlugin medusa(medusa_table(m.choices));
    EXPECT_EQ(medusa.info().max_nodes, 9);
    EXPECT_EQ(medusa.info().max_depth, 4);
    EXPECT_EQ(medusa.info().needs_target_hidden, 1);
    const auto r = heads_reference();
    const auto hidden = random_hidden(6);
    const at::Tensor h = at::from_blob(const_cast<float*>(hidden.data()), {test::hidden_size}, at::kFloat);
    const std::vector<int32_t> sequence = {10, test::audio_start, 270, 271};
    const auto p = medusa.propose(medusa.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 2);
    // Tree order: 0 1 2 | 0,0 0,1 1,0 | 0,0,0 0,0,1 | 0,0,0,0
    const std::vector<medusa::Choice> choices = {{0}, {1}, {2}, {0, 0}, {0, 1}, {1, 0}, {0, 0, 0}, {0, 0, 1}, {0, 0, 0, 0}};
    EXPECT_EQ(p.parents, (std::vector<int32_t>{-1, -1, -1, 0, 0, 1, 3, 3, 6}));
    ASSERT_EQ(p.tokens.size(), choices.size());
    for (size_t node = 0; node < choices.size(); ++node) {
        const int64_t head = static_cast<int64_t>(choices[node].size()) - 1;
        const at::Tensor logits = at::mv(r.lm_head, h + at::silu(at::mv(r.weight[head], h) + r.bias[head]));
        EXPECT_EQ(p.tokens[node], ranked(logits)[static_cast<size_t>(choices[node].back())]) << node;
        EXPECT_LT(max_difference(row(p.probabilities, node), restricted_softmax(logits)), 1e-5) << node;
    }
    EXPECT_EQ(row(p.probabilities, 0), row(p.probabilities, 2));  // siblings share their head's row
    try {
        medusa.propose(medusa.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
        FAIL() << "draft.medusa needs a verifying acceptor";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("draft.mtp"), std::string::npos) << e.what();
    }
}

TEST(MedusaDraft, ChoicesFileErrorsNameFileAndLine) {
    auto expect_error = [](const std::string& text, int64_t top_k, const std::string& fragment) {
        try {
            medusa::parse_choices(text, "tree.txt", top_k);
            FAIL() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    expect_error("0\n0,1\n0,1\n", 10, "tree.txt:3: choice 0,1 repeats line 2");
    expect_error("0\n\n1,2\n", 10, "tree.txt:3: choice 1,2 needs its prefix 1, which the file does not list");
    expect_error("0\n12\n", 10, "tree.txt:2: rank 12 of choice 12 is not below top_k = 10");
    expect_error("0\n0;1\n", 10, "tree.txt:2: malformed rank '0;1'");
    expect_error("0\n0,-1\n", 10, "tree.txt:2: malformed rank '-1'");
    expect_error("0,\n", 10, "tree.txt:1: malformed choice '0,'");
    expect_error("0\n0,,1\n", 10, "tree.txt:2: malformed rank ''");
    expect_error("# nothing\n\n", 10, "tree.txt: no choices");
    expect_error("0\n3\n", 3, "tree.txt:2: rank 3");
    // Valid: comments, spaces, any order; returned in tree order.
    const auto choices = medusa::parse_choices("0 , 1  # a comment\n\n  1\n0\n0,1,0\n", "tree.txt", 2);
    EXPECT_EQ(choices, (std::vector<medusa::Choice>{{0}, {1}, {0, 1}, {0, 1, 0}}));
    const auto tree = medusa::make_tree(choices);
    EXPECT_EQ(tree.parents, (std::vector<int32_t>{-1, -1, 0, 2}));
    EXPECT_EQ(tree.depth, 3);

    // Through the plugin: the file's error, and a tree deeper than the heads.
    const auto directory = test::fresh_directory("medusa-choices");
    try {
        DrafterPlugin bad(medusa_table(test::write_file(directory, "bad.txt", "0\n0,0\n1,1\n")));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad.txt:3: choice 1,1 needs its prefix 1"), std::string::npos) << e.what();
    }
    try {
        DrafterPlugin deep(medusa_table(test::write_file(directory, "deep.txt", "0\n0,0\n0,0,0\n0,0,0,0\n0,0,0,0,0\n")));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("5 levels deep, but the heads file holds 4 heads"), std::string::npos)
            << e.what();
    }
}

// ---------------------------------------------------------------------------
// build-tree's greedy construction

// The best expected acceptance over every prefix-closed set of `budget`
// nodes of the full tree (`depth` levels, `k` ranks).
double brute_force_best(const medusa::RankAccuracy& accuracy, int budget, int depth) {
    std::vector<medusa::Choice> nodes;
    std::function<void(medusa::Choice)> grow = [&](medusa::Choice prefix) {
        if (static_cast<int>(prefix.size()) == depth) return;
        for (size_t r = 0; r < accuracy[prefix.size()].size(); ++r) {
            medusa::Choice child = prefix;
            child.push_back(static_cast<int32_t>(r));
            nodes.push_back(child);
            grow(child);
        }
    };
    grow({});
    // Parents before children: sort by length.
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    std::map<medusa::Choice, size_t> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
    std::vector<int> parent(nodes.size(), -1);
    std::vector<double> value(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].size() > 1) parent[i] = static_cast<int>(index[medusa::Choice(nodes[i].begin(), nodes[i].end() - 1)]);
        value[i] = medusa::acceptance_probability(nodes[i], accuracy);
    }
    std::vector<char> in(nodes.size(), 0);
    double best = 0;
    std::function<void(size_t, int, double)> search = [&](size_t from, int left, double total) {
        if (left == 0) {
            best = std::max(best, total);
            return;
        }
        for (size_t i = from; i < nodes.size(); ++i) {
            if (parent[i] >= 0 && !in[static_cast<size_t>(parent[i])]) continue;
            in[i] = 1;
            search(i + 1, left - 1, total + value[i]);
            in[i] = 0;
        }
    };
    search(0, budget, 0.0);
    return best;
}

TEST(BuildTree, GreedyEqualsTheBruteForceOptimum) {
    const std::vector<medusa::RankAccuracy> cases = {
        {{0.6, 0.2, 0.1}, {0.5, 0.25, 0.1}, {0.45, 0.3, 0.05}},
        {{0.3, 0.3, 0.2}, {0.9, 0.05, 0.0}, {0.2, 0.2, 0.2}},  // ties, a zero, a strong second head
        {{0.1, 0.05, 0.02}, {0.9, 0.8, 0.7}, {0.95, 0.9, 0.1}},
    };
    for (size_t c = 0; c < cases.size(); ++c) {
        for (int budget = 1; budget <= 7; ++budget) {
            const auto greedy = medusa::greedy_tree(cases[c], budget, 3);
            EXPECT_EQ(static_cast<int>(greedy.size()), budget);
            EXPECT_NO_THROW(medusa::make_tree(greedy));  // prefix-closed, no duplicate
            EXPECT_EQ(greedy, medusa::parse_choices([&] {
                          std::string text;
                          for (const auto& choice : greedy) text += medusa::format_choice(choice) + "\n";
                          return text;
                      }(), "greedy", 3));  // in tree order, and a valid choices file
            EXPECT_NEAR(medusa::expected_accepted_drafts(greedy, cases[c]), brute_force_best(cases[c], budget, 3), 1e-12)
                << "case " << c << ", budget " << budget;
        }
    }
    // A shallower limit, and a budget beyond the nodes of positive value.
    const auto shallow = medusa::greedy_tree(cases[0], 5, 1);
    EXPECT_EQ(shallow, (std::vector<medusa::Choice>{{0}, {1}, {2}}));
    const auto first_two = medusa::greedy_tree({{1.0, 0.0}, {1.0, 0.0}}, 10, 2);
    EXPECT_EQ(first_two, (std::vector<medusa::Choice>{{0}, {0, 0}}));
    // The example: 0.6 + 0.2 + 0.6 * 0.5 = 1.1 expected accepted drafts with 3 nodes.
    EXPECT_NEAR(medusa::expected_accepted_drafts(medusa::greedy_tree(cases[0], 3, 3), cases[0]), 1.1, 1e-12);
}

// ---------------------------------------------------------------------------
// The heads' accuracy

TEST(BuildTree, PerCostTreeIsTheGreedyPrefixOfHighestTokensPerCost) {
    // Head 0 is right at rank 0 half the time, head 1 a quarter: the greedy
    // order is 0 (0.5), 0,0 (0.125), then rank 1 of head 0 (0.1) ...
    const medusa::RankAccuracy accuracy{{0.5, 0.1, 0.05}, {0.25, 0.05, 0.0}};
    const auto order = medusa::greedy_order(accuracy, 10, 2);
    ASSERT_GE(order.size(), 3u);
    EXPECT_EQ(order[0], (medusa::Choice{0}));
    EXPECT_EQ(order[1], (medusa::Choice{0, 0}));
    EXPECT_EQ(order[2], (medusa::Choice{1}));
    // Free verification: the whole tree; each node costs 0.3 of a step: one node.
    const auto whole = medusa::greedy_tree_per_cost(accuracy, 10, 2, [](int64_t, int64_t) { return 1.0; });
    EXPECT_EQ(whole.choices, medusa::greedy_tree(accuracy, 10, 2));
    const auto one = medusa::greedy_tree_per_cost(accuracy, 10, 2,
                                                  [](int64_t nodes, int64_t) { return 1.0 + 0.3 * nodes; });
    EXPECT_EQ(one.choices, (std::vector<medusa::Choice>{{0}}));
    EXPECT_NEAR(one.expected_tokens, 1.5, 1e-12);
    EXPECT_NEAR(one.speedup(), 1.5 / 1.3, 1e-12);
    // Every prefix size is tried: the chosen one has the best ratio of all.
    const auto cost = [](int64_t nodes, int64_t depth) { return 1.0 + 0.05 * nodes + 0.1 * depth; };
    const auto best = medusa::greedy_tree_per_cost(accuracy, 10, 2, cost);
    double expected = 1.0;
    int64_t depth = 0;
    for (size_t n = 1; n <= order.size(); ++n) {
        expected += medusa::acceptance_probability(order[n - 1], accuracy);
        depth = std::max<int64_t>(depth, static_cast<int64_t>(order[n - 1].size()));
        EXPECT_LE(expected / cost(static_cast<int64_t>(n), depth), best.speedup() + 1e-12) << n;
    }
}

TEST(BuildTree, HeadAccuracyCountsRanksOfTheTrueTokens) {
    c10::InferenceMode inference;
    const auto& m = test::draft_models();
    const llama::LlamaModel target(m.target_weights, 512);
    const drafts::DraftHeads heads(m.heads_medusa, m.target);
    ASSERT_EQ(heads.count(), 4);
    std::vector<medusa::CorpusSequence> corpus(2);
    at::manual_seed(9);
    for (int s = 0; s < 2; ++s) {
        const at::Tensor random = at::randint(test::audio_begin, test::audio_end, {30 + 10 * s}, at::kLong);
        corpus[s].tokens = {1, 2, 3, test::audio_start};
        for (int64_t i = 0; i < random.size(0); ++i) corpus[s].tokens.push_back(static_cast<int32_t>(random[i].item<int64_t>()));
        corpus[s].prompt_length = 4;
    }
    const auto accuracy = medusa::measure_head_accuracy(target, heads, corpus, 10, 512);
    // The reference: every rank, element by element.
    std::vector<std::vector<int64_t>> hits(4, std::vector<int64_t>(10, 0));
    std::vector<int64_t> positions(4, 0);
    for (const auto& sequence : corpus) {
        const auto length = static_cast<int64_t>(sequence.tokens.size());
        const at::Tensor ids = at::tensor(std::vector<int64_t>(sequence.tokens.begin(), sequence.tokens.end()), at::kLong);
        const at::Tensor hidden = target.forward_sequence(ids.unsqueeze(0))[0];
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t t = 0; t + 2 + i < length; ++t) {
                if (t + 2 + i < static_cast<int64_t>(sequence.prompt_length)) continue;
                const at::Tensor logits = heads.logits(heads.states(hidden[t], i, 1)[0]).contiguous();
                const float* l = logits.data_ptr<float>();
                const int32_t truth = sequence.tokens[static_cast<size_t>(t + 2 + i)];
                int64_t rank = 0;
                for (int32_t v = 0; v < test::vocab_size; ++v) rank += l[v] > l[truth] || (l[v] == l[truth] && v < truth);
                if (rank < 10) ++hits[i][rank];
                ++positions[i];
            }
    }
    EXPECT_EQ(accuracy.positions, positions);
    EXPECT_EQ(accuracy.hits, hits);
    EXPECT_EQ(positions[0], 30 + 40);  // every target token but none of the prompt's
    const auto rank_accuracy = accuracy.rank_accuracy(3);
    EXPECT_EQ(rank_accuracy.size(), 4u);
    EXPECT_NEAR(rank_accuracy[1][2], static_cast<double>(hits[1][2]) / positions[1], 1e-12);
    EXPECT_NEAR(accuracy.top(0, 5), std::accumulate(hits[0].begin(), hits[0].begin() + 5, 0.0) / positions[0], 1e-12);
}

// `cadenza build-tree` as a user runs it: the tree it writes is the greedy
// tree of the accuracies measured in-process.
std::pair<int, std::string> run_cli(const std::string& arguments, const std::filesystem::path& directory) {
    const auto output = directory / "cli-output.txt";
    const int status = std::system((std::string(CADENZA_CLI) + " " + arguments + " > " + output.string() + " 2>&1").c_str());
    std::ifstream file(output);
    std::stringstream text;
    text << file.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(BuildTree, CommandWritesTheGreedyTreeOfTheMeasuredAccuracies) {
    c10::InferenceMode inference;
    const auto& m = test::draft_models();
    const auto directory = test::fresh_directory("build-tree-cli");
    std::string corpus_text;
    std::vector<medusa::CorpusSequence> corpus;
    at::manual_seed(12);
    for (int s = 0; s < 4; ++s) {
        medusa::CorpusSequence sequence{{3, 4, 5, test::audio_start}, 4};
        const at::Tensor codes = at::randint(test::audio_begin, test::audio_end, {25}, at::kLong);
        for (int64_t i = 0; i < codes.size(0); ++i) sequence.tokens.push_back(static_cast<int32_t>(codes[i].item<int64_t>()));
        sequence.tokens.push_back(test::end_token);
        for (size_t i = 0; i < sequence.tokens.size(); ++i)
            corpus_text += (i == 4 ? " | " : i ? " " : "") + std::to_string(sequence.tokens[i]);
        corpus_text += "\n";
        corpus.push_back(sequence);
    }
    const auto corpus_file = test::write_file(directory, "heldout.txt", corpus_text);
    const auto choices_file = directory / "choices.txt";
    const std::string common = "--target " + m.target.string() + " --heads " + m.heads_medusa.string() + " --corpus ";
    const auto [status, output] = run_cli("build-tree " + common + corpus_file.string() + " --output " +
                                              choices_file.string() + " --budget 6 --top-k 3 --threads 1 "
                                              "--objective acceptance",
                                          directory);
    ASSERT_EQ(status, 0) << output;
    EXPECT_NE(output.find("expected acceptance length"), std::string::npos) << output;
    EXPECT_NE(output.find("top-1"), std::string::npos) << output;
    const auto written = medusa::read_choices(choices_file, 3);
    const llama::LlamaModel target(m.target_weights, 512);
    const drafts::DraftHeads heads(m.heads_medusa, m.target);
    const auto accuracy = medusa::measure_head_accuracy(target, heads, corpus, 5, 512).rank_accuracy(3);
    EXPECT_EQ(written, medusa::greedy_tree(accuracy, 6, 4));
    // The tree drives draft.medusa.
    DrafterPlugin medusa(medusa_table(choices_file));
    EXPECT_EQ(medusa.info().max_nodes, static_cast<int32_t>(written.size()));

    // By measured cost (the default): a prefix of the greedy order, with the
    // table of predicted speedups it was chosen from.
    const auto per_cost_file = directory / "per-cost.txt";
    const auto per_cost = run_cli("build-tree " + common + corpus_file.string() + " --output " +
                                      per_cost_file.string() + " --budget 6 --top-k 3 --threads 1 --context 32",
                                  directory);
    ASSERT_EQ(per_cost.first, 0) << per_cost.second;
    EXPECT_NE(per_cost.second.find("predicted speedup"), std::string::npos) << per_cost.second;
    const auto cut = medusa::read_choices(per_cost_file, 3);
    ASSERT_GE(cut.size(), 1u);
    ASSERT_LE(cut.size(), 6u);
    auto prefix = medusa::greedy_order(accuracy, static_cast<int64_t>(cut.size()), 4);
    std::sort(prefix.begin(), prefix.end(), [](const medusa::Choice& a, const medusa::Choice& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    EXPECT_EQ(cut, prefix);

    const auto too_deep = run_cli("build-tree " + common + corpus_file.string() + " --output " +
                                      (directory / "x.txt").string() + " --max-depth 9",
                                  directory);
    EXPECT_EQ(too_deep.first, 1) << too_deep.second;
    EXPECT_NE(too_deep.second.find("exceeds the 4 heads"), std::string::npos) << too_deep.second;
    const auto bad = test::write_file(directory, "bad.txt", "1 2 | 300 301\n1 2 | 300 999\n");
    const auto out_of_range = run_cli("build-tree " + common + bad.string() + " --output " +
                                          (directory / "y.txt").string(),
                                      directory);
    EXPECT_EQ(out_of_range.first, 1) << out_of_range.second;
    EXPECT_NE(out_of_range.second.find("bad.txt:2"), std::string::npos) << out_of_range.second;
}

}  // namespace
}  // namespace cadenza
