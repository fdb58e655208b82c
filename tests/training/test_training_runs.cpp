// Tiny training runs: the loss drops, a resumed run equals an uninterrupted
// one bit for bit, the shallow draft keeps its frozen layers equal to the
// target's, draft heads start as the identity and learn, the recurrent draft
// learns.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include "code_digit_head.h"
#include "draft_heads.h"
#include "hidden_state_heads.h"
#include "error.h"
#include "language_model_task.h"
#include "code_digit_output.h"
#include "losses.h"
#include "model_directory.h"
#include "recurrent_draft_task.h"
#include "safetensors.h"
#include "shallow_draft.h"
#include "speech_token_corpus.h"
#include "synthetic_corpus.h"
#include "thread_policy.h"
#include "token_groups.h"
#include "tiny_training.h"
#include "train_jobs.h"
#include "trainer.h"

namespace cadenza::training {
namespace {

std::filesystem::path fresh_directory(const std::string& name) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("cadenza-training-test-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    return path;
}

TokenCorpus tiny_corpus(int64_t sequences = 200) {
    SyntheticCorpusOptions o;
    o.sequences = sequences;
    o.vocab = 32;
    o.states = 8;
    o.seed = 5;
    o.prompt_length = 2;
    o.length = 24;
    TokenCorpus corpus;
    corpus.name = "tiny";
    corpus.sequences = generate_synthetic_corpus(o);
    return corpus;
}

// Prints metrics before and after training, for a failing test's reader.
void show(const std::string& what, const Metrics& before, const Metrics& after) {
    for (const auto& entry : after.entries())
        std::cout << "  " << what << ": " << Metrics::format(entry)
                  << (before.contains(entry.name) ? " (before: " + Metrics::format(before.at(entry.name)) + ")" : "")
                  << '\n';
}

std::map<std::string, std::vector<float>> read_all(const std::filesystem::path& file) {
    const safetensors::File f(file);
    std::map<std::string, std::vector<float>> tensors;
    for (const auto& info : f.tensors())
        if (info.dtype == safetensors::DType::F32) tensors[info.name] = f.read_f32(info.name);
    return tensors;
}

// A briefly trained target in `directory` (config.json + model.safetensors).
void write_trained_target(const std::filesystem::path& directory, int64_t layers) {
    LanguageModelTask task(tiny_config(layers), 9);
    std::ostringstream log;
    train(task, tiny_corpus(), tiny_options(300), directory, log);
}

// A task's metrics on the tenth of `corpus` that split_corpus holds out (seed 1), before training.
template <typename Task>
Metrics heldout_metrics(Task& task, const TokenCorpus& corpus) {
    at::NoGradGuard no_grad;
    Metrics metrics;
    for (const auto& batch : evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32)) task.evaluate(batch, metrics);
    return metrics;
}

class Training : public ::testing::Test {
protected:
    // One thread: as fast as two for these sizes, and unaffected by other work on a shared machine.
    void SetUp() override { llama::apply_thread_policy(1); }
};

TEST_F(Training, LanguageModelLossDrops) {
    const auto dir = fresh_directory("lm");
    const TokenCorpus corpus = tiny_corpus();
    LanguageModelTask task(tiny_config(), 3);
    TrainOptions options = tiny_options(300);
    options.holdout = 0.2;

    at::Tensor initial_loss;
    {
        at::NoGradGuard no_grad;
        const CorpusSplit split = split_corpus(corpus, options.holdout, options.seed);
        Metrics before;
        for (const auto& batch : evaluation_batches(split.heldout, 8, 32)) task.evaluate(batch, before);
        initial_loss = at::tensor(before.mean("loss"));
    }
    std::ostringstream log;
    const TrainResult result = train(task, corpus, options, dir, log);
    show("lm", Metrics(), result.heldout);
    EXPECT_TRUE(result.finished);
    EXPECT_EQ(result.last_step, 300);
    const double loss = result.heldout.mean("loss");
    EXPECT_NEAR(initial_loss.item<double>(), std::log(32.0), 0.3);  // random start: about uniform
    EXPECT_LT(loss, initial_loss.item<double>() - 1.0);
    EXPECT_LT(loss, result.heldout.mean("unigram baseline loss") - 0.3);
    EXPECT_GT(result.heldout.mean("accuracy"), result.heldout.mean("unigram baseline accuracy") + 0.1);
    EXPECT_GT(result.tokens_per_second, 0);

    // The output is a model directory the LLaMA library loads.
    const llama::LlamaWeights saved = load_model_directory(dir);
    EXPECT_EQ(saved.config.num_hidden_layers, 2);
    EXPECT_TRUE(saved.norm.equal(task.model().weights().norm.detach()));
    EXPECT_TRUE(std::filesystem::exists(dir / "training_state.safetensors"));

    // Without --resume an existing run is not overwritten.
    LanguageModelTask again(tiny_config(), 3);
    EXPECT_THROW(train(again, corpus, options, dir, log), Error);
}

TEST_F(Training, CodeDigitsTrainTheirVectorsSaveThePlainTableAndResumeOnlyWithThem) {
    const auto dir = fresh_directory("code-digits");
    const TokenCorpus corpus = tiny_corpus();
    auto with_digits = [](LanguageModelTask& task) {
        task.set_code_digits(CodeDigitEmbedding({4, 4, 2}, 0, 32, 32, at::TensorOptions(at::kFloat)));
    };
    LanguageModelTask task(tiny_config(), 3);
    with_digits(task);
    std::ostringstream log;
    const TrainResult result = train(task, corpus, tiny_options(100), dir, log);
    EXPECT_LT(result.heldout.mean("loss"), std::log(32.0) - 0.5);
    double digit_mass = 0;
    for (const auto& p : task.parameters())
        if (p.name.rfind("cadenza.code_digit_vectors.", 0) == 0) digit_mass += p.tensor.abs().sum().item<double>();
    EXPECT_GT(digit_mass, 1.0);

    // The saved model is a plain LLaMA whose table holds the digit vectors:
    // it scores the held-out sequences exactly as the trained task did.
    LanguageModelTask reloaded(load_model_directory(dir), 64);
    Metrics metrics;
    {
        at::NoGradGuard no_grad;
        const CorpusSplit split = split_corpus(corpus, tiny_options(100).holdout, tiny_options(100).seed);
        for (const auto& batch : evaluation_batches(split.heldout, 8, 32)) reloaded.evaluate(batch, metrics);
    }
    EXPECT_NEAR(metrics.mean("loss"), result.heldout.mean("loss"), 1e-4);

    TrainOptions more = tiny_options(110);
    more.resume = true;
    LanguageModelTask plain(tiny_config(), 3);
    EXPECT_THROW(train(plain, corpus, more, dir, log), Error);
    LanguageModelTask resumed(tiny_config(), 3);
    with_digits(resumed);
    EXPECT_EQ(train(resumed, corpus, more, dir, log).last_step, 110);
}

TEST_F(Training, ResumeEqualsUninterruptedBitForBit) {
    const TokenCorpus corpus = tiny_corpus();
    const auto whole = fresh_directory("whole"), parts = fresh_directory("parts");
    std::ostringstream log;
    {
        LanguageModelTask task(tiny_config(), 4);
        TrainOptions options = tiny_options(12);
        options.checkpoint_every = 5;
        train(task, corpus, options, whole, log);
    }
    {
        LanguageModelTask task(tiny_config(), 4);
        TrainOptions options = tiny_options(12);
        options.checkpoint_every = 5;
        options.stop_after = 7;
        const TrainResult first = train(task, corpus, options, parts, log);
        EXPECT_EQ(first.last_step, 7);
        EXPECT_FALSE(first.finished);
    }
    {
        LanguageModelTask task(tiny_config(), 99);  // other initial weights: the checkpoint replaces them
        TrainOptions options = tiny_options(12);
        options.checkpoint_every = 5;
        options.resume = true;
        const TrainResult second = train(task, corpus, options, parts, log);
        EXPECT_EQ(second.first_step, 7);
        EXPECT_TRUE(second.finished);
    }
    const auto a = read_all(whole / "model.safetensors"), b = read_all(parts / "model.safetensors");
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, values] : a) EXPECT_EQ(values, b.at(name)) << name;
    const auto sa = read_all(whole / "training_state.safetensors"), sb = read_all(parts / "training_state.safetensors");
    ASSERT_EQ(sa.size(), sb.size());
    for (const auto& [name, values] : sa) EXPECT_EQ(values, sb.at(name)) << name;

    // A resume with other settings is refused.
    LanguageModelTask task(tiny_config(), 4);
    TrainOptions options = tiny_options(12);
    options.resume = true;
    options.batch = 4;
    try {
        train(task, corpus, options, parts, log);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cadenza.train.batch"), std::string::npos) << e.what();
    }
}

