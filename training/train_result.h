// What a training run reports. No LibTorch.
#pragma once

#include <cstdint>

#include "metrics.h"

namespace cadenza::training {

struct TrainResult {
    int64_t first_step = 0;  // the step this process started after (0, or the checkpoint's)
    int64_t last_step = 0;   // the last step done
    bool finished = false;   // last_step == options.steps
    bool interrupted = false;
    int64_t train_sequences = 0, heldout_sequences = 0;
    int64_t tokens = 0;       // tokens fed by this process
    double seconds = 0;       // of training in this process (evaluation excluded)
    double tokens_per_second = 0;
    double final_loss = 0;    // mean training loss over the last (up to 20) steps
    Metrics heldout;          // the task's metrics plus the unigram baseline, on the held-out split
};

}  // namespace cadenza::training
