// What a training run trains: the interface between the generic loop
// (trainer.h) and each kind of model (target, shallow draft, draft heads).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "metrics.h"

namespace cadenza::training {

struct TrainableParameter {
    std::string name;   // stable across runs: the checkpoint's key
    at::Tensor tensor;  // a leaf tensor the optimizer updates in place
    bool decay = true;  // AdamW weight decay applies (matrices yes, norms and biases no)
};

class TrainingTask {
public:
    virtual ~TrainingTask() = default;

    virtual std::string kind() const = 0;        // "lm", "draft", "mtp", "medusa"
    virtual int64_t vocab_size() const = 0;
    virtual int64_t max_positions() const = 0;  // the longest window it can be fed
    // The tensors to train, in a fixed order; the trainer sets requires_grad.
    virtual std::vector<TrainableParameter> parameters() = 0;
    // A scalar, differentiable with respect to parameters().
    virtual at::Tensor loss(const Batch& batch) = 0;
    // Adds held-out metrics of one batch (called without grad).
    virtual void evaluate(const Batch& batch, Metrics& metrics) = 0;
    // Writes the trained model to `output` (a directory or a file, by kind).
    virtual void save(const std::filesystem::path& output) const = 0;
    // Task settings a resumed run must share with its checkpoint (key, value).
    virtual std::vector<std::pair<std::string, std::string>> settings() const { return {}; }
    // Where the training state for `output` lives.
    virtual std::filesystem::path state_path(const std::filesystem::path& output) const = 0;
};

}  // namespace cadenza::training
