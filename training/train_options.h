// The knobs of a training run, shared by every kind of run (target, shallow
// draft, draft heads). Plain values, no LibTorch.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace cadenza::training {

struct TrainOptions {
    int64_t steps = 1000;          // optimizer steps in the whole run
    int64_t batch = 16;            // sequences per step
    int64_t seq_len = 128;         // tokens fed per sequence (a window of seq_len + 1 gives the labels)
    double lr = 3e-4;              // peak learning rate
    int64_t warmup = 100;          // steps of linear warmup from 0 to lr
    double min_lr_ratio = 0.1;     // the cosine decays to lr * min_lr_ratio at the last step
    double weight_decay = 0.1;     // AdamW decoupled decay, on matrices only (not norms or biases)
    double clip = 1.0;             // global gradient-norm clip; <= 0 disables
    uint64_t seed = 0;             // weights (target), batch sampler, held-out split
    double holdout = 0.05;         // fraction of the corpus's sequences held out for evaluation
    // The held-out split's seed when set (a later phase keeps an earlier
    // phase's split, with batches in a new order); otherwise `seed`.
    std::optional<uint64_t> split_seed;
    // A token corpus evaluated whole at the end instead of the held-out part
    // (e.g. the target's own samples of the held-out prompts); empty: none.
    std::string eval_corpus;
    bool length_buckets = false;   // batches of sequences of similar length (BatchSampler)
    bool resume = false;           // continue from the checkpoint in the output
    int64_t checkpoint_every = 0;  // steps between checkpoints; 0: only at the end
    int64_t stop_after = 0;        // stop (after a checkpoint) once this step is done; 0: run to `steps`
    // Steps between held-out evaluations during the run, each a row of the
    // curve file (heldout_curve_path); 0: only the final evaluation.
    int64_t eval_every = 0;
    int64_t threads = 0;           // LibTorch intra-op threads; 0: one per core
    bool progress = true;          // the progress line on standard error
    std::string label = "train";   // the progress line's prefix
    // Checked after every step: when it becomes true the run checkpoints and returns.
    const std::atomic<bool>* interrupt = nullptr;
};

}  // namespace cadenza::training