TEST_F(Training, ShallowDraftKeepsFrozenLayersEqualToTheTarget) {
    const auto target_dir = fresh_directory("draft-target"), draft_dir = fresh_directory("draft");
    write_trained_target(target_dir, 3);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    ShallowDraftLayout layout{{0, 2, 1}, {0}};
    ShallowDraftTask task(target, layout, target_dir, 0.5);
    TrainOptions options = tiny_options(30);
    options.lr = 2e-3;

    const TokenCorpus corpus = tiny_corpus();
    const Metrics before = heldout_metrics(task, corpus);
    std::ostringstream log;
    const TrainResult result = train(task, corpus, options, draft_dir, log);
    show("draft", before, result.heldout);
    EXPECT_LT(result.heldout.mean("loss"), before.mean("loss"));
    EXPECT_LT(result.heldout.mean("KL(target || draft)"), before.mean("KL(target || draft)"));
    EXPECT_TRUE(result.heldout.contains("agreement with the target's top-1"));

    const safetensors::File file(draft_dir / "model.safetensors");
    EXPECT_EQ(file.metadata().at("cadenza.draft_layers"), "0,2,1");
    EXPECT_EQ(file.metadata().at("cadenza.target"), target_dir.string());
    const llama::LlamaWeights draft = load_model_directory(draft_dir);
    ASSERT_EQ(draft.config.num_hidden_layers, 3);
    EXPECT_FALSE(draft.config.tie_word_embeddings);
    auto equal_layers = [](const llama::LayerWeights& x, const llama::LayerWeights& y) {
        return x.q_proj.equal(y.q_proj) && x.k_proj.equal(y.k_proj) && x.v_proj.equal(y.v_proj) &&
               x.o_proj.equal(y.o_proj) && x.gate_proj.equal(y.gate_proj) && x.up_proj.equal(y.up_proj) &&
               x.down_proj.equal(y.down_proj) && x.input_norm.equal(y.input_norm) &&
               x.post_attention_norm.equal(y.post_attention_norm);
    };
    // Frozen: draft layers 1 and 2 (target layers 2 and 1) and the embedding.
    EXPECT_TRUE(equal_layers(draft.layers[1], target.layers[2]));
    EXPECT_TRUE(equal_layers(draft.layers[2], target.layers[1]));
    EXPECT_TRUE(draft.embed_tokens.equal(target.embed_tokens));
    // Trained: draft layer 0, the norm and the (untied) head.
    EXPECT_FALSE(draft.layers[0].q_proj.equal(target.layers[0].q_proj));
    EXPECT_FALSE(draft.lm_head.equal(target.lm_head));
    // And the target on disk is untouched.
    const llama::LlamaWeights target_after = load_model_directory(target_dir);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(equal_layers(target_after.layers[i], target.layers[i]));

    EXPECT_THROW(build_shallow_draft(target, {{0, 3}, {0}}), Error);  // no target layer 3
    EXPECT_THROW(build_shallow_draft(target, {{0, 1}, {2}}), Error);  // no draft layer 2
    EXPECT_THROW(build_shallow_draft(target, {{0, 1}, {1, 1}}), Error);
    EXPECT_EQ(parse_index_list("0, 1,11", "--layers"), (std::vector<int64_t>{0, 1, 11}));
    EXPECT_THROW(parse_index_list("0,,1", "--layers"), Error);
    EXPECT_THROW(parse_index_list("-1", "--layers"), Error);
}

