// codec.xcodec2: the FSQ on all 65,536 codes, the ISTFT head against a
// direct overlap-add, the rotary embedding by head index, the decoder's
// key list, shapes and determinism, checkpoint errors, and the plugin
// through the core's loader with a random-weight checkpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <tuple>

#include <unistd.h>

#include <ATen/TensorOperators.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/fft_irfft.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/hann_window.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/real.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include "error.h"
#include "managed_tensor.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "safetensors.h"
#include "status_object.h"
#include "xcodec2_decoder.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

using namespace xcodec2;

// A small configuration of the same layout for fast tests.
XCodec2Config small_config() {
    XCodec2Config config;
    config.hidden_dim = 64;
    config.depth = 2;
    config.heads = 4;
    config.pos_emb_dim = 16;
    config.hop_length = 16;
    config.vq_dim = 24;
    return config;
}

std::filesystem::path temp_dir() {
    const auto dir = std::filesystem::temp_directory_path() / ("cadenza_xcodec2_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

void write_safetensors(const seanet::StateDict& tensors, const std::filesystem::path& path, bool f16,
                       const std::string& skip = "") {
    safetensors::Writer writer;
    for (const auto& [name, tensor] : tensors) {
        if (name == skip) continue;
        const at::Tensor values = tensor.contiguous();
        const safetensors::Shape shape(values.sizes().begin(), values.sizes().end());
        if (f16)
            writer.add_f16(name, shape, values.data_ptr<float>());
        else
            writer.add_f32(name, shape, values.data_ptr<float>());
    }
    // Encoder-side keys the decoder leaves unread.
    const float zero[4] = {0, 0, 0, 0};
    writer.add_f32("fc_prior.bias", {4}, zero);
    writer.add_f32("CodecEnc.conv_blocks.0.weight", {2, 2}, zero);
    writer.write(path);
}

std::string message_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const std::exception& e) {
        std::printf("    error: %s\n", e.what());
        return e.what();
    }
    return "";
}

// ---- 1. FSQ -------------------------------------------------------------

TEST(XCodec2Fsq, AllCodesRoundTrip) {
    c10::InferenceMode inference;
    const FiniteScalarQuantizer fsq({4, 4, 4, 4, 4, 4, 4, 4});
    ASSERT_EQ(fsq.codebook_size(), 65536);
    ASSERT_EQ(fsq.dim(), 8);
    const at::Tensor indices = at::arange(65536, at::kLong);
    const at::Tensor codes = fsq.indices_to_codes(indices);
    ASSERT_EQ(codes.sizes(), (at::IntArrayRef{65536, 8}));
    // Every value on the grid {-1, -0.5, 0, 0.5}.
    const at::Tensor doubled = codes * 2;
    EXPECT_TRUE(at::equal(doubled, doubled.round()));
    EXPECT_EQ(codes.min().item<float>(), -1.0f);
    EXPECT_EQ(codes.max().item<float>(), 0.5f);
    // Round trip on every code, and the codes all differ (it is a bijection).
    EXPECT_TRUE(at::equal(fsq.codes_to_indices(codes), indices));
    // The first level is the least significant digit: index 1 = (-0.5, -1, ..., -1),
    // index 4 = (-1, -0.5, -1, ...), index 65535 = all 0.5.
    EXPECT_FLOAT_EQ(codes[1][0].item<float>(), -0.5f);
    EXPECT_FLOAT_EQ(codes[1][1].item<float>(), -1.0f);
    EXPECT_FLOAT_EQ(codes[4][0].item<float>(), -1.0f);
    EXPECT_FLOAT_EQ(codes[4][1].item<float>(), -0.5f);
    EXPECT_TRUE(at::equal(codes[65535], at::zeros({8}) + 0.5));
    // quantize() lands on the grid and is what codes_to_indices inverts;
    // values far beyond the bound saturate at -1 / 0.5.
    const at::Tensor z = at::randn({1000, 8}) * 3;
    const at::Tensor q = fsq.quantize(z);
    EXPECT_TRUE(at::equal(fsq.indices_to_codes(fsq.codes_to_indices(q)), q));
    const at::Tensor far = fsq.quantize(at::zeros({2, 8}) + at::arange(2, at::kFloat).unsqueeze(1) * 200 - 100);
    EXPECT_TRUE(at::equal(far[0], at::zeros({8}) - 1));
    EXPECT_TRUE(at::equal(far[1], at::zeros({8}) + 0.5));
}

