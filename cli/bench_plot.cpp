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

// A pipeline's name on one line.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
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
    // Pipelines near each other in speed and WER overlap, and so would their
    // names: each point carries its number, and a key on the right names it.
    std::ostringstream script;
    script << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "    set terminal pngcairo size 1200,640\n"
              "} else {\n"
              "    set terminal png size 1200,640\n"
              "}\n"
              "set termoption noenhanced\n"
           << "set output " << quoted(png_file) << '\n'
           << "set title " << quoted(title) << '\n'
           << "set xlabel " << quoted("speedup over " + baseline + " (x)") << '\n'
           << "set ylabel 'WER (%), pocketsphinx'\n"
              "set grid\n"
              "unset key\n"
              "set rmargin at screen 0.66\n"
              "set offsets graph 0.08, graph 0.12, 0, 0\n";
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
    const double key_step = std::min(0.06, 0.8 / static_cast<double>(std::max<size_t>(points.size(), 1)));
    for (size_t i = 0; i < points.size(); ++i) {
        std::snprintf(number, sizeof(number), "%2zu  %.2fx  %.1f %%  ", i + 1, points[i].speedup,
                      points[i].wer_percent);
        script << "set label " << quoted(std::string(number) + one_line(points[i].label)) << " at screen 0.68, screen "
               << 0.88 - key_step * static_cast<double>(i) << " font ',10'\n";
    }
    script << "$points << EOD\n";
    for (size_t i = 0; i < points.size(); ++i) {
        std::snprintf(number, sizeof(number), "%.6g %.6g %zu", points[i].speedup, points[i].wer_percent, i + 1);
        script << number << '\n';
    }
    script << "EOD\n"
              "plot $points using 1:2 with points pointtype 7 pointsize 1.5, \\\n"
              "     $points using 1:2:(sprintf('%d', $3)) with labels offset character 0.8,0.6 left\n";
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
