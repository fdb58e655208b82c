#include "model_init_command.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "error.h"
#include "exit_codes.h"
#include "torch_commands.h"
#include "llama_config.h"
#include "llama_weights.h"
#include "safetensors.h"

namespace cadenza::cli {
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

int init_model(const ModelInitOptions& options) {
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

    std::cout << "wrote " << weights_path.string() << ": " << format_count(parameters) << " parameters ("
              << parameters << "), " << options.dtype << ", " << format_bytes(fs::file_size(weights_path)) << '\n'
              << "wrote " << config_path.string() << ": " << config.num_hidden_layers << " layers, hidden "
              << config.hidden_size << ", vocabulary " << config.vocab_size << ", seed " << options.seed << '\n';
    return exit_ok;
}

Command add_model_init_command(CLI::App& app) {
    auto* model = app.add_subcommand("model", torch_command_description("model"));
    model->require_subcommand(1);
    auto* init = model->add_subcommand("init", "write a LLaMA config and random weights (Hugging Face names)");
    auto options = std::make_shared<ModelInitOptions>();
    init->add_option("--config", options->config, "a Hugging Face config.json (LLaMA or Qwen2)")
        ->required()
        ->check(CLI::ExistingFile);
    init->add_option("--output", options->output, "directory for config.json and model.safetensors")->required();
    init->add_option("--seed", options->seed, "seed of the random weights")->capture_default_str();
    init->add_option("--dtype", options->dtype, "stored type of the weights")
        ->check(CLI::IsMember({"f32", "f16", "bf16"}))
        ->capture_default_str();
    init->add_flag("--force", options->force, "overwrite an existing config.json and model.safetensors");
    return {model, [options] { return init_model(*options); }};
}

}  // namespace cadenza::cli
