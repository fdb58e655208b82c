// The training loop shared by every kind of run: AdamW (decoupled weight
// decay on matrices), linear warmup + cosine learning rate, global-norm
// gradient clipping, a seeded batch sampler, checkpoints that resume bit for
// bit, a progress line, and held-out evaluation at the end.
//
// Checkpoint: the task's model files (TrainingTask::save) plus one
// safetensors file (TrainingTask::state_path) holding every trained tensor,
// the AdamW moments and step counts, and the run's settings as metadata.
// Each file is written to a temporary name and renamed; a resume reads only
// the state file, so a crash between the two writes loses nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>

#include "token_corpus.h"
#include "train_options.h"
#include "train_result.h"
#include "training_task.h"

namespace cadenza::training {

// Trains `task` on `corpus`, checkpointing into `output`. Throws
// cadenza::Error on bad options, a checkpoint that exists without `resume`
// (or is missing with it), or one from a different run (settings, corpus or
// parameters differ).
// The held-out curve of --eval-every beside a checkpoint:
// DIR/training_state.safetensors -> DIR/heldout.tsv,
// FILE.training_state.safetensors -> FILE.heldout.tsv.
std::filesystem::path heldout_curve_path(const std::filesystem::path& state_path);

TrainResult train(TrainingTask& task, const TokenCorpus& corpus, const TrainOptions& options,
                  const std::filesystem::path& output, std::ostream& log);

}  // namespace cadenza::training
