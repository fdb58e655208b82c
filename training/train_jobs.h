// The training runs as the command line starts them: load the inputs, build
// the task, train, report. Plain types only (no LibTorch in this header), so
// that the CLI does not compile against LibTorch.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "train_options.h"
#include "train_result.h"

namespace cadenza::training {

struct LanguageModelJob {
    std::filesystem::path corpus, config, output;
    std::filesystem::path init_from;  // a model directory to start from instead of random weights from `config`
    int64_t add_layers = 0;           // with init_from: layers added on top (layer_growth.h)
    // Guided attention (guided_attention.h): layers "1,2", empty for none;
    // the corpus's layout.json finds the text and the codes in a sequence.
    std::string guided_layers;
    int64_t guided_head = 0;
    double guided_weight = 1.0, guided_width = 0.2;
    // The codec's FSQ levels ("8,8,8,4,4"), empty for none: code embeddings
    // with the grid's structure (code_digit_embedding.h).
    std::string code_digits;
    // Fraction of the fed target codes replaced by random codes in training
    // batches (code_input_noise.h); 0 for none.
    double code_input_noise = 0;
    // Fraction of the training texts nulled, for classifier-free guidance
    // (text_dropout.h); 0 for none.
    double text_dropout = 0;
    // Fraction of the fed target codes replaced by the model's own samples
    // (self_feeding.h); 0 for none.
    double self_feeding = 0;
    // An MTP heads file whose heads train jointly with the model (the MTP
    // paper's Eq. 3); empty for none. Written to OUTPUT/mtp.safetensors.
    std::filesystem::path mtp_heads;
    double mtp_weight = 1.0;  // the heads' part of the loss (1: Eq. 3)
    std::filesystem::path layout;
    TrainOptions options;
};

struct ShallowDraftJob {
    std::filesystem::path corpus, target, output;
    std::string layers;        // "0,1,5": target layer indices, in draft order
    std::string train_layers;  // "0,1": draft layer indices trained
    std::filesystem::path init_from;  // an earlier draft's directory, or empty: the target's layers
    bool distill = true;
    double distill_weight = 0.5;
    // As DraftHeadsJob's: a code-digit head instead of a copy of the target's.
    std::string code_digits;
    std::filesystem::path layout;
    TrainOptions options;
};

struct DraftHeadsJob {
    std::filesystem::path corpus, target, output;
    std::string kind;  // "mtp" or "medusa"
    int64_t heads = 4;
    // The codec's FSQ levels ("8,8,8,4,4"), empty for none: code-digit output
    // heads (drafts/common/code_digit_head.h) instead of the target's lm_head;
    // `layout` (the corpus's layout.json) places the codes.
    std::string code_digits;
    std::filesystem::path layout;
    double distill_weight = 0;  // weight of the target's own distribution as a soft label
    std::filesystem::path init_from;  // an earlier heads file to start from, or empty: identity heads
    TrainOptions options;
};

// The recurrent draft (drafts/common/recurrent_draft.h): one cell walking
// from the target's last hidden state, reading each token it reaches.
struct RecurrentDraftJob {
    std::filesystem::path corpus, target, output;
    int64_t cell_size = 512;
    int64_t depth = 4;          // steps trained (token t + 2 .. t + 1 + depth)
    std::string code_digits;    // required: the draft's output is a code-digit head
    std::filesystem::path layout;
    double distill_weight = 0.5;
    double sampling_temperature = 1.0;  // the pipeline's sampling, which the draft learns and is judged under
    double sampling_top_p = 1.0;
    std::string distill_loss = "cross-entropy";  // or total-variation, group-total-variation (needs groups)
    std::filesystem::path groups;     // acceptor.pcg's groups file, or empty
    std::filesystem::path init_from;  // an earlier recurrent draft, or empty
    bool table_scoring = false;       // also train the states to be scored by the target's output table
    TrainOptions options;
};

// `cadenza model digit-head`: a code-digit head (drafts/common/
// code_digit_head.h) for a target's own last hidden state, written as a
// small safetensors file that draft.shallow's `digit_head` reads:
// digits.weight [R, H], digits.bias [R] and the grid's metadata. Either the
// factorized form of the target's output table (no training; `code_digits`
// and `layout` give the grid), or the head a `train draft --layers
// <every target layer> --train-layers none` run trained (`trained_draft`,
// its directory: the head alone, without the 27 MB of layers it copied).
struct DigitHeadJob {
    std::filesystem::path target, output;
    std::string code_digits;  // the codec's FSQ levels ("8,8,8,4,4")
    std::filesystem::path layout;
    std::filesystem::path trained_draft;
    bool force = false;  // overwrite an existing output
};
void run_digit_head_job(const DigitHeadJob& job, std::ostream& out);

// Each prints a summary to `out` (and progress to `log`) and returns the result.
TrainResult run_language_model_job(const LanguageModelJob& job, std::ostream& out, std::ostream& log);
TrainResult run_shallow_draft_job(const ShallowDraftJob& job, std::ostream& out, std::ostream& log);
TrainResult run_draft_heads_job(const DraftHeadsJob& job, std::ostream& out, std::ostream& log);
TrainResult run_recurrent_draft_job(const RecurrentDraftJob& job, std::ostream& out, std::ostream& log);

}  // namespace cadenza::training
