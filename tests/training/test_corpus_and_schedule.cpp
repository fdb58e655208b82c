// The token corpus format and its errors, the held-out split, the synthetic
// source, the learning-rate schedule, batches and the progress formats.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>

#include "batch_sampler.h"
#include "error.h"
#include "lr_schedule.h"
#include "progress.h"
#include "synthetic_corpus.h"
#include "token_corpus.h"

namespace cadenza::training {
namespace {

TokenCorpus parse(const std::string& text, const std::string& name = "c.txt") {
    std::istringstream in(text);
    return parse_token_corpus(in, name);
}

std::string parse_error(const std::string& text) {
    try {
        parse(text);
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

TEST(TrainTokenCorpus, ParsesPromptTargetAndPlainLines) {
    const TokenCorpus corpus = parse("1 2 | 3 4 5\n\n  \n7\t8 9\r\n|10\n4|5\n");
    ASSERT_EQ(corpus.sequences.size(), 4u);
    EXPECT_EQ(corpus.sequences[0].tokens, (std::vector<int32_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(corpus.sequences[0].prompt_length, 2);
    EXPECT_EQ(corpus.sequences[0].line, 1);
    EXPECT_EQ(corpus.sequences[1].tokens, (std::vector<int32_t>{7, 8, 9}));
    EXPECT_EQ(corpus.sequences[1].prompt_length, 0);  // no '|': all target
    EXPECT_EQ(corpus.sequences[1].line, 4);            // blank lines are skipped but counted
    EXPECT_EQ(corpus.sequences[2].prompt_length, 0);
    EXPECT_EQ(corpus.sequences[2].target_length(), 1);
    EXPECT_EQ(corpus.sequences[3].tokens, (std::vector<int32_t>{4, 5}));
    EXPECT_EQ(corpus.sequences[3].prompt_length, 1);
    EXPECT_EQ(corpus.token_count(), 11);
    EXPECT_EQ(corpus.target_token_count(), 8);
    EXPECT_EQ(corpus.max_token(), 10);
    EXPECT_EQ(format_sequence(corpus.sequences[0]), "1 2 | 3 4 5");
    EXPECT_EQ(format_sequence(corpus.sequences[1]), "7 8 9");
}

TEST(TrainTokenCorpus, ErrorsNameFileAndLine) {
    EXPECT_EQ(parse_error("1 2\n3 8x 4\n"), "c.txt:2: malformed token '8x' (tokens are non-negative decimal integers)");
    EXPECT_EQ(parse_error("1 -5\n"), "c.txt:1: malformed token '-5' (tokens are non-negative decimal integers)");
    EXPECT_EQ(parse_error("1.5\n"), "c.txt:1: malformed token '1.5' (tokens are non-negative decimal integers)");
    EXPECT_EQ(parse_error("\n1 | 2 | 3\n"), "c.txt:2: a second '|' (a line is `prompt_ids | target_ids`)");
    EXPECT_EQ(parse_error("1\n2 3 |\n"), "c.txt:2: no target tokens (after the '|') to train on");
    EXPECT_EQ(parse_error("1\n|\n"), "c.txt:2: no target tokens (after the '|') to train on");
    EXPECT_EQ(parse_error("99999999999\n"), "c.txt:1: token '99999999999' is too large (at most 2147483647)");
    EXPECT_EQ(parse_error("\n \n"), "c.txt: no sequences (the file is empty)");

    const TokenCorpus corpus = parse("1 2\n\n3 | 4 40\n");
    try {
        corpus.check_vocabulary(32, "model/config.json");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "c.txt:3: token 40 is outside the vocabulary of model/config.json (32 tokens)");
    }
    EXPECT_NO_THROW(corpus.check_vocabulary(41, "m"));
}

TEST(TrainTokenCorpus, LoadingAMissingFileNamesIt) {
    try {
        load_token_corpus("/nonexistent/corpus.txt");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.txt"), std::string::npos);
    }
}

TEST(TrainTokenCorpus, SplitIsSeededAndDisjoint) {
    std::string text;
    for (int i = 0; i < 100; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
    const TokenCorpus corpus = parse(text);
    const CorpusSplit a = split_corpus(corpus, 0.1, 7), b = split_corpus(corpus, 0.1, 7), c = split_corpus(corpus, 0.1, 8);
    EXPECT_EQ(a.heldout.size(), 10u);
    EXPECT_EQ(a.train.size(), 90u);
    EXPECT_EQ(a.heldout, b.heldout);
    EXPECT_NE(a.heldout, c.heldout);
    for (const auto* h : a.heldout) EXPECT_EQ(std::count(a.train.begin(), a.train.end(), h), 0);
    EXPECT_EQ(split_corpus(corpus, 0.0, 7).heldout.size(), 0u);
    EXPECT_EQ(split_corpus(corpus, 0.001, 7).heldout.size(), 1u);  // at least one when asked for any
    EXPECT_THROW(split_corpus(corpus, 1.0, 7), Error);
}

TEST(TrainSyntheticCorpus, IsDeterministicAndPredictable) {
    SyntheticCorpusOptions options;
    options.sequences = 300;
    options.vocab = 64;
    options.states = 16;
    options.seed = 3;
    options.prompt_length = 3;
    options.length = 40;
    const auto a = generate_synthetic_corpus(options);
    const auto b = generate_synthetic_corpus(options);
    ASSERT_EQ(a.size(), 300u);
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].tokens, b[i].tokens);
        EXPECT_EQ(a[i].prompt_length, 3);
        EXPECT_EQ(a[i].tokens.size(), 43u);
        for (int32_t t : a[i].tokens) EXPECT_TRUE(t >= 0 && t < 64);
    }
    options.seed = 4;
    EXPECT_NE(generate_synthetic_corpus(options)[0].tokens, a[0].tokens);

    // Predictable but not trivial: the ideal predictor beats the most frequent token by far, and is far from perfect.
    options.seed = 3;
    const HiddenMarkovSource source(options);
    const auto oracle = source.oracle(a);
    std::vector<int64_t> counts(64, 0);
    int64_t labelled = 0;
    for (const auto& s : a)
        for (size_t t = 3; t < s.tokens.size(); ++t, ++labelled) ++counts[static_cast<size_t>(s.tokens[t])];
    const double unigram = static_cast<double>(*std::max_element(counts.begin(), counts.end())) / labelled;
    EXPECT_EQ(oracle.tokens, 300 * 40);
    EXPECT_GT(oracle.accuracy, unigram + 0.2);
    EXPECT_LT(oracle.accuracy, 0.9);
    EXPECT_GT(oracle.loss, 0.3);
    EXPECT_LT(oracle.loss, std::log(64.0) - 1.5);

    // Written and read back through the file format.
    const auto path = std::filesystem::temp_directory_path() / ("cadenza-synthetic-" + std::to_string(::getpid()) + ".txt");
    write_token_corpus(path, a);
    const TokenCorpus read = load_token_corpus(path);
    ASSERT_EQ(read.sequences.size(), a.size());
    EXPECT_EQ(read.sequences[5].tokens, a[5].tokens);
    EXPECT_EQ(read.sequences[5].prompt_length, 3);
    std::filesystem::remove(path);
}

TEST(TrainLrSchedule, WarmupThenCosineToTheFloor) {
    const LrSchedule s(1e-3, 10, 110, 0.1);
    EXPECT_DOUBLE_EQ(s.at(0), 0.0);
    EXPECT_DOUBLE_EQ(s.at(1), 1e-4);
    EXPECT_DOUBLE_EQ(s.at(5), 5e-4);
    EXPECT_DOUBLE_EQ(s.at(10), 1e-3);
    EXPECT_NEAR(s.at(60), 0.5 * (1e-3 + 1e-4), 1e-15);  // halfway through the decay
    EXPECT_NEAR(s.at(35), 1e-4 + 0.9e-3 * 0.5 * (1 + std::cos(M_PI * 0.25)), 1e-15);
    EXPECT_DOUBLE_EQ(s.at(110), 1e-4);
    EXPECT_DOUBLE_EQ(s.at(500), 1e-4);
    for (int64_t step = 11; step < 110; ++step) EXPECT_LT(s.at(step + 1), s.at(step));

    const LrSchedule no_warmup(2.0, 0, 3, 0.0);
    EXPECT_DOUBLE_EQ(no_warmup.at(1), 2.0 * 0.5 * (1 + std::cos(M_PI / 3)));
    EXPECT_DOUBLE_EQ(no_warmup.at(3), 0.0);
    EXPECT_THROW(LrSchedule(1.0, 0, 0), Error);
}

TEST(TrainBatches, LabelsSkipPromptAndPadding) {
    const TokenCorpus corpus = parse("1 2 | 3 4 5\n6 7\n");
    std::vector<const TokenSequence*> all{&corpus.sequences[0], &corpus.sequences[1]};
    const auto batches = evaluation_batches(all, 8, 16);
    ASSERT_EQ(batches.size(), 1u);
    const Batch& b = batches[0];
    EXPECT_EQ(b.time(), 4);  // trimmed to the longest window (5 tokens)
    EXPECT_TRUE(b.inputs().equal(at::tensor({1, 2, 3, 4, 6, 7, 0, 0}, at::kLong).view({2, 4})));
    EXPECT_TRUE(b.labels(1).equal(at::tensor({-100, 3, 4, 5, 7, -100, -100, -100}, at::kLong).view({2, 4})));
    EXPECT_TRUE(b.labels(2).equal(at::tensor({3, 4, 5, -100, -100, -100, -100, -100}, at::kLong).view({2, 4})));
    EXPECT_TRUE(b.labels(5).equal(at::full({2, 4}, -100, at::kLong)));
    EXPECT_EQ(b.input_tokens(), 6);

    // Long sequences: windows at 0, T, 2T, ... so that each label appears once.
    const TokenCorpus long_corpus = parse("0 1 2 3 4 5 6 7 8 9\n");
    const auto windows = evaluation_batches({&long_corpus.sequences[0]}, 8, 4);
    ASSERT_EQ(windows.size(), 1u);
    EXPECT_EQ(windows[0].sequences, 3);
    EXPECT_EQ((windows[0].labels(1) != -100).sum().item<int64_t>(), 9);

    // The sampler is a pure function of (seed, step).
    const BatchSampler sampler({&long_corpus.sequences[0], &corpus.sequences[0]}, 4, 4, 11);
    EXPECT_TRUE(sampler.at_step(3).tokens.equal(sampler.at_step(3).tokens));
    bool differs = false;
    for (int step = 1; step < 10; ++step) differs |= !sampler.at_step(step).tokens.equal(sampler.at_step(step + 1).tokens);
    EXPECT_TRUE(differs);
}

TEST(TrainBatches, LengthBucketsDrawRowsOfSimilarLength) {
    // 400 sequences of lengths 1..400 in a shuffled order; the first token is the length.
    std::string text;
    std::vector<int> lengths(400);
    for (int i = 0; i < 400; ++i) lengths[static_cast<size_t>(i)] = (i * 151) % 400 + 1;
    for (int length : lengths) {
        for (int t = 0; t < length; ++t) text += std::to_string(length) + " ";
        text += "\n";
    }
    const TokenCorpus corpus = parse(text);
    std::vector<const TokenSequence*> all;
    for (const auto& sequence : corpus.sequences) all.push_back(&sequence);
    const BatchSampler uniform(all, 4, 512, 5);
    const BatchSampler bucketed(all, 4, 512, 5, true);
    int64_t uniform_spread = 0, bucketed_spread = 0;
    std::set<int64_t> seen;
    for (int step = 1; step <= 200; ++step) {
        auto spread = [](const Batch& batch) {
            const at::Tensor first = batch.tokens.select(1, 0);
            return first.max().item<int64_t>() - first.min().item<int64_t>();
        };
        const Batch b = bucketed.at_step(step);
        // 16 * batch = 64 neighbours in length order: lengths within 63 of each other.
        EXPECT_LE(spread(b), 63) << "step " << step;
        bucketed_spread += spread(b);
        uniform_spread += spread(uniform.at_step(step));
        for (int64_t row = 0; row < 4; ++row) seen.insert(b.tokens[row][0].item<int64_t>());
    }
    EXPECT_LT(bucketed_spread * 4, uniform_spread);  // far less padding than uniform draws
    EXPECT_GT(seen.size(), 300u);                    // and still most of the corpus
    EXPECT_TRUE(bucketed.at_step(7).tokens.equal(bucketed.at_step(7).tokens));
}

TEST(TrainProgress, FormatsDurationsAndRatesWithUnits) {
    EXPECT_EQ(format_duration(4.4), "4 s");
    EXPECT_EQ(format_duration(187), "3 min 07 s");
    EXPECT_EQ(format_duration(7500), "2 h 05 min");
    EXPECT_EQ(format_rate(950), "950 tok/s");
    EXPECT_EQ(format_rate(21340), "21.3k tok/s");
    EXPECT_EQ(format_rate(1.2e6), "1.20M tok/s");
}

}  // namespace
}  // namespace cadenza::training
