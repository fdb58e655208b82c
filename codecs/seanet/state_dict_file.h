// Reads a checkpoint into a state dict: a torch.save zip archive (EnCodec
// .th, SpeechTokenizer .pt) through the strict torch_checkpoint reader, or
// a safetensors file. Tensors are copied into float32 LibTorch tensors on
// the CPU; the file is not kept open.
#pragma once

#include <filesystem>

#include "parameter_source.h"

namespace cadenza::seanet {

// Throws cadenza::sdk::Error naming the file (and the tensor) when it cannot be
// read, is neither format, or holds a non-floating-point tensor.
StateDict read_state_dict(const std::filesystem::path& path);

}  // namespace cadenza::seanet
