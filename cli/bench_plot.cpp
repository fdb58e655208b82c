#include "bench_plot.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "child_process.h"
#include "error.h"

namespace cadenza::cli {
namespace {

// A gnuplot single-quoted string: no escapes but '' for a quote.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// A double-quoted string in a data block, where a quote cannot be escaped.
std::string data_label(std::string text) {
    for (char& c : text)
        if (c == '"' || c == '\n' || c == '\r') c = '\'';
    return "\"" + text + "\"";
}

// A file in the temporary directory, removed when this goes out of scope.
class TemporaryFile {
public:
    explicit TemporaryFile(const std::string& suffix) {
        std::string name = (std::filesystem::temp_directory_path() / ("cadenza-plot-XXXXXX" + suffix)).string();
        const int fd = mkstemps(name.data(), static_cast<int>(suffix.size()));
        if (fd < 0) throw Error(CDZ_STATUS_IO_ERROR, "cannot create a temporary file " + name);
        close(fd);
        path_ = name;
    }
    ~TemporaryFile() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string gnuplot_script(const std::string& png_file, const std::vector<SpeedupWerPoint>& points,
                           double original_wer_percent, const std::string& title, const std::string& baseline) {
    std::ostringstream script;
    script << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "    set terminal pngcairo size 960,640\n"
              "} else {\n"
              "    set terminal png size 960,640\n"
              "}\n"
              "set termoption noenhanced\n"
           << "set output " << quoted(png_file) << '\n'
           << "set title " << quoted(title) << '\n'
           << "set xlabel " << quoted("speedup over " + baseline + " (x)") << '\n'
           << "set ylabel 'WER (%), pocketsphinx'\n"
              "set grid\n"
              "unset key\n"
              "set offsets graph 0.12, graph 0.25, 0, 0\n";
    // Fixed, so that the reference line is inside whatever the points are.
    double top = original_wer_percent;
    for (const auto& point : points) top = std::max(top, point.wer_percent);
    char number[64];
    std::snprintf(number, sizeof(number), "%.6g", top * 1.15 + 1.0);
    script << "set yrange [0:" << number << "]\n";
    std::snprintf(number, sizeof(number), "%.6g", original_wer_percent);
    // The reference spans the whole width, whatever the pipelines' speedups.
    script << "set arrow from graph 0, first " << number << " to graph 1, first " << number
           << " nohead dashtype 2 linecolor rgb 'gray40'\n";
    std::snprintf(number, sizeof(number), "%.1f", original_wer_percent);
    script << "set label " << quoted("original audio: " + std::string(number) + " %") << " at graph 0.01, first "
           << original_wer_percent << " offset 0,0.7 textcolor rgb 'gray40'\n";
    script << "$points << EOD\n";
    for (const auto& point : points) {
        std::snprintf(number, sizeof(number), "%.6g %.6g ", point.speedup, point.wer_percent);
        script << number << data_label(point.label) << '\n';
    }
    script << "EOD\n"
              "plot $points using 1:2 with points pointtype 7 pointsize 1.5, \\\n"
              "     $points using 1:2:3 with labels offset character 1,0.8 left\n";
    return script.str();
}

}  // namespace

void require_gnuplot() {
    if (!speech_corpus::program_on_path("gnuplot"))
        throw Error(CDZ_STATUS_NOT_FOUND,
                    "--plot needs gnuplot, which is not on PATH: install the Debian package gnuplot-nox "
                    "(apt-get install gnuplot-nox)");
}

void plot_speedup_against_wer(const std::string& png_file, const std::vector<SpeedupWerPoint>& points,
                              double original_wer_percent, const std::string& title, const std::string& baseline) {
    require_gnuplot();
    const TemporaryFile script_file(".gp");
    const TemporaryFile messages(".log");
    {
        std::ofstream script(script_file.path());
        script << gnuplot_script(png_file, points, original_wer_percent, title, baseline);
        if (!script.flush()) throw Error(CDZ_STATUS_IO_ERROR, script_file.path() + ": cannot write the gnuplot script");
    }
    std::error_code ignored;
    std::filesystem::remove(png_file, ignored);
    const auto outcome = speech_corpus::run_child_process({"gnuplot", script_file.path()}, messages.path(), 60.0);
    std::error_code size_error;
    const bool written = std::filesystem::file_size(png_file, size_error) > 0 && !size_error;
    if (!outcome.succeeded() || !written) {
        std::ifstream log(messages.path());
        const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
        throw Error(CDZ_STATUS_IO_ERROR, png_file + ": gnuplot failed (" + outcome.describe() + ")" +
                                             (text.empty() ? std::string() : ":\n" + text));
    }
}

}  // namespace cadenza::cli