TEST(XCodec2Fsq, ResidualFsqDecodesThroughProjectOut) {
    c10::InferenceMode inference;
    seanet::ParameterRecorder recorder(7, c10::Device(c10::kCPU));
    const ResidualFsq quantizer({4, 4, 4, 4, 4, 4, 4, 4}, 32, recorder, "q.");
    ASSERT_EQ(recorder.specs().size(), 4u);
    EXPECT_EQ(recorder.specs()[0].name, "q.project_in.weight");
    EXPECT_EQ(recorder.specs()[0].shape, (seanet::Shape{8, 32}));
    EXPECT_EQ(recorder.specs()[2].name, "q.project_out.weight");
    EXPECT_EQ(recorder.specs()[2].shape, (seanet::Shape{32, 8}));
    const at::Tensor indices = at::randint(65536, {2, 5}, at::kLong);
    const at::Tensor out = quantizer.decode(indices);
    ASSERT_EQ(out.sizes(), (at::IntArrayRef{2, 5, 32}));
    const at::Tensor& w = recorder.tensors()[2].second;
    const at::Tensor& b = recorder.tensors()[3].second;
    const at::Tensor expected = at::matmul(quantizer.fsq().indices_to_codes(indices), w.t()) + b;
    EXPECT_TRUE(at::allclose(out, expected, 1e-5, 1e-6));
}

// ---- 2. ISTFT head ------------------------------------------------------

// The reference ISTFT written out: each frame's inverse DFT (explicit sums in
// double when `explicit_dft`, else irfft per frame), windowed, added at t * hop,
// cut by (n_fft - hop) / 2 on both sides, divided by the summed squared window.
at::Tensor direct_overlap_add(const at::Tensor& spectrum, const at::Tensor& window, int64_t hop, bool explicit_dft) {
    const int64_t n_fft = window.size(0), frames = spectrum.size(2), bins = spectrum.size(1);
    const int64_t total = (frames - 1) * hop + n_fft, pad = (n_fft - hop) / 2;
    const at::Tensor s = spectrum[0].to(at::kComplexDouble).contiguous();
    std::vector<double> y(total, 0.0), envelope(total, 0.0);
    const auto w = window.to(at::kDouble).contiguous();
    const double* wp = w.data_ptr<double>();
    for (int64_t t = 0; t < frames; ++t) {
        std::vector<double> frame(n_fft, 0.0);
        if (explicit_dft) {
            const at::Tensor column = s.select(1, t).contiguous();
            const auto* c = column.data_ptr<c10::complex<double>>();
            for (int64_t n = 0; n < n_fft; ++n) {
                double sum = c[0].real();  // the imaginary parts of DC and Nyquist are ignored, as irfft does
                for (int64_t k = 1; k < bins; ++k) {
                    const double angle = 2 * M_PI * static_cast<double>(k * n) / static_cast<double>(n_fft);
                    if (k == bins - 1 && n_fft % 2 == 0)
                        sum += c[k].real() * std::cos(angle);  // Nyquist: once, real part
                    else
                        sum += 2 * (c[k].real() * std::cos(angle) - c[k].imag() * std::sin(angle));
                }
                frame[n] = sum / static_cast<double>(n_fft);
            }
        } else {
            const at::Tensor time = at::fft_irfft(s.select(1, t), n_fft).contiguous();
            for (int64_t n = 0; n < n_fft; ++n) frame[n] = time.data_ptr<double>()[n];
        }
        for (int64_t n = 0; n < n_fft; ++n) {
            y[t * hop + n] += frame[n] * wp[n];
            envelope[t * hop + n] += wp[n] * wp[n];
        }
    }
    std::vector<double> out;
    for (int64_t i = pad; i < total - pad; ++i) out.push_back(y[i] / envelope[i]);
    return at::from_blob(out.data(), {static_cast<int64_t>(out.size())}, at::kDouble).clone().to(at::kFloat);
}

