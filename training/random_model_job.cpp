#include "random_model_job.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "error.h"
#include "llama_config.h"
#include "llama_weights.h"
#include "safetensors.h"

namespace cadenza::training {
namespace {

std::string format_count(int64_t count) {
    char text[64];
    if (count < 10'000)
        std::snprintf(text, sizeof(text), "%" PRId64, count);
    else if (count < 10'000'000)
        std::snprintf(text, sizeof(text), "%.1fK", count / 1e3);
    else if (count < 10'000'000'000)
        std::snprintf(text, sizeof(text), "%.1fM", count / 1e6);
    else
        std::snprintf(text, sizeof(text), "%.2fB", count / 1e9);
    return text;
}

std::string format_bytes(uintmax_t bytes) {
    char text[64];
    if (bytes < 10 * 1024)
        std::snprintf(text, sizeof(text), "%ju B", bytes);
    else if (bytes < 10 * 1024 * 1024)
        std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
    else if (bytes < uintmax_t{10} * 1024 * 1024 * 1024)
        std::snprintf(text, sizeof(text), "%.1f MiB", bytes / (1024.0 * 1024.0));
    else
        std::snprintf(text, sizeof(text), "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

void run_random_model_job(const RandomModelJob& options, std::ostream& out) {
    namespace fs = std::filesystem;
    const llama::LlamaConfig config = llama::LlamaConfig::from_file(options.config);
    const fs::path directory = options.output;
    const fs::path config_path = directory / "config.json", weights_path = directory / "model.safetensors";
    if (!options.force)
        for (const fs::path& path : {config_path, weights_path})
            if (fs::exists(path))
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + " exists (--force overwrites it)");
    std::error_code error;
    fs::create_directories(directory, error);
    if (error) throw Error(CDZ_STATUS_IO_ERROR, directory.string() + ": cannot create: " + error.message());

    c10::InferenceMode inference;
    const llama::LlamaWeights weights = llama::LlamaWeights::random(config, options.seed, at::kCPU);
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("cadenza.init_seed", std::to_string(options.seed));
    int64_t parameters = 0;
    for (const auto& [name, tensor] : weights.named_parameters()) {
        const at::Tensor values = tensor.contiguous();
        const std::vector<int64_t> shape(values.sizes().begin(), values.sizes().end());
        const float* data = values.data_ptr<float>();
        if (options.dtype == "f16")
            writer.add_f16(name, shape, data);
        else if (options.dtype == "bf16")
            writer.add_bf16(name, shape, data);
        else
            writer.add_f32(name, shape, data);
        parameters += values.numel();
    }
    try {
        writer.write(weights_path);
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_IO_ERROR, e.what());
    }
    config.save(config_path);

    out << "wrote " << weights_path.string() << ": " << format_count(parameters) << " parameters ("
              << parameters << "), " << options.dtype << ", " << format_bytes(fs::file_size(weights_path)) << '\n'
              << "wrote " << config_path.string() << ": " << config.num_hidden_layers << " layers, hidden "
              << config.hidden_size << ", vocabulary " << config.vocab_size << ", seed " << options.seed << '\n';
}

}  // namespace cadenza::training