// --eval-every: a row of held-out figures every K steps, and the same
// weights as a run without it.
TEST_F(Training, EvaluationsDuringTheRunWriteTheCurveAndChangeNothing) {
    const TokenCorpus corpus = tiny_corpus();
    const auto plain = fresh_directory("curve-plain"), curved = fresh_directory("curve");
    std::ostringstream log;
    {
        LanguageModelTask task(tiny_config(), 4);
        train(task, corpus, tiny_options(12), plain, log);
    }
    LanguageModelTask task(tiny_config(), 4);
    TrainOptions options = tiny_options(12);
    options.eval_every = 4;
    const TrainResult result = train(task, corpus, options, curved, log);
    const auto a = read_all(plain / "model.safetensors"), b = read_all(curved / "model.safetensors");
    for (const auto& [name, values] : a) EXPECT_EQ(values, b.at(name)) << name;

    const auto curve = heldout_curve_path(curved / "training_state.safetensors");
    EXPECT_EQ(curve, curved / "heldout.tsv");
    EXPECT_EQ(heldout_curve_path("x/mtp8.training_state.safetensors"), std::filesystem::path("x/mtp8.heldout.tsv"));
    std::ifstream in(curve);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 4u);  // the header, steps 4, 8 and 12
    EXPECT_EQ(lines[0].rfind("step\tloss\t", 0), 0u) << lines[0];
    EXPECT_EQ(lines[3].rfind("12\t", 0), 0u) << lines[3];
    // The last row is the final evaluation's loss.
    const std::string last_loss = lines[3].substr(3, lines[3].find('\t', 3) - 3);
    EXPECT_NEAR(std::stod(last_loss), result.heldout.mean("loss"), 1e-12);
    EXPECT_NE(log.str().find("step 8 held out: loss "), std::string::npos) << log.str();
}

TEST_F(Training, DraftHeadsStartAsIdentityAndLearn) {
    const auto target_dir = fresh_directory("heads-target"), out = fresh_directory("heads");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);

    for (const std::string kind : {"mtp", "medusa"}) {
        DraftHeadsTask task(target, kind, 3, target_dir);
        const TokenCorpus corpus = tiny_corpus();
        const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
        Metrics before;
        {
            at::NoGradGuard no_grad;
            const at::Tensor hidden = task.target().forward_sequence(heldout[0].inputs());
            for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(task.heads().apply(i, hidden).equal(hidden)) << kind << i;
            for (const auto& batch : heldout) task.evaluate(batch, before);
        }
        const auto file = out / (kind + ".safetensors");
        std::ostringstream log;
        const TrainResult result = train(task, corpus, tiny_options(100), file, log);
        show(kind, before, result.heldout);
        for (int64_t i = 0; i < 3; ++i) {
            const std::string name = "head " + std::to_string(i) + " (t+" + std::to_string(i + 2) + ") loss";
            EXPECT_LT(result.heldout.mean(name), before.mean(name) - 0.05) << kind << " " << name;
        }
        // The target's own predictions do not move.
        EXPECT_DOUBLE_EQ(result.heldout.mean("target (t+1) loss"), before.mean("target (t+1) loss"));

        const safetensors::File saved(file);
        EXPECT_EQ(saved.metadata().at("cadenza.kind"), kind);
        EXPECT_EQ(saved.metadata().at("cadenza.heads"), "3");
        EXPECT_EQ(saved.metadata().at("cadenza.hidden_size"), "32");
        EXPECT_EQ(saved.info("heads.2.linear.weight").shape, (safetensors::Shape{32, 32}));
        EXPECT_EQ(saved.info("heads.2.linear.bias").shape, (safetensors::Shape{32}));
        EXPECT_FALSE(saved.contains("heads.3.linear.weight"));
        const DraftHeads loaded = DraftHeads::load(file);
        EXPECT_TRUE(loaded.weights[1].equal(task.heads().weights[1].detach()));
        EXPECT_TRUE(std::filesystem::exists(out / (kind + ".training_state.safetensors")));
    }
    EXPECT_DOUBLE_EQ(head_loss_weight("mtp", 3), 1.0);
    EXPECT_DOUBLE_EQ(head_loss_weight("medusa", 0), 0.8);
    EXPECT_NEAR(head_loss_weight("medusa", 2), 0.512, 1e-15);
}

// Code-digit output heads on the tiny vocabulary: 24 "codes" (levels 3, 4, 2)
// from token 8 of 32.
drafts::CodeGrid tiny_grid() { return drafts::CodeGrid::parse("3,4,2", 8, 32, "test"); }

