// Speedup against word error rate, drawn as a PNG by gnuplot (the Debian
// package gnuplot-nox), one numbered point per pipeline, a key naming them,
// and a dashed line at the WER of the original audio.
#pragma once

#include <string>
#include <vector>

namespace cadenza::cli {

struct SpeedupWerPoint {
    std::string label;
    double speedup = 0;      // x
    double wer_percent = 0;  // y
};

// Throws cadenza::Error naming the package to install when gnuplot is not on
// PATH; called before a benchmark starts, so that it does not fail at its end.
void require_gnuplot();

// Writes a gnuplot script with the points inline to a temporary file and runs
// gnuplot on it. Throws cadenza::Error with gnuplot's messages when it fails.
void plot_speedup_against_wer(const std::string& png_file, const std::vector<SpeedupWerPoint>& points,
                              double original_wer_percent, const std::string& title, const std::string& baseline);

}  // namespace cadenza::cli
