// The training progress line on standard error, at most once a second:
// step/total, loss, tokens per second, learning rate, elapsed time and ETA.
// Rewritten in place on a terminal, one line per report otherwise. No LibTorch.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace cadenza::training {

// "45 s", "3 min 07 s", "2 h 05 min"
std::string format_duration(double seconds);
// "950 tok/s", "21.3k tok/s", "1.20M tok/s"
std::string format_rate(double tokens_per_second);

class Progress {
public:
    // `first_step`: the step this process starts from (after a resume).
    Progress(std::string label, int64_t first_step, int64_t total_steps, bool enabled, std::ostream& out);

    // After step `step` (1-based) with its loss, the tokens it fed and its rate.
    void update(int64_t step, double loss, int64_t tokens, double lr);
    // Ends an in-place line.
    void finish();

    double elapsed_seconds() const;
    double tokens_per_second() const;
    int64_t tokens() const { return tokens_; }

private:
    using Clock = std::chrono::steady_clock;
    std::string label_;
    int64_t first_step_, total_steps_;
    bool enabled_, terminal_, shown_ = false;
    std::ostream& out_;
    Clock::time_point start_, last_;
    int64_t tokens_ = 0;
    double loss_sum_ = 0;
    int64_t loss_count_ = 0;
};

}  // namespace cadenza::training
