// The logits-processor stage: between the backbone's logits and sampling, a
// chain of processors rewrites the rows the loop evaluated, in the order the
// pipeline lists them ([logits] processors). A processor may run its own
// work on the tree the loop evaluates (a second backbone session) and follow
// what the loop commits and appends. Core-internal: no plugin ABI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza {

class LogitsProcessor {
public:
    virtual ~LogitsProcessor() = default;

    // As the pipeline lists it.
    virtual const char* name() const = 0;

    // A synthesis starts from `prompt`; `capacity` bounds the tokens its
    // sessions hold. The loop then evaluates all of the prompt but its last
    // token before the first step.
    virtual void start(const std::vector<int32_t>& prompt, int64_t capacity) = 0;

    // The backbone has just evaluated `tree` after the committed tokens: its
    // first `chain` nodes are the unevaluated tokens of the sequence, as a
    // chain, the rest the draft. With `want_logits` the loop then calls
    // apply() on the rows from node chain - 1 on.
    virtual void evaluate(const cdz_token_tree& /*tree*/, int32_t /*chain*/, bool /*want_logits*/) {}

    // Rewrites `logits` [1 + draft nodes, vocab] in place: row 0 follows the
    // sequence, row 1 + i the draft's node i (`draft` null: row 0 alone).
    virtual void apply(float* logits, int64_t vocab, const cdz_token_tree* draft) = 0;

    // The loop committed nodes `path` of the last evaluated tree to the
    // backbone's cache.
    virtual void commit(const int32_t* /*path*/, int32_t /*count*/) {}

    // A step appended `tokens` to the sequence.
    virtual void append(const int32_t* /*tokens*/, size_t /*count*/) {}

    // For an acceptor that emits drafts without verification (no logits to
    // rewrite): `rows` [count, vocab] are the drafter's distributions, row i
    // for the token i + 1 ahead of the sequence; rewrites them in place so
    // that what this processor forbids the target is not chosen; `rng` is
    // the pipeline's sampling stream, for what the processor draws.
    virtual void apply_unverified(float* /*rows*/, int32_t /*count*/, int64_t /*vocab*/, cdz_rng& /*rng*/) {}

    // The same acceptor chose `tokens`: rewrites them in place to what this
    // processor allows, and returns how many of them the step keeps (at
    // least 1 of a non-empty run).
    virtual size_t rewrite_unverified(int32_t* /*tokens*/, size_t count) { return count; }
};

// The pipeline's processors, applied in order.
class LogitsProcessorChain {
public:
    void add(std::unique_ptr<LogitsProcessor> processor) { processors_.push_back(std::move(processor)); }
    bool empty() const { return processors_.empty(); }
    std::vector<std::string> names() const {
        std::vector<std::string> names;
        for (const auto& processor : processors_) names.emplace_back(processor->name());
        return names;
    }

    void start(const std::vector<int32_t>& prompt, int64_t capacity) {
        for (auto& processor : processors_) processor->start(prompt, capacity);
    }
    void evaluate(const cdz_token_tree& tree, int32_t chain, bool want_logits) {
        for (auto& processor : processors_) processor->evaluate(tree, chain, want_logits);
    }
    void apply(float* logits, int64_t vocab, const cdz_token_tree* draft) {
        for (auto& processor : processors_) processor->apply(logits, vocab, draft);
    }
    void commit(const int32_t* path, int32_t count) {
        for (auto& processor : processors_) processor->commit(path, count);
    }
    void append(const int32_t* tokens, size_t count) {
        for (auto& processor : processors_) processor->append(tokens, count);
    }
    void apply_unverified(float* rows, int32_t count, int64_t vocab, cdz_rng& rng) {
        for (auto& processor : processors_) processor->apply_unverified(rows, count, vocab, rng);
    }
    size_t rewrite_unverified(int32_t* tokens, size_t count) {
        for (auto& processor : processors_) count = processor->rewrite_unverified(tokens, count);
        return count;
    }

private:
    std::vector<std::unique_ptr<LogitsProcessor>> processors_;
};

}  // namespace cadenza