TEST_F(Training, CodeDigitHeadsLearnAndSaveWhatTheDrafterReads) {
    const auto target_dir = fresh_directory("digit-heads-target"), out = fresh_directory("digit-heads");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    for (const double distill : {0.0, 0.5}) {
        DraftHeadsTask task(target, "mtp", 2, target_dir, &grid, distill);
        ASSERT_EQ(task.heads().digit_weights.size(), 2u);
        EXPECT_EQ(task.heads().digit_weights[0].sizes(), (at::IntArrayRef{grid.head_rows(), 32}));
        const TokenCorpus corpus = tiny_corpus();
        const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
        Metrics before;
        {
            at::NoGradGuard no_grad;
            for (const auto& batch : heldout) task.evaluate(batch, before);
        }
        const auto file = out / ("heads-" + std::to_string(distill) + ".safetensors");
        std::ostringstream log;
        const TrainResult result = train(task, corpus, tiny_options(100), file, log);
        show("code-digit heads", before, result.heldout);
        for (int64_t i = 0; i < 2; ++i) {
            const std::string prefix = "head " + std::to_string(i) + " (t+" + std::to_string(i + 2) + ") ";
            EXPECT_LT(result.heldout.mean(prefix + "loss"), before.mean(prefix + "loss") - 0.05) << prefix << distill;
            EXPECT_GT(result.heldout.mean(prefix + "acceptance"), before.mean(prefix + "acceptance")) << prefix << distill;
            EXPECT_LE(result.heldout.mean(prefix + "acceptance"), 1.0);
        }
        const safetensors::File saved(file);
        EXPECT_EQ(saved.metadata().at("cadenza.output"), "code_digits");
        EXPECT_EQ(saved.metadata().at("cadenza.code_levels"), "3,4,2");
        EXPECT_EQ(saved.metadata().at("cadenza.code_offset"), "8");
        // The drafter's reading of the file gives the trained heads' distributions.
        const drafts::DraftHeads inference(file, target_dir);
        ASSERT_NE(inference.code_digits(), nullptr);
        at::manual_seed(4);
        const at::Tensor hidden = at::randn({5, 32});
        for (int64_t i = 0; i < 2; ++i) {
            const at::Tensor trained = task.heads().vocabulary_logits(i, task.heads().apply(i, hidden), task.target());
            const at::Tensor read = inference.head_logits(i, inference.states(hidden, i, 1).squeeze(1));
            EXPECT_LT((trained - read).abs().max().item<double>(), 1e-5) << i;
        }
        const DraftHeads loaded = DraftHeads::load(file);
        ASSERT_TRUE(loaded.code_digits);
        EXPECT_TRUE(loaded.digit_weights[1].equal(task.heads().digit_weights[1].detach()));

        // A second phase starts from the file: the same heads, or an error naming what differs.
        DraftHeadsTask second(target, "mtp", 2, target_dir, &grid, distill);
        second.initialize_from(file);
        for (size_t i = 0; i < 2; ++i) {
            EXPECT_TRUE(second.heads().weights[i].equal(task.heads().weights[i].detach())) << i;
            EXPECT_TRUE(second.heads().digit_biases[i].equal(task.heads().digit_biases[i].detach())) << i;
        }
        const auto refusal = [&](DraftHeadsTask other) {
            try {
                other.initialize_from(file);
            } catch (const Error& error) {
                return std::string(error.what());
            }
            return std::string();
        };
        EXPECT_NE(refusal(DraftHeadsTask(target, "medusa", 2, target_dir, &grid)).find("its kind is mtp"),
                  std::string::npos);
        EXPECT_NE(refusal(DraftHeadsTask(target, "mtp", 3, target_dir, &grid)).find("it has 2 heads, not --heads 3"),
                  std::string::npos);
        EXPECT_NE(refusal(DraftHeadsTask(target, "mtp", 2, target_dir)).find("its output is code digits"),
                  std::string::npos);
    }
}

// The recurrent draft: every step learns, the file holds what the drafter
// reads, the walk is teacher-forced on the batch's tokens (step k reads token
// t + k), and a second phase starts from the file or names what differs.
TEST_F(Training, RecurrentDraftLearnsAndSavesWhatTheDrafterReads) {
    const auto target_dir = fresh_directory("recurrent-target"), out = fresh_directory("recurrent");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    RecurrentDraftTask task(target, 48, 3, grid, target_dir, 0.5, {}, 7);
    EXPECT_EQ(task.draft().description(), "cell 48 on hidden 32, trained 3 steps deep, code digits 3,4,2 from token 8");
    const TokenCorpus corpus = tiny_corpus();
    const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    Metrics before;
    {
        at::NoGradGuard no_grad;
        for (const auto& batch : heldout) task.evaluate(batch, before);
    }
    const auto file = out / "recurrent.safetensors";
    std::ostringstream log;
    const TrainResult result = train(task, corpus, tiny_options(100), file, log);
    show("recurrent draft", before, result.heldout);
    for (int64_t k = 1; k <= 3; ++k) {
        const std::string prefix = "step " + std::to_string(k) + " (t+" + std::to_string(k + 1) + ") ";
        EXPECT_LT(result.heldout.mean(prefix + "loss"), before.mean(prefix + "loss") - 0.05) << prefix;
        EXPECT_GT(result.heldout.mean(prefix + "acceptance"), before.mean(prefix + "acceptance")) << prefix;
        EXPECT_LE(result.heldout.mean(prefix + "acceptance"), 1.0);
    }
    EXPECT_TRUE(std::filesystem::exists(out / "recurrent.training_state.safetensors"));

    const drafts::RecurrentDraft loaded = drafts::RecurrentDraft::load(file, 32);
    EXPECT_EQ(loaded.description(), task.draft().description());
    const auto trained_tensors = task.draft().named_tensors();
    const auto loaded_tensors = loaded.named_tensors();
    for (size_t i = 0; i < trained_tensors.size(); ++i)
        EXPECT_TRUE(loaded_tensors[i].second.equal(trained_tensors[i].second.detach())) << trained_tensors[i].first;
    try {
        drafts::RecurrentDraft::load(file, 33);
        ADD_FAILURE() << "a draft for another vocabulary loaded";
    } catch (const std::exception& error) {
        EXPECT_NE(std::string(error.what()).find("its vocabulary has 32 tokens, the target's 33"), std::string::npos)
            << error.what();
    }

    // One row walked by hand, as the drafter walks it: from h_t, read x_{t+1}, then x_{t+2}.
    {
        at::NoGradGuard no_grad;
        const Batch& batch = heldout.front();
        const at::Tensor hidden = task.target().forward_sequence(batch.inputs());
        const at::Tensor tokens = batch.tokens[0];
        const int64_t t = 10;
        at::Tensor state = hidden[0][t];
        for (int64_t k = 1; k <= 2; ++k)
            state = loaded.advance(state, target.embed_tokens[tokens[t + k].item<int64_t>()]);
        const at::Tensor by_hand = loaded.digits->log_probabilities(loaded.digit_logits(state));
        // The task's batched walk (matrix products) reads the same tokens: the same row.
        const at::Tensor batched_state = task.walk(hidden, batch)[1][t];
        EXPECT_LT((loaded.digits->log_probabilities(loaded.digit_logits(batched_state)) - by_hand).abs().max().item<double>(),
                  1e-5);
    }

    RecurrentDraftTask second(target, 48, 3, grid, target_dir, 0.5, {}, 8);
    second.initialize_from(file);
    EXPECT_TRUE(second.draft().out_weight.equal(task.draft().out_weight.detach()));
    // The cell is shared by its steps: a shallower run starts from a deeper draft, a deeper one does not.
    RecurrentDraftTask shallower(target, 48, 2, grid, target_dir, 0.5, {}, 7);
    shallower.initialize_from(file);
    EXPECT_TRUE(shallower.draft().out_weight.equal(task.draft().out_weight.detach()));
    try {
        RecurrentDraftTask(target, 48, 4, grid, target_dir, 0.5, {}, 7).initialize_from(file);
        ADD_FAILURE() << "a shallower draft started a deeper run";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("trained 3 steps deep"), std::string::npos) << error.what();
    }
    try {
        RecurrentDraftTask(target, 40, 2, grid, target_dir, 0.5, {}, 7).initialize_from(file);
        ADD_FAILURE() << "a draft with another cell was taken";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("cell 48"), std::string::npos) << error.what();
    }
}

