// X-codec2 decode speed at the official size (hidden 1024, 12 transformer
// blocks of 16 heads, hop 320 at 16 kHz) with random weights: wall clock and
// CPU time (of the process) per run, as multiples of real time.
// Usage: xcodec2_speed [seconds = 10] [runs = 5] [threads = 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <ATen/ops/randint.h>
#include <c10/core/InferenceMode.h>

#include "codec_plugin_glue.h"
#include "xcodec2_decoder.h"

int main(int argc, char** argv) {
    using namespace cadenza::xcodec2;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    cadenza::codec_plugin::apply_threads(threads);  // LibTorch intra-op threads, OpenBLAS held to one
    c10::InferenceMode inference;
    const XCodec2Config config = XCodec2Config::official();
    cadenza::seanet::StateDictSource source(random_decoder_state_dict(config, 1), "random", c10::Device(c10::kCPU));
    const XCodec2Decoder decoder(config, source, c10::Device(c10::kCPU));
    const int64_t frames = static_cast<int64_t>(seconds * config.frame_rate());
    const at::Tensor codes = at::randint(65536, {1, frames}, at::kLong);
    decoder.decode(codes.narrow(1, 0, std::min<int64_t>(frames, 50)));  // warm-up
    std::vector<double> wall, cpu;
    for (int run = 0; run < runs; ++run) {
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu_start = std::clock();
        const at::Tensor audio = decoder.decode(codes);
        const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
        const double wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double audio_seconds = static_cast<double>(audio.size(1)) / static_cast<double>(config.sample_rate);
        wall.push_back(audio_seconds / wall_seconds);
        cpu.push_back(audio_seconds / cpu_seconds);
        std::printf("run %d: %.2f s of audio, wall %.2f s (%.2fx), CPU %.2f s (%.2fx)\n", run, audio_seconds,
                    wall_seconds, wall.back(), cpu_seconds, cpu.back());
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("median over %d runs, %d thread(s): wall %.2fx real time, CPU time %.2fx real time\n", runs, threads,
                wall[wall.size() / 2], cpu[cpu.size() / 2]);
    return 0;
}
