#include "model_directory.h"

#include "error.h"
#include "replacing_file.h"

namespace cadenza::training {

void save_model_directory(const std::filesystem::path& directory, const llama::LlamaWeights& weights,
                          const std::vector<std::pair<std::string, std::string>>& metadata,
                          const std::vector<std::pair<std::string, at::Tensor>>& extra_tensors) {
    std::filesystem::create_directories(directory);
    try {
        file_output::ReplacingFile config(directory / "config.json");
        weights.config.save(config.write_path());
        config.commit();
    } catch (const file_output::OutputFileError& error) {
        throw Error(CDZ_STATUS_IO_ERROR, error.what());
    }
    weights.save(directory / "model.safetensors", metadata, extra_tensors);
}

llama::LlamaWeights load_model_directory(const std::filesystem::path& directory) {
    if (!std::filesystem::is_directory(directory))
        throw Error(CDZ_STATUS_NOT_FOUND, directory.string() + ": not a model directory (config.json + model.safetensors)");
    const llama::LlamaConfig config = llama::LlamaConfig::from_file(directory / "config.json");
    return llama::LlamaWeights::load(directory, config, at::kCPU);
}

}  // namespace cadenza::training