// Table scoring (train recurrent --table-scoring): the states learn to be
// scored by the target's output table as well, the held-out metrics report
// that distribution's acceptance whole and over the head's candidates, and
// the file says the draft was trained so (draft.recurrent's `candidates`).
TEST_F(Training, RecurrentDraftLearnsToBeScoredByTheTargetsTable) {
    const auto target_dir = fresh_directory("recurrent-table-target"), out = fresh_directory("recurrent-table");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const TokenCorpus corpus = tiny_corpus();
    const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    RecurrentDraftTask task(target, 48, 2, tiny_grid(), target_dir, 0.5, {0.7, 0.9}, 7);
    task.score_with_target_table();
    Metrics before;
    {
        at::NoGradGuard no_grad;
        for (const auto& batch : heldout) task.evaluate(batch, before);
    }
    std::ostringstream log;
    const TrainResult result = train(task, corpus, tiny_options(100), out / "recurrent.safetensors", log);
    show("table scoring", before, result.heldout);
    for (int64_t k = 1; k <= 2; ++k) {
        const std::string step = "step " + std::to_string(k) + " (t+" + std::to_string(k + 1) + ") ";
        EXPECT_GT(result.heldout.mean(step + "table acceptance"), before.mean(step + "table acceptance") + 0.02) << step;
        EXPECT_GT(result.heldout.mean(step + "acceptance"), before.mean(step + "acceptance")) << step;
        const double candidates = result.heldout.mean(step + "top-16 candidates acceptance");
        EXPECT_GT(candidates, 0.0) << step;
        EXPECT_LE(candidates, 1.0) << step;
    }
    EXPECT_TRUE(drafts::RecurrentDraft::load(out / "recurrent.safetensors", 32).table_scored);
    RecurrentDraftTask plain(target, 48, 2, tiny_grid(), target_dir, 0.5, {0.7, 0.9}, 7);
    EXPECT_FALSE(plain.draft().table_scored);
}

// Under the pipeline's sampling (train recurrent --sampling-temperature
// 0.7 --sampling-top-p 0.9) the held-out acceptance is measured against the
// target's tempered nucleus, and the draft learns it with either
// distillation term, total variation alone included.
TEST_F(Training, RecurrentDraftLearnsUnderThePipelinesSamplingWithEitherDivergence) {
    const auto target_dir = fresh_directory("recurrent-sampling-target");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    const TokenCorpus corpus = tiny_corpus();
    const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    auto evaluate = [&](RecurrentDraftTask& task) {
        Metrics metrics;
        at::NoGradGuard no_grad;
        for (const auto& batch : heldout) task.evaluate(batch, metrics);
        return metrics;
    };
    const SamplingSettings pipeline{0.7, 0.9};
    RecurrentDraftTask plain(target, 48, 2, grid, target_dir, 0.5, {}, 7);
    RecurrentDraftTask sampled(target, 48, 2, grid, target_dir, 0.5, pipeline, 7);
    const std::string first = "step 1 (t+2) acceptance";
    EXPECT_GT(std::fabs(evaluate(plain).mean(first) - evaluate(sampled).mean(first)), 1e-4)
        << "the sampling settings did not reach the held-out acceptance";
    for (const auto& [weight, divergence, name] :
         {std::tuple{0.5, DistillDivergence::cross_entropy, "cross-entropy"},
          std::tuple{1.0, DistillDivergence::total_variation, "total variation alone"}}) {
        RecurrentDraftTask task(target, 48, 2, grid, target_dir, weight, pipeline, 7, divergence);
        const Metrics before = evaluate(task);
        const auto out = fresh_directory(std::string("recurrent-sampling-") + (weight < 1 ? "ce" : "tv"));
        std::ostringstream log;
        const TrainResult result = train(task, corpus, tiny_options(100), out / "recurrent.safetensors", log);
        show(name, before, result.heldout);
        for (int64_t k = 1; k <= 2; ++k) {
            const std::string acceptance = "step " + std::to_string(k) + " (t+" + std::to_string(k + 1) + ") acceptance";
            EXPECT_GT(result.heldout.mean(acceptance), before.mean(acceptance) + 0.02) << name << ", " << acceptance;
        }
    }
}

