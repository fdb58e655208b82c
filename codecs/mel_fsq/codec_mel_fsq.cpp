// codec.mel_fsq: the project's own codec. 16 kHz audio <-> one FSQ codebook
// at 50 frames per second through a log-mel autoencoder, with Griffin-Lim as
// the vocoder (codecs/mel_fsq, docs/codecs.md). The C ABI side is the glue
// the other codec plugins share (codecs/common/codec_plugin_glue.h).
#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include <ATen/ATen.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "codec_plugin_glue.h"
#include "int8_panels.h"
#include "libtorch_boundary.h"
#include "mel_fsq_codec.h"
#include "mel_stream_decoder.h"
#include "row_combinations.h"
#include "thread_policy.h"
#include "torch_device.h"

namespace {

using namespace cadenza;
using namespace cadenza::mel_fsq;

constexpr const char* plugin_name = "codec.mel_fsq";

const char* const decoder_weights_choices[] = {"float32", "float16", "int8", nullptr};

const cdz_param_spec params[] = {
    {"model", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr, "codec weights (.safetensors from `cadenza train codec`)"},
    {"griffin_lim_iterations", CDZ_PARAM_INT, "32", 1, 1, 1000, nullptr, "Griffin-Lim iterations"},
    {"griffin_lim_momentum", CDZ_PARAM_FLOAT, "0.99", 1, 0, 0.999, nullptr, "fast Griffin-Lim momentum; 0: classic"},
    {"griffin_lim_power", CDZ_PARAM_FLOAT, "1.0", 1, 0.5, 3.0, nullptr, "magnitudes are raised to this power first"},
    {"stream_chunk_frames", CDZ_PARAM_INT, "10", 1, 1, 10000, nullptr, "frames of audio a streamed chunk waits for"},
    {"griffin_lim_last_iterations", CDZ_PARAM_INT, "0", 1, 0, 1000, nullptr,
     "Griffin-Lim iterations of a stream's last window, decoded after the last codes; 0: griffin_lim_iterations"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "intra-op threads; 0: one per core"},
    {"convolution_threads", CDZ_PARAM_INT, "0", 1, 0, 64, nullptr,
     "threads of the codec's own that share the convolutions of a voice prompt or of whole decoding (CPU, "
     "the panels of " CADENZA_VECTORIZED_KERNEL "; the result is the same to the bit); 0: one per core"},
    {"decoder_weights", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, decoder_weights_choices,
     "how the decoder's convolutions store their weights: float32, or float16 (each weight rounded to the nearest "
     "half and converted as the kernel loads it: half the bytes every decoded chunk streams through the "
     "caches the backbone's passes share), or int8 (each output's weights in 127 steps of its largest magnitude, "
     "each window of input rounded the same way, the products summed exactly by AVX-512 VNNI or AVX2: a quarter "
     "of the bytes). float16 and int8 need " CADENZA_VECTORIZED_KERNEL "; elsewhere float32, with a warning. "
     "The encoder (a voice prompt's codes) stays float32"},
};

class MelStream : public codec_plugin::MonoDecodeStream {
public:
    MelStream(const MelFsqCodec& codec, const StreamOptions& options) : decoder_(codec, options) {}
    at::Tensor decode(const at::Tensor& codes, bool is_last) override {
        const std::vector<float> audio = decoder_.push(codes.select(0, 0), is_last);
        return at::tensor(audio, at::kFloat);
    }

private:
    MelStreamDecoder decoder_;
};

// codes int64 [1, frames] <-> mono float32 audio at the model's rate.
class MelMonoCodec : public codec_plugin::MonoCodec {
public:
    MelMonoCodec(MelFsqCodec codec, StreamOptions stream, int convolution_threads)
        : codec_(std::move(codec)), stream_(stream), convolution_threads_(convolution_threads) {
        codec_.encoder_stack();  // arranged now, not in a synthesis's voice prompt or first stream
        codec_.decoder_stack();
    }

