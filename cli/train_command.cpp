#include "train_command.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "exit_codes.h"
#include "freed_memory_reuse.h"
#include "torch_commands.h"
#include "mel_codec_training.h"
#include "train_jobs.h"

namespace cadenza::cli {
namespace {

using training::TrainOptions;

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
    interrupted.store(true);
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
    std::signal(SIGTERM, SIG_DFL);
}

// Ctrl-C (or SIGTERM) during a run: finish the step, checkpoint, exit.
class InterruptScope {
public:
    InterruptScope() {
        interrupted.store(false);
        std::signal(SIGINT, on_interrupt);
        std::signal(SIGTERM, on_interrupt);
    }
    ~InterruptScope() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    }
};

std::string shortest(double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", value);
    return text;
}

struct Defaults {
    double lr;
    int64_t warmup;
    double weight_decay;
};

// --code-digits and --layout: a code-digit output head (drafts/common/code_digit_head.h).
void add_code_digit_options(CLI::App* app, std::string& code_digits, std::filesystem::path& layout, const char* who) {
    auto* digits = app->add_option(
        "--code-digits", code_digits,
        std::string("the codec's FSQ levels, least significant first (e.g. 8,8,8,4,4): ") + who +
            " predicts a code by its digits, beside the non-code tokens (the levels' sum + the non-code tokens + 1 "
            "logits instead of the vocabulary's; needs --layout)");
    app->add_option("--layout", layout, "the corpus's layout.json, for --code-digits")->check(CLI::ExistingFile)->needs(digits);
}

void add_common_options(CLI::App* command, TrainOptions& o, const Defaults& defaults) {
    o.lr = defaults.lr;
    o.warmup = defaults.warmup;
    o.weight_decay = defaults.weight_decay;
    command->add_option("--steps", o.steps, "optimizer steps (default 1000)")->check(CLI::PositiveNumber);
    command->add_option("--batch", o.batch, "sequences per step (default 16)")->check(CLI::PositiveNumber);
    command->add_option("--seq-len", o.seq_len, "tokens per sequence window; longer sequences are cut (default 128)")
        ->check(CLI::PositiveNumber);
    command->add_option("--lr", o.lr, "peak learning rate (default " + shortest(defaults.lr) + ")")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--warmup", o.warmup,
                        "steps of linear warmup, then a cosine decay to lr/10 (default " +
                            std::to_string(defaults.warmup) + ")")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--weight-decay", o.weight_decay,
                        "AdamW decoupled weight decay on matrices (default " + shortest(defaults.weight_decay) + ")")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--clip", o.clip, "clip the global gradient norm to this; 0 disables (default 1.0)");
    command->add_option("--seed", o.seed, "seed of the weights, the batches and the held-out split (default 0)");
    command->add_flag("--resume", o.resume, "continue bit for bit from the checkpoint in the output");
    command->add_option("--checkpoint-every", o.checkpoint_every, "steps between checkpoints; 0: only at the end (default 0)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--stop-after", o.stop_after,
                        "stop (with a checkpoint) once this step is done, to continue later with --resume")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--eval-every", o.eval_every,
                        "evaluate the held-out sequences (or --eval-corpus) every this many steps and add a row to "
                        "the curve file beside the checkpoint (*heldout.tsv); 0: only at the end (default 0)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--split-seed", o.split_seed,
                        "seed of the held-out split (default: --seed); a later phase keeps an earlier phase's split");
    command->add_option("--holdout", o.holdout, "fraction of the sequences held out for evaluation (default 0.05)")
        ->check(CLI::Range(0.0, 0.999));
    command->add_option("--eval-corpus", o.eval_corpus,
                        "evaluate on every sequence of this token corpus instead of the held-out part (e.g. the "
                        "target's own samples of the held-out prompts, `corpus sampled --part heldout`)")
        ->check(CLI::ExistingFile);
    command->add_flag("--length-buckets", o.length_buckets,
                      "draw each batch from sequences of similar length: less padding, faster steps");
    command->add_option("--threads", o.threads, "LibTorch threads; 0: one per core (default 0)")
        ->check(CLI::NonNegativeNumber);
    command->add_flag("!--no-progress", o.progress, "no progress line on standard error");
}