// Group total variation (--distill-loss group-total-variation): the draft
// learns what acceptor.pcg keeps, and the held-out metrics report it, never
// below the token-level acceptance since a group only adds mass.
TEST_F(Training, RecurrentDraftLearnsPcgsGroupAcceptance) {
    const auto target_dir = fresh_directory("recurrent-groups-target"), groups_dir = fresh_directory("recurrent-groups");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    pcg::TokenGroups groups;
    groups.vocab_size = 32;
    for (uint32_t code = 8; code + 2 < 32; code += 2) groups.add_group({code, code + 1, code + 2});
    const auto groups_file = groups_dir / "groups.cdzgrp";
    pcg::write_token_groups(groups_file, groups);

    const TokenCorpus corpus = tiny_corpus();
    const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    RecurrentDraftTask task(target, 48, 2, tiny_grid(), target_dir, 1.0, {0.7, 0.9}, 7,
                            DistillDivergence::group_total_variation);
    std::ostringstream log;
    EXPECT_THROW(train(task, corpus, tiny_options(1), groups_dir / "no-groups.safetensors", log), Error);
    task.set_groups(groups_file);
    Metrics before;
    {
        at::NoGradGuard no_grad;
        for (const auto& batch : heldout) task.evaluate(batch, before);
    }
    const TrainResult result = train(task, corpus, tiny_options(100), groups_dir / "recurrent.safetensors", log);
    show("group total variation", before, result.heldout);
    for (int64_t k = 1; k <= 2; ++k) {
        const std::string step = "step " + std::to_string(k) + " (t+" + std::to_string(k + 1) + ") ";
        EXPECT_GT(result.heldout.mean(step + "group acceptance"), before.mean(step + "group acceptance") + 0.02) << step;
        EXPECT_GE(result.heldout.mean(step + "group acceptance"), result.heldout.mean(step + "acceptance")) << step;
    }
    EXPECT_THROW(task.set_groups(groups_dir / "missing.cdzgrp"), Error);
}

// The MTP paper's Eq. 3: heads trained with the model. Both move, the heads
// learn, the model still predicts its next token, and the heads are saved
// beside the model in a file the drafter reads; resuming needs the heads.
TEST_F(Training, JointMtpHeadsTrainWithTheModelAndAreSavedBesideIt) {
    const auto target_dir = fresh_directory("joint-target"), heads_dir = fresh_directory("joint-heads"),
               out = fresh_directory("joint");
    write_trained_target(target_dir, 2);
    const drafts::CodeGrid grid = tiny_grid();
    const auto heads_file = heads_dir / "mtp.safetensors";
    DraftHeadsTask(load_model_directory(target_dir), "mtp", 2, target_dir, &grid).heads().save(heads_file);

    const TokenCorpus corpus = tiny_corpus();
    const auto heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    LanguageModelTask task(load_model_directory(target_dir), 64);
    task.set_mtp_heads(DraftHeads::load(heads_file));
    Metrics before;
    {
        at::NoGradGuard no_grad;
        for (const auto& batch : heldout) task.evaluate(batch, before);
    }
    const at::Tensor norm_before = task.model().weights().norm.detach().clone();
    std::ostringstream log;
    const TrainResult result = train(task, corpus, tiny_options(60), out, log);
    show("joint", before, result.heldout);
    for (int64_t i = 0; i < 2; ++i) {
        const std::string prefix = "head " + std::to_string(i) + " (t+" + std::to_string(i + 2) + ") ";
        EXPECT_LT(result.heldout.mean(prefix + "loss"), before.mean(prefix + "loss") - 0.05) << prefix;
    }
    EXPECT_LT(result.heldout.mean("loss"), before.mean("loss") + 0.1);  // the next token stays learned
    EXPECT_FALSE(task.model().weights().norm.detach().equal(norm_before));  // the heads' loss reaches the model

    // The heads' file, beside the model, is what draft.mtp reads with the trained model.
    const auto saved_heads = LanguageModelTask::mtp_heads_file(out);
    const DraftHeads loaded = DraftHeads::load(saved_heads);
    EXPECT_TRUE(loaded.weights[1].equal(task.mtp_heads().weights[1].detach()));
    EXPECT_TRUE(loaded.digit_weights[0].equal(task.mtp_heads().digit_weights[0].detach()));
    const drafts::DraftHeads inference(saved_heads, out);
    at::manual_seed(4);
    const at::Tensor hidden = at::randn({5, 32});
    const at::Tensor trained = task.mtp_heads().vocabulary_logits(1, task.mtp_heads().apply(1, hidden), task.model());
    EXPECT_LT((trained - inference.head_logits(1, inference.states(hidden, 1, 1).squeeze(1))).abs().max().item<double>(),
              1e-5);

    // A resume must train the same heads.
    TrainOptions more = tiny_options(70);
    more.resume = true;
    LanguageModelTask without(load_model_directory(target_dir), 64);
    EXPECT_THROW(train(without, corpus, more, out, log), Error);
    LanguageModelTask resumed(load_model_directory(target_dir), 64);
    resumed.set_mtp_heads(DraftHeads::load(heads_file));
    EXPECT_EQ(train(resumed, corpus, more, out, log).last_step, 70);

    // Heads of another kind or size are refused.
    LanguageModelTask other(load_model_directory(target_dir), 64);
    EXPECT_THROW(other.set_mtp_heads(DraftHeads::identity("medusa", 2, 32)), Error);
    EXPECT_THROW(other.set_mtp_heads(DraftHeads::identity("mtp", 2, 16)), Error);
    EXPECT_THROW(other.set_mtp_heads(DraftHeads::load(heads_file), 0.0), Error);
    // A weight below 1 is a setting of the run: resuming needs the same.
    LanguageModelTask lighter(load_model_directory(target_dir), 64);
    lighter.set_mtp_heads(DraftHeads::load(heads_file), 0.25);
    EXPECT_THROW(train(lighter, corpus, more, out, log), Error);
}