TEST(XCodec2Istft, MatchesDirectOverlapAdd) {
    c10::InferenceMode inference;
    for (const auto& [n_fft, hop, frames, explicit_dft] :
         std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{{64, 16, 9, true}, {1280, 320, 12, false}, {64, 16, 1, true}}) {
        const at::Tensor window = at::hann_window(n_fft, at::kFloat);
        const at::Tensor spectrum = at::complex(at::randn({1, n_fft / 2 + 1, frames}), at::randn({1, n_fft / 2 + 1, frames}));
        const at::Tensor y = istft_same(spectrum, window, hop);
        ASSERT_EQ(y.sizes(), (at::IntArrayRef{1, frames * hop}));
        const at::Tensor expected = direct_overlap_add(spectrum, window, hop, explicit_dft);
        const double error = (y[0] - expected).abs().max().item<double>();
        std::printf("    n_fft %lld hop %lld frames %lld: max abs error %.3g (signal max %.3g)\n",
                    static_cast<long long>(n_fft), static_cast<long long>(hop), static_cast<long long>(frames), error,
                    expected.abs().max().item<double>());
        EXPECT_LT(error, 1e-5);
    }
}

TEST(XCodec2Istft, HeadBuildsTheSpectrumFromMagnitudeAndPhase) {
    c10::InferenceMode inference;
    const int64_t dim = 8, n_fft = 64, hop = 16, bins = n_fft / 2 + 1;
    seanet::StateDict tensors = {{"h.out.weight", at::randn({n_fft + 2, dim}) * 3},
                                 {"h.out.bias", at::randn({n_fft + 2})},
                                 {"h.istft.window", at::hann_window(n_fft, at::kFloat)}};
    seanet::StateDictSource source(tensors, "test", c10::Device(c10::kCPU));
    const IstftHead head(dim, n_fft, hop, source, "h.");
    source.expect_all_taken();
    const at::Tensor x = at::randn({1, 5, dim});
    const at::Tensor spectrum = head.spectrum(x);
    ASSERT_EQ(spectrum.sizes(), (at::IntArrayRef{1, bins, 5}));
    const at::Tensor pred = (at::matmul(x, tensors[0].second.t()) + tensors[1].second).transpose(1, 2);
    const at::Tensor magnitude = pred.narrow(1, 0, bins).exp().clamp_max(100.0);
    EXPECT_TRUE(at::allclose(spectrum.abs(), magnitude, 1e-4, 1e-5));
    EXPECT_LE(spectrum.abs().max().item<float>(), 100.0f * (1 + 1e-6f));
    const at::Tensor phase = pred.narrow(1, bins, bins);
    EXPECT_TRUE(at::allclose(at::real(spectrum), magnitude * phase.cos(), 1e-4, 1e-4));
    EXPECT_TRUE(at::allclose(at::imag(spectrum), magnitude * phase.sin(), 1e-4, 1e-4));
    const at::Tensor audio = head.forward(x);
    const at::Tensor expected = direct_overlap_add(spectrum, head.window(), hop, true);
    EXPECT_LT((audio[0] - expected).abs().max().item<double>(), 1e-3 * std::max(1.0, expected.abs().max().item<double>()));
}

// ---- 3. Backbone --------------------------------------------------------

TEST(XCodec2Backbone, RotaryEmbeddingRotatesByHeadIndexNotTime) {
    c10::InferenceMode inference;
    const XCodec2Config config = small_config();
    const int64_t heads = config.heads, d = config.head_dim(), time = 3;
    // x: the same vector at every head and time step.
    const at::Tensor base = at::randn({d});
    const at::Tensor x = base.expand({1, heads, time, d}).contiguous();
    const at::Tensor angles_theta = 1.0 / at::pow(10000.0, at::arange(0, d, 2, at::kFloat) / static_cast<double>(d));
    const at::Tensor angles = at::outer(at::arange(heads, at::kFloat), angles_theta);
    const at::Tensor y = rotate_by_head(x, angles.cos().unsqueeze(1), angles.sin().unsqueeze(1));
    for (int64_t h = 0; h < heads; ++h) {
        for (int64_t t = 1; t < time; ++t) EXPECT_TRUE(at::equal(y[0][h][t], y[0][h][0])) << "time changes the rotation";
        for (int64_t i = 0; i < d / 2; ++i) {
            const double a = static_cast<double>(h) / std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(d));
            const double x0 = base[2 * i].item<double>(), x1 = base[2 * i + 1].item<double>();
            EXPECT_NEAR(y[0][h][0][2 * i].item<double>(), x0 * std::cos(a) - x1 * std::sin(a), 1e-4);
            EXPECT_NEAR(y[0][h][0][2 * i + 1].item<double>(), x1 * std::cos(a) + x0 * std::sin(a), 1e-4);
        }
    }
    EXPECT_TRUE(at::equal(y[0][0], x[0][0]));  // head 0: angle 0

    // q and k of a head get the same rotation at every time step, so the scores q.k do not change.
    const at::Tensor q = at::randn({2, heads, 7, d}), k = at::randn({2, heads, 7, d});
    const at::Tensor c = angles.cos().unsqueeze(1), s = angles.sin().unsqueeze(1);
    const at::Tensor rotated = at::matmul(rotate_by_head(q, c, s), rotate_by_head(k, c, s).transpose(-2, -1));
    EXPECT_TRUE(at::allclose(rotated, at::matmul(q, k.transpose(-2, -1)), 1e-4, 1e-4));
}

