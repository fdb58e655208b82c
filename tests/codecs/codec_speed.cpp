// Encode and decode speed of the official EnCodec and SpeechTokenizer
// configurations, with random weights (speed does not depend on their
// values), as multiples of real time. Prints a Markdown table.
//
//   codec_speed [seconds=10] [runs=3] [threads=1,2]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include <ATen/Parallel.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/sin.h>
#include <c10/core/InferenceMode.h>

#include "codec_plugin_glue.h"
#include "encodec_model.h"
#include "speechtokenizer_model.h"

namespace {

using namespace cadenza;

double process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Wall-clock and CPU seconds of one call, each the median over `runs`. On
// a shared machine the wall clock includes waiting for the cores; the CPU
// time of a one-thread run does not.
struct Timing {
    double wall = 0, cpu = 0;
};

Timing median_timing(int runs, const std::function<void()>& body) {
    body();  // warm-up: allocator, oneDNN primitives
    std::vector<double> walls, cpus;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const double cpu_start = process_cpu_seconds();
        body();
        cpus.push_back(process_cpu_seconds() - cpu_start);
        walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(walls.begin(), walls.end());
    std::sort(cpus.begin(), cpus.end());
    return {walls[walls.size() / 2], cpus[cpus.size() / 2]};
}

// Speech-like test audio: a few sines and some noise at a normal level.
at::Tensor test_audio(int64_t channels, int64_t samples, int64_t sample_rate) {
    const at::Tensor t = at::arange(samples, at::kFloat) / static_cast<double>(sample_rate);
    at::Tensor mono = 0.1 * at::sin(t * (2 * M_PI * 220)) + 0.05 * at::sin(t * (2 * M_PI * 1330)) +
                      0.01 * at::randn({samples});
    return mono.view({1, 1, samples}).expand({1, channels, samples}).contiguous();
}

void print(const std::string& model, int threads, double seconds, const Timing& encode, const Timing& decode) {
    std::printf("| %s | %d | %.1fx | %.1fx | %.1fx | %.1fx |\n", model.c_str(), threads, seconds / encode.wall,
                seconds / decode.wall, seconds / encode.cpu, seconds / decode.cpu);
    std::fflush(stdout);
}

double load_average() {
    double load = 0;
    if (FILE* file = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(file, "%lf", &load) != 1) load = 0;
        std::fclose(file);
    }
    return load;
}

}  // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::stod(argv[1]) : 10.0;
    const int runs = argc > 2 ? std::stoi(argv[2]) : 3;
    std::vector<int> thread_counts;
    std::stringstream list(argc > 3 ? argv[3] : "1,2");
    for (std::string item; std::getline(list, item, ',');) thread_counts.push_back(std::stoi(item));

    c10::InferenceMode inference;
    const c10::Device cpu(c10::kCPU);
    std::printf("%.0f s of audio, median of %d runs after a warm-up; x = audio seconds / compute seconds "
                "(wall clock, and CPU time of the process); load average %.1f on %u cores\n\n",
                seconds, runs, load_average(), std::thread::hardware_concurrency());
    std::printf("| model | threads | encode (wall) | decode (wall) | encode (CPU) | decode (CPU) |\n"
                "|---|---|---|---|---|---|\n");

    for (const char* name : {"encodec_24khz", "encodec_48khz"}) {
        const auto config = encodec::EncodecConfig::official(name);
        seanet::ParameterRecorder weights(1, cpu);
        const encodec::EncodecModel model(config, weights);
        const at::Tensor audio =
            test_audio(config.channels, static_cast<int64_t>(seconds * config.sample_rate), config.sample_rate);
        for (double bandwidth : {6.0, 24.0}) {
            for (int threads : thread_counts) {
                codec_plugin::apply_threads(threads);
                std::vector<encodec::EncodedSegment> codes;
                const Timing encode = median_timing(runs, [&] { codes = model.encode(audio, bandwidth); });
                const Timing decode = median_timing(runs, [&] { model.decode(codes); });
                std::ostringstream label;
                label << name << " " << bandwidth << " kbps (" << config.codebooks_for_bandwidth(bandwidth)
                      << " codebooks)";
                print(label.str(), threads, seconds, encode, decode);
            }
        }
    }

    const auto config = speechtokenizer::SpeechTokenizerConfig::from_file(
        std::string(CADENZA_SOURCE_DIR) + "/tests/codecs/data/spt_base_config.json");
    seanet::ParameterRecorder weights(1, cpu);
    const speechtokenizer::SpeechTokenizerModel model(config, weights);
    const at::Tensor audio = test_audio(1, static_cast<int64_t>(seconds * config.sample_rate), config.sample_rate);
    for (int threads : thread_counts) {
        codec_plugin::apply_threads(threads);
        at::Tensor codes;
        const Timing encode = median_timing(runs, [&] { codes = model.encode(audio, config.quantizer.n_q); });
        const Timing decode = median_timing(runs, [&] { model.decode(codes); });
        print("speechtokenizer base (" + std::to_string(config.quantizer.n_q) + " codebooks)", threads, seconds, encode,
              decode);
    }
    return 0;
}