TEST_F(Training, ShallowDraftWithACodeDigitHeadLearnsAndStoresNoVocabularyHead) {
    const auto target_dir = fresh_directory("digit-draft-target"), draft_dir = fresh_directory("digit-draft");
    write_trained_target(target_dir, 3);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    ShallowDraftTask task(target, {{0, 2}, {0, 1}}, target_dir, 0.5, &grid);
    const TokenCorpus corpus = tiny_corpus();
    const Metrics before = heldout_metrics(task, corpus);
    TrainOptions options = tiny_options(60);
    options.lr = 2e-3;
    std::ostringstream log;
    const TrainResult result = train(task, corpus, options, draft_dir, log);
    show("code-digit draft", before, result.heldout);
    EXPECT_LT(result.heldout.mean("loss"), before.mean("loss"));
    EXPECT_GT(result.heldout.mean("acceptance, sum min(p_target, q_draft)"),
              before.mean("acceptance, sum min(p_target, q_draft)"));
    const safetensors::File file(draft_dir / "model.safetensors");
    EXPECT_EQ(file.metadata().at("cadenza.output"), "code_digits");
    EXPECT_FALSE(file.contains("lm_head.weight"));
    EXPECT_EQ(file.info("digits.weight").shape, (safetensors::Shape{grid.head_rows(), 32}));
    EXPECT_TRUE(load_model_directory(draft_dir).config.tie_word_embeddings);
}

TEST_F(Training, ShallowDraftStartsASecondPhaseFromAnEarlierDraftAndRefusesAnotherOne) {
    const auto target_dir = fresh_directory("phase-draft-target"), draft_dir = fresh_directory("phase-draft");
    write_trained_target(target_dir, 3);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    const TokenCorpus corpus = tiny_corpus();
    const std::vector<Batch> heldout = evaluation_batches(split_corpus(corpus, 0.1, 1).heldout, 8, 32);
    auto heldout_loss = [&](ShallowDraftTask& task) {
        at::NoGradGuard no_grad;
        Metrics metrics;
        for (const auto& batch : heldout) task.evaluate(batch, metrics);
        return metrics.mean("loss");
    };
    ShallowDraftTask first(target, {{0, 2}, {0, 1}}, target_dir, 0.5, &grid);
    std::ostringstream log;
    const TrainResult first_result = train(first, corpus, tiny_options(30), draft_dir, log);

    ShallowDraftTask second(target, {{0, 2}, {0, 1}}, target_dir, 0.5, &grid);
    EXPECT_NE(heldout_loss(second), heldout_loss(first));
    second.initialize_from(draft_dir);
    EXPECT_EQ(heldout_loss(second), heldout_loss(first));
    // A second phase with new batches keeps the first phase's held-out split
    // with --split-seed (the target's own loss on it is the same); without, not.
    TrainOptions phase_two = tiny_options(5);
    phase_two.seed = tiny_options(30).seed + 1;
    phase_two.split_seed = tiny_options(30).seed;
    const TrainResult second_result = train(second, corpus, phase_two, fresh_directory("phase-draft-2"), log);
    EXPECT_EQ(second_result.heldout.mean("target loss"), first_result.heldout.mean("target loss"));
    phase_two.split_seed.reset();
    ShallowDraftTask third(target, {{0, 2}, {0, 1}}, target_dir, 0.5, &grid);
    const TrainResult third_result = train(third, corpus, phase_two, fresh_directory("phase-draft-3"), log);
    EXPECT_NE(third_result.heldout.mean("target loss"), first_result.heldout.mean("target loss"));

    ShallowDraftTask other_layers(target, {{0, 1}, {0, 1}}, target_dir, 0.5, &grid);
    EXPECT_THROW(other_layers.initialize_from(draft_dir), Error);
    ShallowDraftTask vocabulary_head(target, {{0, 2}, {0, 1}}, target_dir, 0.5);
    EXPECT_THROW(vocabulary_head.initialize_from(draft_dir), Error);
}

// --train-layers none: every target layer and the final norm stay the
// target's bit for bit, only the code-digit head learns (a head for the
// target's own last hidden state, draft.shallow's `digit_head`).
TEST_F(Training, ShallowDraftWithNoTrainedLayerTrainsTheHeadAloneOnTheTargetsHiddenState) {
    const auto target_dir = fresh_directory("head-alone-target"), draft_dir = fresh_directory("head-alone");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    ShallowDraftTask task(target, {{0, 1}, {}}, target_dir, 1.0, &grid);
    for (const auto& parameter : task.parameters())
        EXPECT_EQ(parameter.name.rfind("digits.", 0), 0u) << parameter.name << " is trained";
    const TokenCorpus corpus = tiny_corpus();
    const Metrics before = heldout_metrics(task, corpus);
    TrainOptions options = tiny_options(40);
    options.lr = 3e-3;
    std::ostringstream log;
    const TrainResult result = train(task, corpus, options, draft_dir, log);
    show("head alone", before, result.heldout);
    EXPECT_LT(result.heldout.mean("KL(target || draft)"), before.mean("KL(target || draft)"));
    const auto trained = read_all(draft_dir / "model.safetensors");
    const auto original = read_all(target_dir / "model.safetensors");
    for (const auto& [name, values] : trained) {
        if (name.rfind("digits.", 0) == 0) continue;
        ASSERT_TRUE(original.count(name)) << name;
        EXPECT_EQ(values, original.at(name)) << name << " moved";
    }
}