template <typename Job, typename Run>
std::function<int()> runner(std::shared_ptr<Job> job, Run run) {
    return [job, run] {
        InterruptScope scope;
        keep_freed_memory_for_reuse();
        job->options.interrupt = &interrupted;
        const training::TrainResult result = run(*job, std::cout, std::cerr);
        return result.interrupted ? static_cast<int>(exit_user_error) : static_cast<int>(exit_ok);
    };
}

}  // namespace

Command add_train_command(CLI::App& app) {
    auto* train = app.add_subcommand("train", torch_command_description("train"));
    train->require_subcommand(1);
    std::vector<std::pair<CLI::App*, std::function<int()>>> runs;

    {
        auto job = std::make_shared<training::LanguageModelJob>();
        job->options.label = "train lm";
        auto* lm = train->add_subcommand("lm", "train a target LLaMA from scratch on a token corpus");
        lm->add_option("--corpus", job->corpus, "token corpus (prompt_ids | target_ids per line)")
            ->required()
            ->check(CLI::ExistingFile);
        auto* config = lm->add_option("--config", job->config, "Hugging Face config.json of the model (random weights)")
                           ->check(CLI::ExistingFile);
        lm->add_option("--init-from", job->init_from,
                       "start from this model directory's weights instead (e.g. trained on an easier corpus)")
            ->check(CLI::ExistingDirectory)
            ->excludes(config);
        lm->add_option("--add-layers", job->add_layers,
                       "with --init-from: this many new layers on top, their output projections at zero so that "
                       "the deeper model starts as the trained one")
            ->check(CLI::PositiveNumber);
        lm->add_option("--output", job->output, "model directory to write (config.json, model.safetensors)")->required();
        auto* guided = lm->add_option("--guided-attention", job->guided_layers,
                                      "teach one head of these layers (e.g. 1,2) to read the text along the diagonal "
                                      "while the codes are fed (DC-TTS's guided attention; needs --layout)");
        lm->add_option("--code-digits", job->code_digits,
                                      "the codec's FSQ levels, least significant first (e.g. 8,8,8,4,4): each code's "
                                      "embedding adds one learned vector per digit, shared with the codes that have "
                                      "that digit (needs --layout)");
        lm->add_option("--code-input-noise", job->code_input_noise,
                       "fraction of the fed target codes replaced by random codes in training batches, the labels "
                       "kept true, against drift on the model's own samples (e.g. 0.2; needs --layout)")
            ->check(CLI::Range(0.0, 0.9));
        lm->add_option("--text-dropout", job->text_dropout,
                       "fraction of the training texts replaced by the null text (<bos>, <pad>s, <eos>), so that "
                       "synthesis can use classifier-free guidance (the pipeline's [logits.classifier_free_guidance]; "
                       "e.g. 0.1; needs --layout)")
            ->check(CLI::Range(0.0, 0.9));
        lm->add_option("--self-feeding", job->self_feeding,
                       "fraction of the fed target codes replaced by codes the model itself samples there in a "
                       "first pass without gradients (parallel scheduled sampling), the labels kept true, against "
                       "drift on its own samples (e.g. 0.3; needs --layout)")
            ->check(CLI::Range(0.0, 0.9));
        lm->add_option("--mtp-heads", job->mtp_heads,
                       "an MTP heads file (train mtp) whose heads train jointly with the model, as the MTP paper "
                       "trains them (Eq. 3: the next token's loss plus every head's); written to OUTPUT/mtp.safetensors")
            ->check(CLI::ExistingFile);
        lm->add_option("--mtp-weight", job->mtp_weight,
                       "with --mtp-heads: scales the heads' part of the loss (1: Eq. 3; lower keeps the next-token "
                       "prediction closer to the model's)")
            ->check(CLI::Range(1e-6, 1.0));
        lm->add_option("--layout", job->layout,
                       "the corpus's layout.json (corpus tts writes it), for --guided-attention, --code-digits, "
                       "--code-input-noise, --text-dropout and --self-feeding")
            ->check(CLI::ExistingFile);
        lm->add_option("--guided-head", job->guided_head, "the head guided in each layer (default 0)")
            ->check(CLI::NonNegativeNumber)
            ->needs(guided);
        lm->add_option("--guided-weight", job->guided_weight,
                       "weight of the guide loss beside the cross-entropy (default 1)")
            ->check(CLI::NonNegativeNumber)
            ->needs(guided);
        lm->add_option("--guided-width", job->guided_width,
                       "g: the diagonal band's width as a fraction of the text (default 0.2)")
            ->check(CLI::Range(0.01, 1.0))
            ->needs(guided);
        add_common_options(lm, job->options, {3e-4, 100, 0.1});
        runs.emplace_back(lm, runner(job, training::run_language_model_job));
    }
    {
        auto job = std::make_shared<training::ShallowDraftJob>();
        job->options.label = "train draft";
        auto* draft = train->add_subcommand("draft", "train an SSD shallow draft built from the target's layers");
        draft->add_option("--target", job->target, "the target's model directory")->required()->check(CLI::ExistingDirectory);
        draft->add_option("--layers", job->layers, "target layer indices the draft copies, in order, e.g. 0,1,5")->required();
        draft->add_option("--train-layers", job->train_layers,
                          "draft layer indices (positions in --layers) to train with the final norm and the head, e.g. 0,1; the others stay frozen; none: the head alone")
            ->required();
        draft->add_option("--corpus", job->corpus, "token corpus (prompt_ids | target_ids per line)")
            ->required()
            ->check(CLI::ExistingFile);
        draft->add_option("--output", job->output, "model directory to write")->required();
        draft->add_option("--init-from", job->init_from,
                          "start from this earlier draft's trained weights (same --layers and head; a new schedule, "
                          "as a second training phase)")
            ->check(CLI::ExistingDirectory);
        add_code_digit_options(draft, job->code_digits, job->layout, "the draft");
        draft->add_flag("--distill,!--no-distill", job->distill,
                        "add KL(target || draft) to the cross-entropy (default on; --no-distill: cross-entropy only, "
                        "as the SSD paper)");
        draft->add_option("--distill-weight", job->distill_weight,
                          "w in (1 - w) * cross-entropy + w * KL (default 0.5)")
            ->check(CLI::Range(0.0, 1.0));
        add_common_options(draft, job->options, {3e-4, 100, 0.1});
        runs.emplace_back(draft, runner(job, training::run_shallow_draft_job));
    }
    for (const char* kind : {"mtp", "medusa"}) {
        auto job = std::make_shared<training::DraftHeadsJob>();
        job->kind = kind;
        job->options.label = std::string("train ") + kind;
        const std::string description = std::string(kind) == "mtp"
                                            ? "train multi-token prediction heads on a frozen target (loss: MTP Eq. 3)"
                                            : "train MEDUSA heads on a frozen target (loss weights 0.8^k)";
        auto* heads = train->add_subcommand(kind, description);
        heads->add_option("--target", job->target, "the target's model directory")->required()->check(CLI::ExistingDirectory);
        heads->add_option("--heads", job->heads, "number of heads; head i predicts token t+2+i (default 4)")
            ->check(CLI::Range(1, 64));
        heads->add_option("--corpus", job->corpus, "token corpus (prompt_ids | target_ids per line)")
            ->required()
            ->check(CLI::ExistingFile);
        heads->add_option("--output", job->output, "heads file to write (.safetensors)")->required();
        heads->add_option("--init-from", job->init_from,
                          "start from this earlier heads file (same kind, --heads and output; a new schedule, as a "
                          "second training phase)")
            ->check(CLI::ExistingFile);
        add_code_digit_options(heads, job->code_digits, job->layout, "each head");
        heads->add_option("--distill-weight", job->distill_weight,
                          "w in (1 - w) * cross-entropy on the corpus + w * cross-entropy against the target's own "
                          "distribution for the same token (default 0)")
            ->check(CLI::Range(0.0, 1.0));
        add_common_options(heads, job->options, {1e-3, 40, 0.0});
        runs.emplace_back(heads, runner(job, training::run_draft_heads_job));
    }

    {
        auto job = std::make_shared<training::RecurrentDraftJob>();
        job->options.label = "train recurrent";
        auto* recurrent = train->add_subcommand(
            "recurrent", "train a recurrent draft (one cell walking from the target's last hidden state, reading each "
                         "token it reaches) on a frozen target");
        recurrent->add_option("--target", job->target, "the target's model directory")->required()->check(CLI::ExistingDirectory);
        recurrent->add_option("--corpus", job->corpus, "token corpus (prompt_ids | target_ids per line)")
            ->required()
            ->check(CLI::ExistingFile);
        recurrent->add_option("--output", job->output, "draft file to write (.safetensors)")->required();
        recurrent->add_option("--cell-size", job->cell_size, "the cell's inner width (default 512)")->check(CLI::Range(1, 65536));
        recurrent->add_option("--depth", job->depth, "steps trained: step k predicts token t+1+k (default 4)")
            ->check(CLI::Range(1, 64));
        recurrent->add_option("--init-from", job->init_from,
                              "start from this earlier recurrent draft (same cell and grid, at least as deep; a new "
                              "schedule)")
            ->check(CLI::ExistingFile);
        add_code_digit_options(recurrent, job->code_digits, job->layout, "the draft");
        recurrent->add_option("--distill-weight", job->distill_weight,
                              "w in (1 - w) * cross-entropy on the corpus + w * cross-entropy against the target's own "
                              "distribution for the same token (default 0.5)")
            ->check(CLI::Range(0.0, 1.0));
        recurrent->add_option("--distill-loss", job->distill_loss,
                              "what the distillation term measures: cross-entropy (default) or total-variation (one "
                              "minus the acceptance sum_t min(p(t), q(t)) over the vocabulary-wide rows) or "
                              "group-total-variation (one minus acceptor.pcg's acceptance over the --groups)")
            ->check(CLI::IsMember({"cross-entropy", "total-variation", "group-total-variation"}));
        recurrent->add_option("--groups", job->groups,
                              "acceptor.pcg's groups file (cadenza build-groups): for group-total-variation, and the "
                              "held-out group acceptance per step")
            ->check(CLI::ExistingFile);
        recurrent->add_flag("--table-scoring", job->table_scoring,
                            "also train the cell's states to be scored by the target's output table (the same loss "
                            "for softmax(W_lm s_k / T)), for draft.recurrent's `candidates`: the digit head's most "
                            "likely tokens scored by the table");
        recurrent->add_option("--sampling-temperature", job->sampling_temperature,
                              "the pipeline's temperature: the teacher and the held-out acceptance use the target's "
                              "distribution at it, and the draft's logits are divided by it as the drafter divides them "
                              "(default 1)")
            ->check(CLI::PositiveNumber);
        recurrent->add_option("--sampling-top-p", job->sampling_top_p,
                              "the pipeline's top-p, applied to the target's distribution likewise (default 1)")
            ->check(CLI::Range(0.0, 1.0));
        add_common_options(recurrent, job->options, {1e-3, 40, 0.0});
        runs.emplace_back(recurrent, runner(job, training::run_recurrent_draft_job));
    }

    {
        auto job = std::make_shared<training::MelCodecJob>();
        job->options.label = "train codec";
        job->options.seq_len = 96;
        auto* codec = train->add_subcommand("codec", "train the mel-FSQ codec on a speech corpus (codecs/mel_fsq)");
        codec->add_option("--manifest", job->manifest, "speech corpus manifest.tsv (`cadenza corpus speech`)")
            ->required()
            ->check(CLI::ExistingFile);
        codec->add_option("--output", job->output, "directory to write (codec.safetensors, training_state.safetensors)")
            ->required();
        codec->add_option("--width", job->width, "channels of the residual blocks (default 256)")->check(CLI::Range(8, 4096));
        codec->add_option("--encoder-blocks", job->encoder_blocks, "residual blocks of the encoder (default 4)")
            ->check(CLI::Range(0, 64));
        codec->add_option("--decoder-blocks", job->decoder_blocks, "residual blocks of the decoder (default 6)")
            ->check(CLI::Range(0, 64));
        codec->add_option("--levels", job->levels, "FSQ levels, comma-separated (default 8,8,8,4,4: 8,192 codes)");
        codec->add_option("--init-from", job->init_from,
                          "a trained codec.safetensors to start from (the same architecture; its log-mel statistics "
                          "are kept)")
            ->check(CLI::ExistingFile);
        codec->add_option("--latent-smoothness", job->latent_smoothness,
                          "weight of a penalty on the latent's change between frames (default 0): codes that move "
                          "less are easier for a TTS target to predict")
            ->check(CLI::NonNegativeNumber);
        codec->add_option("--max-utterances", job->max_utterances, "use at most this many train utterances; 0: all")
            ->check(CLI::NonNegativeNumber);
        add_common_options(codec, job->options, {2e-3, 200, 0.0});
        runs.emplace_back(codec, runner(job, training::run_mel_codec_job));
    }

    return {train, [runs] {
                for (const auto& [command, run] : runs)
                    if (command->parsed()) return run();
                return static_cast<int>(exit_internal_error);
            }};
}

}  // namespace cadenza::cli