TEST(XCodec2Backbone, OfficialKeyList) {
    const std::vector<seanet::ParameterSpec> keys = decoder_keys(XCodec2Config::official());
    // quantizer 4, embed 2, prior_net 2 x 8, transformers 12 x 6, final norm 2, post_net 2 x 8, head 3, fc_post_a 2
    EXPECT_EQ(keys.size(), 117u);
    std::set<std::string> names;
    int64_t parameters = 0;
    for (const auto& key : keys) {
        EXPECT_TRUE(names.insert(key.name).second) << "duplicate " << key.name;
        EXPECT_TRUE(key.name.rfind("generator.", 0) == 0 || key.name.rfind("fc_post_a.", 0) == 0) << key.name;
        int64_t n = 1;
        for (int64_t s : key.shape) n *= s;
        parameters += n;
    }
    std::printf("    %zu keys, %lld values\n", keys.size(), static_cast<long long>(parameters));
    auto shape_of = [&](const std::string& name) {
        for (const auto& key : keys)
            if (key.name == name) return key.shape;
        ADD_FAILURE() << "no key " << name;
        return seanet::Shape{};
    };
    EXPECT_EQ(keys.front().name, "generator.quantizer.project_in.weight");
    EXPECT_EQ(shape_of("generator.quantizer.project_in.weight"), (seanet::Shape{8, 2048}));
    EXPECT_EQ(shape_of("generator.quantizer.project_out.weight"), (seanet::Shape{2048, 8}));
    EXPECT_EQ(shape_of("generator.backbone.embed.weight"), (seanet::Shape{1024, 1024, 7}));
    EXPECT_EQ(shape_of("generator.backbone.prior_net.1.conv2.weight"), (seanet::Shape{1024, 1024, 3}));
    EXPECT_EQ(shape_of("generator.backbone.transformers.11.att.c_attn.weight"), (seanet::Shape{3072, 1024}));
    EXPECT_EQ(shape_of("generator.backbone.transformers.0.mlp.fc1.weight"), (seanet::Shape{4096, 1024}));
    EXPECT_EQ(shape_of("generator.backbone.final_layer_norm.bias"), (seanet::Shape{1024}));
    EXPECT_EQ(shape_of("generator.backbone.post_net.0.norm1.weight"), (seanet::Shape{1024}));
    EXPECT_EQ(shape_of("generator.head.out.weight"), (seanet::Shape{1282, 1024}));
    EXPECT_EQ(shape_of("generator.head.istft.window"), (seanet::Shape{1280}));
    EXPECT_EQ(shape_of("fc_post_a.weight"), (seanet::Shape{1024, 2048}));
    EXPECT_EQ(keys.back().name, "fc_post_a.bias");
}

TEST(XCodec2Backbone, ConfigErrorsNameTheField) {
    XCodec2Config config = small_config();
    config.pos_emb_dim = 8;
    EXPECT_NE(message_of([&] { config.validate(); }).find("pos_emb_dim"), std::string::npos);
}

