#include "state_dict_file.h"

#include <fstream>

#include <ATen/ops/from_blob.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "safetensors.h"
#include "torch_checkpoint.h"

namespace cadenza::seanet {

namespace {

at::Tensor float_tensor(std::vector<float> values, const std::vector<int64_t>& shape) {
    return at::from_blob(values.data(), shape, at::kFloat).clone();
}

bool is_zip_archive(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw sdk::Error(CDZ_STATUS_NOT_FOUND, "cannot open the checkpoint " + path.string());
    char magic[2] = {0, 0};
    file.read(magic, 2);
    return magic[0] == 'P' && magic[1] == 'K';
}

StateDict read_torch_archive(const std::filesystem::path& path) {
    const auto checkpoint = torch_checkpoint::Checkpoint::open(path);
    StateDict tensors;
    for (const auto& entry : checkpoint.tensors()) {
        if (!torch_checkpoint::is_floating_point(entry.dtype))
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, checkpoint.where(entry.name) + ": expected floating point, found " +
                                                       torch_checkpoint::dtype_name(entry.dtype));
        tensors.emplace_back(entry.name, float_tensor(checkpoint.read_f32(entry), entry.shape));
    }
    return tensors;
}

StateDict read_safetensors(const std::filesystem::path& path) {
    const safetensors::File file(path);
    StateDict tensors;
    for (const auto& info : file.tensors()) tensors.emplace_back(info.name, float_tensor(file.read_f32(info.name), info.shape));
    return tensors;
}

}  // namespace

StateDict read_state_dict(const std::filesystem::path& path) {
    try {
        return is_zip_archive(path) ? read_torch_archive(path) : read_safetensors(path);
    } catch (const torch_checkpoint::TorchCheckpointError& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, std::string("cannot read the checkpoint: ") + e.what());
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    std::string("cannot read the checkpoint (neither a torch.save zip archive nor safetensors): ") +
                        e.what());
    }
}

}  // namespace cadenza::seanet
