// What one synthesis measured: tokens, passes, accepted lengths per step and
// per draft depth, and where the wall time went.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "cadenza/cadenza.h"

namespace cadenza {

class DecodingStats {
public:
    void record_step(int32_t tree_depth, int32_t tree_nodes, int32_t accepted_depth, int64_t tokens_emitted);
    void add_target_pass() { ++target_passes_; }
    void add_draft_pass() { ++draft_passes_; }
    void add_continued_step() { ++continued_steps_; }
    void add_first_draft_pass(double seconds) {
        first_draft_seconds += seconds;
        ++first_draft_passes_;
    }

    double draft_seconds = 0.0;
    // The first proposal of each synthesis: part of draft_seconds, apart here
    // because a drafter that keeps its own cache reads the prompt in it.
    double first_draft_seconds = 0.0;
    // Proposals made beside the target's pass (draft_ahead), on their own
    // thread: not part of draft_seconds, which counts only the loop's wait
    // for them.
    double draft_ahead_seconds = 0.0;
    double verify_seconds = 0.0;
    // The prompt's prefill pass: part of verify_seconds (which every target
    // pass counts in), apart here so that the loop's steps can be costed alone.
    double prefill_seconds = 0.0;
    double accept_seconds = 0.0;
    // The decoding loop from the prompt's prefill to the last token: draft,
    // verify and accept plus what lies between them (sampling, bookkeeping);
    // tokens per second are counted over this time.
    double loop_seconds = 0.0;
    double codec_seconds = 0.0;  // decoding codes to audio, streamed or at the end
    // The synthesis thread's time outside the loop: making the prompt (the
    // frontend, encoding a voice prompt); in the loop's steps, handing audio
    // chunks to the codec, waiting for it and calling the audio callback; and
    // after the loop, the last audio (the stream's last window, or the whole
    // decoding when nothing streams).
    double prompt_seconds = 0.0;
    double audio_wait_seconds = 0.0;
    double audio_finish_seconds = 0.0;
    double wall_seconds = 0.0;
    double audio_seconds = 0.0;

    int64_t tokens_generated() const { return tokens_; }
    // Loop time outside the draft, verify and accept stages.
    double loop_overhead_seconds() const;
    int64_t steps() const { return steps_; }
    double mean_accepted_length() const;  // tokens per step
    // The drafted tree's levels and nodes per step (a drafter with a
    // dynamic length drafts fewer than its maximum).
    double mean_draft_depth() const;
    double mean_draft_nodes() const;
    // Steps by the number of nodes they drafted: entry n counts the steps of
    // n nodes (what a verifying step's pass evaluates is n + 1 tokens).
    const std::vector<int64_t>& steps_by_draft_nodes() const { return steps_by_nodes_; }
    // Fraction of steps reaching depth d + 1 that accepted it.
    std::vector<double> acceptance_by_depth() const;

    void fill(cdz_stats& out) const;

    // Adds another run's counts and times to these (benchmarks sum runs).
    void add(const DecodingStats& other);

    int64_t target_passes() const { return target_passes_; }
    int64_t draft_passes() const { return draft_passes_; }
    int64_t first_draft_passes() const { return first_draft_passes_; }  // syntheses that drafted
    // Steps that verified a continuation drafted beside the last step's pass (draft_ahead).
    int64_t continued_steps() const { return continued_steps_; }

private:
    int64_t tokens_ = 0;
    int64_t steps_ = 0;
    int64_t accepted_drafts_ = 0;
    int64_t drafted_levels_ = 0;
    int64_t target_passes_ = 0;
    int64_t draft_passes_ = 0;
    int64_t first_draft_passes_ = 0;
    int64_t continued_steps_ = 0;
    std::vector<int64_t> offered_at_depth_;
    std::vector<int64_t> accepted_at_depth_;
    std::vector<int64_t> steps_by_nodes_;  // see steps_by_draft_nodes()
};

// Adds the time between construction and destruction to a counter.
class ScopedTimer {
public:
    explicit ScopedTimer(double& seconds) : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}
    ~ScopedTimer() {
        seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    double& seconds_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace cadenza