// `cadenza model digit-head`: the factorized form of the target's table,
// with the grid's metadata draft.shallow reads.
TEST_F(Training, DigitHeadJobWritesTheFactorizedTableWithItsGrid) {
    const auto target_dir = fresh_directory("digit-head-target"), out_dir = fresh_directory("digit-head");
    write_trained_target(target_dir, 2);
    const std::filesystem::path layout = out_dir / "layout.json";
    SpeechTokenLayout tokens;  // the tiny grid's codes 8..31 of 32, the start and end tokens below them
    tokens.text_token_count = 6;
    tokens.audio_start_token = 6;
    tokens.end_token = 7;
    tokens.audio_token_offset = 8;
    tokens.audio_token_count = 24;
    std::ofstream(layout) << tokens.to_json();
    DigitHeadJob job;
    job.target = target_dir;
    job.code_digits = "3,4,2";
    job.layout = layout;
    job.output = out_dir / "head.safetensors";
    std::ostringstream out;
    run_digit_head_job(job, out);
    const safetensors::File file(job.output);
    EXPECT_EQ(file.metadata().at("cadenza.output"), "code_digits");
    EXPECT_EQ(file.metadata().at("cadenza.code_levels"), "3,4,2");
    EXPECT_EQ(file.metadata().at("cadenza.code_offset"), "8");
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const CodeDigitOutput expected = CodeDigitOutput::from_table(target.lm_head, tiny_grid());
    const at::Tensor weight = expected.weight.contiguous(), bias = expected.bias.contiguous();
    EXPECT_EQ(file.read_f32("digits.weight"),
              std::vector<float>(weight.data_ptr<float>(), weight.data_ptr<float>() + weight.numel()));
    EXPECT_EQ(file.read_f32("digits.bias"),
              std::vector<float>(bias.data_ptr<float>(), bias.data_ptr<float>() + bias.numel()));
    // It does not overwrite without --force, and names the file.
    try {
        run_digit_head_job(job, out);
        FAIL() << "overwrote " << job.output;
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
    }
    job.code_digits = "3,4,3";  // 36 codes: not the layout's 24
    job.force = true;
    EXPECT_THROW(run_digit_head_job(job, out), Error);
}

// --from: the head a --train-layers none run over every layer trained,
// copied out alone; any other draft is refused, naming its file.
TEST_F(Training, DigitHeadJobCopiesATrainedHeadAndRefusesOtherDrafts) {
    const auto target_dir = fresh_directory("trained-head-target"), head_dir = fresh_directory("trained-head"),
               partial_dir = fresh_directory("trained-head-partial"), out_dir = fresh_directory("trained-head-out");
    write_trained_target(target_dir, 2);
    const llama::LlamaWeights target = load_model_directory(target_dir);
    const drafts::CodeGrid grid = tiny_grid();
    const TokenCorpus corpus = tiny_corpus();
    std::ostringstream log;
    ShallowDraftTask head_alone(target, {{0, 1}, {}}, target_dir, 1.0, &grid);
    train(head_alone, corpus, tiny_options(10), head_dir, log);
    DigitHeadJob job;
    job.target = target_dir;
    job.trained_draft = head_dir;
    job.output = out_dir / "head.safetensors";
    std::ostringstream out;
    run_digit_head_job(job, out);
    const safetensors::File copied(job.output), trained(head_dir / "model.safetensors");
    EXPECT_EQ(copied.metadata().at("cadenza.code_levels"), "3,4,2");
    EXPECT_EQ(copied.read_f32("digits.weight"), trained.read_f32("digits.weight"));
    EXPECT_EQ(copied.read_f32("digits.bias"), trained.read_f32("digits.bias"));
    EXPECT_FALSE(copied.contains("model.layers.0.mlp.up_proj.weight"));

    ShallowDraftTask partial(target, {{0}, {}}, target_dir, 1.0, &grid);  // one layer of two
    train(partial, corpus, tiny_options(2), partial_dir, log);
    job.trained_draft = partial_dir;
    job.force = true;
    try {
        run_digit_head_job(job, out);
        FAIL() << "took a head trained on one layer of two";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find((partial_dir / "model.safetensors").string()), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("--train-layers none"), std::string::npos) << e.what();
    }
}

TEST(TrainLosses, MaskedCrossEntropyIgnoresUnlabelled) {
    const at::Tensor logits = at::log(at::tensor({0.5, 0.5, 0.25, 0.75}, at::kFloat).view({2, 2}));
    const at::Tensor labels = at::tensor({1, -100}, at::kLong);
    EXPECT_NEAR(masked_cross_entropy(logits, labels).item<double>(), std::log(2.0), 1e-6);
    EXPECT_EQ(masked_cross_entropy(logits, at::full({2}, -100, at::kLong)).item<double>(), 0.0);
    EXPECT_NEAR(masked_kl_divergence(logits, logits, labels).item<double>(), 0.0, 1e-7);
}

TEST(TrainLosses, LabelledPositionsGiveTheLossAndGradientOfEveryPosition) {
    at::manual_seed(3);
    const at::Tensor labels = at::tensor({-100, 2, 0, -100, -100, 4, 1, -100}, at::kLong).view({2, 4});
    const at::Tensor projection = at::randn({5, 6});  // [vocab, width]
    const at::Tensor hidden_full = at::randn({2, 4, 6}).requires_grad_(true);
    masked_cross_entropy(at::linear(hidden_full, projection), labels).backward();

    const at::Tensor hidden_selected = hidden_full.detach().clone().requires_grad_(true);
    const LabelledPositions positions = labelled_positions(labels);
    EXPECT_TRUE(positions.indices.equal(at::tensor({1, 2, 5, 6}, at::kLong)));
    EXPECT_TRUE(positions.labels.equal(at::tensor({2, 0, 4, 1}, at::kLong)));
    const at::Tensor selected = at::linear(select_positions(hidden_selected, positions), projection);
    ASSERT_EQ(selected.sizes(), (std::vector<int64_t>{4, 5}));
    const at::Tensor loss = masked_cross_entropy(selected, positions.labels);
    loss.backward();

    const at::Tensor reference = masked_cross_entropy(at::linear(hidden_full.detach(), projection), labels);
    EXPECT_NEAR(loss.item<double>(), reference.item<double>(), 1e-6);
    EXPECT_TRUE(at::allclose(hidden_selected.grad(), hidden_full.grad(), 1e-5, 1e-7));
    EXPECT_GT(hidden_selected.grad().abs().sum().item<double>(), 0.0);

    const LabelledPositions none = labelled_positions(at::full({3}, -100, at::kLong));
    EXPECT_EQ(none.indices.numel(), 0);
    EXPECT_EQ(masked_cross_entropy(at::linear(select_positions(hidden_full.detach(), none), projection), none.labels)
                  .item<double>(),
              0.0);
}

}  // namespace
}  // namespace cadenza::training
