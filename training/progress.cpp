#include "progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ostream>

namespace cadenza::training {

std::string format_duration(double seconds) {
    char text[48];
    if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
    const auto whole = static_cast<int64_t>(std::llround(seconds));
    if (seconds < 60) {
        std::snprintf(text, sizeof(text), "%.0f s", seconds);
    } else if (whole < 3600) {
        std::snprintf(text, sizeof(text), "%lld min %02lld s", static_cast<long long>(whole / 60),
                      static_cast<long long>(whole % 60));
    } else {
        std::snprintf(text, sizeof(text), "%lld h %02lld min", static_cast<long long>(whole / 3600),
                      static_cast<long long>((whole % 3600) / 60));
    }
    return text;
}

std::string format_rate(double rate) {
    char text[48];
    if (rate >= 1e6)
        std::snprintf(text, sizeof(text), "%.2fM tok/s", rate / 1e6);
    else if (rate >= 1e4)
        std::snprintf(text, sizeof(text), "%.1fk tok/s", rate / 1e3);
    else
        std::snprintf(text, sizeof(text), "%.0f tok/s", rate);
    return text;
}

Progress::Progress(std::string label, int64_t first_step, int64_t total_steps, bool enabled, std::ostream& out)
    : label_(std::move(label)),
      first_step_(first_step),
      total_steps_(total_steps),
      enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      out_(out),
      start_(Clock::now()),
      last_(start_) {}

double Progress::elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double Progress::tokens_per_second() const {
    const double seconds = elapsed_seconds();
    return seconds > 0 ? static_cast<double>(tokens_) / seconds : 0.0;
}

void Progress::update(int64_t step, double loss, int64_t tokens, double lr) {
    tokens_ += tokens;
    loss_sum_ += loss;
    ++loss_count_;
    const auto now = Clock::now();
    const bool last = step >= total_steps_;
    if (!enabled_ || (now - last_ < std::chrono::seconds(1) && !last)) return;
    last_ = now;
    shown_ = true;
    const double elapsed = elapsed_seconds();
    const double done = static_cast<double>(step - first_step_);
    const double eta = done > 0 ? elapsed / done * static_cast<double>(total_steps_ - step) : NAN;
    char text[256];
    std::snprintf(text, sizeof(text), "%s: step %lld/%lld | loss %.4f | %s | lr %.3g | elapsed %s | ETA %s",
                  label_.c_str(), static_cast<long long>(step), static_cast<long long>(total_steps_),
                  loss_sum_ / static_cast<double>(loss_count_), format_rate(tokens_per_second()).c_str(), lr,
                  format_duration(elapsed).c_str(), format_duration(eta).c_str());
    loss_sum_ = 0;
    loss_count_ = 0;
    out_ << (terminal_ ? "\r\033[K" : "") << text << (terminal_ ? "" : "\n") << std::flush;
}

void Progress::finish() {
    if (enabled_ && shown_ && terminal_) out_ << '\n' << std::flush;
    shown_ = false;
}

}  // namespace cadenza::training
