// Encode speed of codec.hubert at the official hubert_base size: random
// weights built from the config (the official key list), random k-means
// centroids, `seconds` of noise at 16 kHz. Prints wall clock and process
// CPU time as multiples of real time (median of `runs` after a warm-up).
// Usage: hubert_speed [seconds=10] [runs=5] [threads=1] [layer=6] [K=500]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ATen/ops/randn.h>
#include <c10/core/InferenceMode.h>

#include "codec_plugin_glue.h"
#include "hubert_mono_codec.h"

namespace {

double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cadenza;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    const int64_t layer = argc > 4 ? std::atoll(argv[4]) : 6;
    const int64_t k = argc > 5 ? std::atoll(argv[5]) : 500;
    codec_plugin::apply_threads(threads);
    c10::InferenceMode inference;
    const hubert::HubertConfig config = hubert::HubertConfig::official("hubert_base");
    seanet::ParameterRecorder recorder(1234, c10::Device(c10::kCPU));
    auto model = std::make_unique<hubert::HubertModel>(config, recorder);
    hubert::KMeansTokenizer kmeans(at::randn({k, config.hidden_size}), layer);
    const hubert::HubertMonoCodec codec(std::move(model), kmeans, layer);
    const at::Tensor audio = at::randn({static_cast<int64_t>(seconds * 16000)}) * 0.1;
    codec.encode(audio);  // warm-up
    std::vector<double> wall, cpu;
    int64_t frames = 0;
    for (int i = 0; i < runs; ++i) {
        const double c0 = cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        frames = codec.encode(audio).size(1);
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        cpu.push_back(cpu_seconds() - c0);
    }
    std::printf("hubert_base, layer %lld, K %lld, %.1f s audio (%lld frames), %d thread(s): "
                "wall %.3f s (%.2fx real time), CPU %.3f s (%.2fx real time), median of %d\n",
                static_cast<long long>(layer), static_cast<long long>(k), seconds, static_cast<long long>(frames),
                threads, median(wall), seconds / median(wall), median(cpu), seconds / median(cpu), runs);
    return 0;
}
