// A test double of a logits processor: it writes every call it gets into a
// shared log and maps each logit of the rows it is given to
// logit * scale + shift, so that the order of a chain shows in its output.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "logits_processor.h"

namespace cadenza::test {

class RecordingLogitsProcessor final : public LogitsProcessor {
public:
    RecordingLogitsProcessor(std::string name, std::vector<std::string>& log, float scale, float shift)
        : name_(std::move(name)), log_(log), scale_(scale), shift_(shift) {}

    const char* name() const override { return name_.c_str(); }
    void start(const std::vector<int32_t>& prompt, int64_t capacity) override {
        log_.push_back(name_ + ".start " + std::to_string(prompt.size()) + " " + std::to_string(capacity));
    }
    void evaluate(const cdz_token_tree& tree, int32_t chain, bool want_logits) override {
        log_.push_back(name_ + ".evaluate " + std::to_string(tree.node_count) + " " + std::to_string(chain) + " " +
                       (want_logits ? "logits" : "no logits"));
    }
    void apply(float* logits, int64_t vocab, const cdz_token_tree* draft) override {
        const int64_t rows = 1 + (draft ? draft->node_count : 0);
        log_.push_back(name_ + ".apply " + std::to_string(rows));
        for (int64_t i = 0; i < rows * vocab; ++i) logits[i] = logits[i] * scale_ + shift_;
    }
    void commit(const int32_t* path, int32_t count) override {
        log_.push_back(name_ + ".commit " + std::to_string(count) + (count ? " last " + std::to_string(path[count - 1]) : ""));
    }
    void append(const int32_t* tokens, size_t count) override {
        log_.push_back(name_ + ".append " + std::to_string(count) + (count ? " last " + std::to_string(tokens[count - 1]) : ""));
    }

private:
    std::string name_;
    std::vector<std::string>& log_;
    float scale_, shift_;
};

}  // namespace cadenza::test
