#include "model_directory.h"

#include "error.h"

namespace cadenza::training {

void save_model_directory(const std::filesystem::path& directory, const llama::LlamaWeights& weights,
                          const std::vector<std::pair<std::string, std::string>>& metadata,
                          const std::vector<std::pair<std::string, at::Tensor>>& extra_tensors) {
    std::filesystem::create_directories(directory);
    const std::filesystem::path config = directory / "config.json";
    const std::filesystem::path temporary = directory / "config.json.tmp";
    weights.config.save(temporary);
    std::error_code error;
    std::filesystem::rename(temporary, config, error);
    if (error) throw Error(CDZ_STATUS_IO_ERROR, config.string() + ": cannot rename into place: " + error.message());
    weights.save(directory / "model.safetensors", metadata, extra_tensors);
}

llama::LlamaWeights load_model_directory(const std::filesystem::path& directory) {
    if (!std::filesystem::is_directory(directory))
        throw Error(CDZ_STATUS_NOT_FOUND, directory.string() + ": not a model directory (config.json + model.safetensors)");
    const llama::LlamaConfig config = llama::LlamaConfig::from_file(directory / "config.json");
    return llama::LlamaWeights::load(directory, config, at::kCPU);
}

}  // namespace cadenza::training