    cdz_codec_info info() const override {
        const MelCodecConfig& config = codec_.config();
        cdz_codec_info info{};
        info.struct_size = sizeof(info);
        info.sample_rate = static_cast<uint32_t>(config.sample_rate);
        info.frame_rate = config.frame_rate();
        info.codebook_count = 1;
        info.codebook_size = static_cast<uint32_t>(config.codebook_size());
        info.can_encode = 1;
        info.can_decode = 1;
        info.can_stream = 1;
        return info;
    }

    at::Tensor encode(const at::Tensor& samples) const override {
        if (samples.size(0) < codec_.config().n_fft / 2 + 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                        "audio too short to encode: " + std::to_string(samples.size(0)) + " samples");
        return codec_.encode(samples, convolution_threads_).unsqueeze(0).to(at::kCPU);
    }

    at::Tensor decode(const at::Tensor& codes) const override {
        if (codes.size(0) != 1) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "codes must be [1, frames]: one codebook");
        return codec_.decode(codes.select(0, 0), stream_.griffin_lim, convolution_threads_).to(at::kCPU);
    }

    std::unique_ptr<codec_plugin::MonoDecodeStream> decode_stream() const override {
        return std::make_unique<MelStream>(codec_, stream_);
    }

private:
    MelFsqCodec codec_;
    StreamOptions stream_;
    int convolution_threads_;
};

std::unique_ptr<codec_plugin::MonoCodec> make_codec(const cdz_instance_args& args, const sdk::Params& p) {
    llama::apply_thread_policy(static_cast<int>(p.integer("threads")));
    StreamOptions stream;
    stream.griffin_lim.iterations = p.integer("griffin_lim_iterations");
    stream.griffin_lim.momentum = p.number("griffin_lim_momentum");
    stream.griffin_lim.power = p.number("griffin_lim_power");
    stream.chunk_frames = p.integer("stream_chunk_frames");
    stream.last_iterations = p.integer("griffin_lim_last_iterations");
    const int64_t convolution_threads = p.integer("convolution_threads");
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const at::Device device = torch_device(args.device && *args.device ? args.device : "cpu");
    try {
        MelFsqCodec codec = MelFsqCodec::load(p.string("model"), device);
        const std::string decoder_weights = p.string("decoder_weights");
        if (decoder_weights != "float32") {
            const bool int8 = decoder_weights == "int8";
            // Only the CPU's convolutions have panels; elsewhere LibTorch's operators run the model in float32.
            const char* why_not =
                !device.is_cpu()                    ? "applies to the CPU's convolutions, and the codec runs elsewhere"
                : !llama::combine_rows_vectorized() ? "needs " CADENZA_VECTORIZED_KERNEL ", which does not run here"
                : int8 && !llama::int8_panels_supported() ? "needs AVX-512 VNNI or AVX2, which this CPU does not have"
                                                          : nullptr;
            if (!why_not)
                codec.set_decoder_precision(int8 ? llama::PanelPrecision::int8 : llama::PanelPrecision::float16);
            else if (sdk::host().log_enabled(CDZ_LOG_WARN))
                sdk::host().log(CDZ_LOG_WARN, plugin_name,
                                ("decoder_weights = \"" + decoder_weights + "\" " + why_not +
                                 ": the decoder's weights stay float32").c_str());
        }
        return std::make_unique<MelMonoCodec>(std::move(codec), stream,
                                              convolution_threads > 0 ? static_cast<int>(convolution_threads) : cores);
    } catch (const std::runtime_error& error) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, error.what());
    }
}

const cdz_codec_vtable vtable = codec_plugin::vtable_of<make_codec>();

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "1.0.0",
    "log-mel autoencoder with one FSQ codebook (16 kHz, 50 frames/s) and a Griffin-Lim vocoder",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, torch_support::describe_exception);
}