TEST(XCodec2Decoder, ShapesAndDeterminism) {
    c10::InferenceMode inference;
    const XCodec2Config config = small_config();
    seanet::StateDictSource source(random_decoder_state_dict(config, 3), "random", c10::Device(c10::kCPU));
    const XCodec2Decoder decoder(config, source, c10::Device(c10::kCPU));
    source.expect_all_taken();
    const at::Tensor codes = at::randint(65536, {2, 9}, at::kLong);
    const at::Tensor embedding = decoder.embed_codes(codes);
    ASSERT_EQ(embedding.sizes(), (at::IntArrayRef{2, 9, config.hidden_dim}));
    ASSERT_EQ(decoder.backbone(embedding).sizes(), (at::IntArrayRef{2, 9, config.hidden_dim}));
    const at::Tensor audio = decoder.decode(codes);
    ASSERT_EQ(audio.sizes(), (at::IntArrayRef{2, 9 * config.hop_length}));
    EXPECT_TRUE(audio.isfinite().all().item<bool>());
    EXPECT_GT(audio.abs().max().item<float>(), 0.0f);
    EXPECT_TRUE(at::equal(decoder.decode(codes), audio));  // bit for bit
    // Batch rows decode independently.
    EXPECT_TRUE(at::allclose(decoder.decode(codes.narrow(0, 1, 1))[0], audio[1], 1e-4, 1e-5));
    for (int64_t frames : {1, 2, 5}) {
        EXPECT_EQ(decoder.decode(at::randint(65536, {1, frames}, at::kLong)).size(1), frames * config.hop_length);
    }
    EXPECT_NE(message_of([&] { decoder.decode(at::zeros({1, 3}, at::kLong) + 65536); }).find("outside [0, 65536)"),
              std::string::npos);
}

TEST(XCodec2Decoder, CheckpointErrorsNameTheKey) {
    c10::InferenceMode inference;
    const XCodec2Config config = small_config();
    const seanet::StateDict tensors = random_decoder_state_dict(config, 5);
    const auto dir = temp_dir();
    // Loads from a file, leaving the encoder-side keys unread; the same result as from memory.
    write_safetensors(tensors, dir / "small.safetensors", false);
    int64_t ignored = -1;
    const XCodec2Decoder loaded = XCodec2Decoder::load(config, dir / "small.safetensors", c10::Device(c10::kCPU), &ignored);
    EXPECT_EQ(ignored, 2);
    seanet::StateDictSource source(tensors, "memory", c10::Device(c10::kCPU));
    const XCodec2Decoder in_memory(config, source, c10::Device(c10::kCPU));
    const at::Tensor codes = at::randint(65536, {1, 4}, at::kLong);
    EXPECT_TRUE(at::equal(loaded.decode(codes), in_memory.decode(codes)));

    const std::string missing = "generator.backbone.transformers.1.mlp.fc2.weight";
    write_safetensors(tensors, dir / "missing.safetensors", false, missing);
    std::string message = message_of([&] { XCodec2Decoder::load(config, dir / "missing.safetensors", c10::Device(c10::kCPU)); });
    EXPECT_NE(message.find("missing key '" + missing + "'"), std::string::npos) << message;

    // A config of another size: the first key of another shape is named.
    XCodec2Config other = config;
    other.vq_dim = 32;
    message = message_of([&] { XCodec2Decoder::load(other, dir / "small.safetensors", c10::Device(c10::kCPU)); });
    EXPECT_NE(message.find("'generator.quantizer.project_in.weight' has shape"), std::string::npos) << message;

    // An unexpected generator.* key.
    seanet::StateDict extra = tensors;
    extra.emplace_back("generator.backbone.transformers.9.att_norm.weight", at::zeros({64}));
    write_safetensors(extra, dir / "extra.safetensors", false);
    message = message_of([&] { XCodec2Decoder::load(config, dir / "extra.safetensors", c10::Device(c10::kCPU)); });
    EXPECT_NE(message.find("unexpected key 'generator.backbone.transformers.9.att_norm.weight'"), std::string::npos)
        << message;
    std::filesystem::remove_all(dir);
}

// ---- 4. The plugin --------------------------------------------------------

class CodecPlugin {
public:
    explicit CodecPlugin(const std::string& table)
        : config_(load_pipeline_config_string("[codec]\n" + table, "codec.toml", test::source_dir())),
          instance_(*config_.stage("codec"), "cpu", 0) {}

    const cdz_codec_vtable& vtable() const { return instance_.vtable<cdz_codec_vtable>(); }
    void* context() const { return instance_.context(); }

    cdz_codec_info info() const {
        cdz_codec_info info{};
        info.struct_size = sizeof(info);
        throw_if_error(vtable().get_info(instance_.context(), &info), "get_info");
        return info;
    }

    at::Tensor decode(const at::Tensor& codes) const {
        const at::Tensor input = codes.to(at::kInt).contiguous();
        TensorView view(input.data_ptr<int32_t>(), DLDataType{kDLInt, 32, 1}, {input.size(0), input.size(1)});
        ManagedTensor audio;
        throw_if_error(vtable().decode(instance_.context(), view.get(), audio.out()), "decode");
        const auto shape = audio.expect(kDLFloat, 32, 1, "audio");
        return at::from_blob(const_cast<float*>(audio.data<float>()), {shape[0]}, at::kFloat).clone();
    }

    void encode(const at::Tensor& samples) const {
        const at::Tensor input = samples.contiguous();
        TensorView view(input.data_ptr<float>(), DLDataType{kDLFloat, 32, 1}, {input.size(0)});
        ManagedTensor codes;
        throw_if_error(vtable().encode(instance_.context(), view.get(), codes.out()), "encode");
    }

private:
    PipelineConfig config_;
    PluginInstance instance_;
};

TEST(XCodec2Plugin, LoadsARandomCheckpointAndDecodes) {
    c10::InferenceMode inference;
    const XCodec2Config config = XCodec2Config::official();
    const auto dir = temp_dir();
    const auto path = dir / "xcodec2_random.safetensors";
    seanet::StateDict tensors = random_decoder_state_dict(config, 11);
    write_safetensors(tensors, path, true);  // float16 on disk: half the size; loaded as float32
    tensors.clear();

    const CodecPlugin codec("plugin = \"codec.xcodec2\"\ncheckpoint = \"" + path.string() + "\"\nthreads = 1\n");
    const cdz_codec_info info = codec.info();
    EXPECT_EQ(info.sample_rate, 16000u);
    EXPECT_DOUBLE_EQ(info.frame_rate, 50.0);
    EXPECT_EQ(info.codebook_count, 1u);
    EXPECT_EQ(info.codebook_size, 65536u);
    EXPECT_EQ(info.can_encode, 0);
    EXPECT_EQ(info.can_decode, 1);
    EXPECT_EQ(info.can_stream, 0);

    const at::Tensor codes = at::randint(65536, {1, 25}, at::kLong);
    const at::Tensor audio = codec.decode(codes);
    EXPECT_EQ(audio.size(0), 25 * 320);
    EXPECT_TRUE(audio.isfinite().all().item<bool>());
    EXPECT_TRUE(at::equal(codec.decode(codes), audio));

    cdz_status_code code = CDZ_STATUS_OK;
    try {
        codec.encode(at::zeros({16000}));
    } catch (const Error& e) {
        code = e.code();
    }
    EXPECT_EQ(code, CDZ_STATUS_UNSUPPORTED);
    std::string message = message_of([&] { codec.encode(at::zeros({16000})); });
    EXPECT_NE(message.find("codec.xcodec2"), std::string::npos) << message;
    EXPECT_NE(message.find("w2v-BERT"), std::string::npos) << message;
    message = message_of([&] { codec.decode(at::zeros({2, 4}, at::kLong)); });
    EXPECT_NE(message.find("X-codec2 has 1"), std::string::npos) << message;
    std::filesystem::remove_all(dir);
}

TEST(XCodec2Plugin, MissingKeyIsNamed) {
    const XCodec2Config config = XCodec2Config::official();
    const auto dir = temp_dir();
    const auto path = dir / "xcodec2_missing.safetensors";
    // Every official key but one (float16, about 380 MB).
    write_safetensors(random_decoder_state_dict(config, 2), path, true, "fc_post_a.weight");
    const std::string message = message_of(
        [&] { CodecPlugin codec("plugin = \"codec.xcodec2\"\ncheckpoint = \"" + path.string() + "\"\n"); });
    EXPECT_NE(message.find("codec.xcodec2"), std::string::npos) << message;
    EXPECT_NE(message.find("missing key 'fc_post_a.weight'"), std::string::npos) << message;
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cadenza
