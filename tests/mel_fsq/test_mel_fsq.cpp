// The mel-FSQ codec's parts: FSQ codes, the mel analysis, Griffin-Lim, the
// model file, chunked decoding. Random weights: quality is measured by
// `cadenza codec evaluate`, not here.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "finite_scalar_quantizer.h"
#include "griffin_lim.h"
#include "incremental_mel_decoder.h"
#include "int8_panels.h"
#include "lane_real_fft.h"
#include "mel_convolution_stack.h"
#include "mel_fsq_codec.h"
#include "mel_spectrogram.h"
#include "mel_stream_decoder.h"
#include "row_combinations.h"
#include "safetensors.h"

namespace {

using namespace cadenza::mel_fsq;
namespace llama = cadenza::llama;

std::filesystem::path scratch(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "cadenza_test_mel_fsq";
    std::filesystem::create_directories(dir);
    return dir / name;
}

at::Tensor test_signal(int64_t samples, int64_t rate) {
    // A vowel-like harmonic series with a gliding pitch, plus a little noise.
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(7);
    const at::Tensor t = at::arange(samples, at::kDouble) / static_cast<double>(rate);
    const at::Tensor f0 = 120.0 + 40.0 * t;
    const at::Tensor phase = 2.0 * M_PI * at::cumsum(f0, 0) / static_cast<double>(rate);
    at::Tensor signal = at::zeros({samples}, at::kDouble);
    for (int h = 1; h <= 12; ++h) signal += at::sin(phase * h) / h;
    signal = 0.2 * signal + 0.005 * at::randn({samples}, generator, at::kDouble);
    return signal.to(at::kFloat);
}

MelCodecConfig small_config() {
    MelCodecConfig config;
    config.width = 32;
    config.encoder_blocks = 1;
    config.decoder_blocks = 2;
    return config;
}

TEST(FiniteScalarQuantizer, EveryCodeRoundTripsThroughItsValues) {
    const FiniteScalarQuantizer fsq({8, 8, 8, 4, 4});
    ASSERT_EQ(fsq.codebook_size(), 8192);
    const at::Tensor codes = at::arange(8192, at::kLong).unsqueeze(0);
    const at::Tensor values = fsq.values(codes);  // [1, 5, 8192] in [-1, 1]
    ASSERT_LE(values.abs().max().item<float>(), 1.0f);
    // A latent whose bounded value sits just inside each digit's rounding cell.
    const std::vector<int64_t> levels{8, 8, 8, 4, 4};
    at::Tensor latent = at::empty_like(values);
    for (int64_t d = 0; d < 5; ++d) {
        const double L = static_cast<double>(levels[d]);
        const double half = (L - 1.0) * (1.0 - 1e-3) / 2.0, offset = levels[d] % 2 == 0 ? 0.5 : 0.0;
        const double shift = std::atanh(offset / half);
        const at::Tensor digit = values.select(1, d) * static_cast<double>(levels[d] / 2);
        latent.select(1, d).copy_(at::atanh((digit * 0.95 + offset) / half) - shift);
    }
    EXPECT_TRUE(at::equal(fsq.codes(latent), codes));
    EXPECT_TRUE(at::allclose(fsq.quantize(latent), values));
}

TEST(FiniteScalarQuantizer, RejectsCodesOutOfRange) {
    const FiniteScalarQuantizer fsq({8, 8, 8, 4, 4});
    EXPECT_THROW(fsq.values(at::full({1, 3}, 8192, at::kLong)), std::invalid_argument);
    EXPECT_THROW(fsq.values(at::full({1, 3}, -1, at::kLong)), std::invalid_argument);
}

TEST(MelSpectrogram, FramesAndPeakOfASine) {
    const MelCodecConfig config;
    const MelSpectrogram mel(config);
    const int64_t samples = 16000;
    const at::Tensor t = at::arange(samples, at::kFloat) / 16000.0;
    const at::Tensor sine = 0.5 * at::sin(2.0 * M_PI * 1000.0 * t);
    const at::Tensor log_mel = mel.log_mel(sine);
    ASSERT_EQ(log_mel.size(0), 80);
    ASSERT_EQ(log_mel.size(1), samples / 320 + 1);
    // The loudest mel bin of a 1 kHz tone is the filter centred nearest 1 kHz.
    const at::Tensor bank = mel.filterbank();
    const int64_t bin_1k = 1000 * 1024 / 16000;  // 64
    const int64_t expected = bank.select(1, bin_1k).argmax().item<int64_t>();
    EXPECT_EQ(log_mel.select(1, 25).argmax().item<int64_t>(), expected);
}

// The lane FFT against LibTorch's rfft / irfft, every lane a different frame.
TEST(LaneRealFft, EqualsTorchRfftAndIrfftInEveryLane) {
    constexpr int64_t lanes = LaneRealFft::kLanes;
    for (const int64_t size : {4, 8, 16, 256, 512, 1024, 2048}) {
        LaneRealFft fft(size);
        at::manual_seed(size);
        const at::Tensor frames = at::randn({lanes, size});
        std::vector<const float*> from;
        for (int64_t l = 0; l < lanes; ++l) from.push_back(frames[l].data_ptr<float>());
        fft.load(from.data(), lanes, nullptr);
        std::vector<float> real(static_cast<size_t>(fft.bins() * lanes)), imag(real.size());
        fft.forward(real.data(), imag.data());
        const at::Tensor expected = at::fft_rfft(frames, size, 1);  // [lanes, bins]
        const at::Tensor actual = at::complex(at::from_blob(real.data(), {fft.bins(), lanes}).t(),
                                              at::from_blob(imag.data(), {fft.bins(), lanes}).t());
        const double scale = expected.abs().max().item<double>();
        EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-5 * scale) << "rfft of " << size;

        // irfft ignores the imaginary parts of the first and last bins: so must inverse.
        const at::Tensor spectrum = at::randn({lanes, fft.bins()}, at::kComplexFloat);
        const at::Tensor parts = at::view_as_real(spectrum).permute({1, 0, 2}).contiguous();  // [bins, lanes, 2]
        const at::Tensor spectrum_real = parts.select(2, 0).contiguous(), spectrum_imag = parts.select(2, 1).contiguous();
        fft.inverse(spectrum_real.data_ptr<float>(), spectrum_imag.data_ptr<float>());
        const at::Tensor inverse = at::fft_irfft(spectrum, size, 1);
        at::Tensor got = at::zeros({lanes, size});
        std::vector<float*> to;
        for (int64_t l = 0; l < lanes; ++l) to.push_back(got[l].data_ptr<float>());
        fft.accumulate(to.data(), lanes, nullptr);
        EXPECT_LT((got - inverse).abs().max().item<double>(), 1e-5 * inverse.abs().max().item<double>())
            << "irfft of " << size;

        // With a window: frames times the window in, the window applied again out (accumulated
        // onto what is there); lanes past the count are zeros.
        const at::Tensor window = at::hann_window(size, at::kFloat);
        fft.load(from.data(), 5, window.data_ptr<float>());
        fft.forward(real.data(), imag.data());
        const at::Tensor windowed = at::fft_rfft(frames.narrow(0, 0, 5) * window, size, 1);
        const at::Tensor lanes_out = at::complex(at::from_blob(real.data(), {fft.bins(), lanes}).t(),
                                                 at::from_blob(imag.data(), {fft.bins(), lanes}).t());
        EXPECT_LT((lanes_out.narrow(0, 0, 5) - windowed).abs().max().item<double>(),
                  1e-5 * windowed.abs().max().item<double>())
            << "windowed rfft of " << size;
        EXPECT_EQ(lanes_out.narrow(0, 5, lanes - 5).abs().max().item<double>(), 0.0);
        const at::Tensor before = got.clone();
        fft.inverse(real.data(), imag.data());
        fft.accumulate(to.data(), 5, window.data_ptr<float>());
        const at::Tensor twice = inverse.narrow(0, 0, 5) + frames.narrow(0, 0, 5) * window * window;
        EXPECT_LT((got.narrow(0, 0, 5) - twice).abs().max().item<double>(), 1e-5 * twice.abs().max().item<double>())
            << "windowed irfft of " << size;
        EXPECT_TRUE(at::equal(got.narrow(0, 5, lanes - 5), before.narrow(0, 5, lanes - 5)));
    }
    EXPECT_THROW(LaneRealFft(2), std::invalid_argument);
    EXPECT_THROW(LaneRealFft(1000), std::invalid_argument);
}

TEST(GriffinLim, ReconstructsAMagnitudeAndRepeatsBitForBit) {
    const MelCodecConfig config;
    const MelSpectrogram mel(config);
    const at::Tensor signal = test_signal(16000, 16000);
    const at::Tensor magnitude = mel.magnitude(signal);
    const StftShape shape{config.n_fft, config.hop_length, config.win_length};
    GriffinLimOptions options;
    const at::Tensor a = griffin_lim(magnitude, mel.window(), shape, options);
    const at::Tensor b = griffin_lim(magnitude, mel.window(), shape, options);
    ASSERT_EQ(a.numel(), (magnitude.size(1) - 1) * config.hop_length);
    EXPECT_TRUE(at::equal(a, b));
    const at::Tensor rebuilt = mel.magnitude(a);
    const double convergence = (at::norm(rebuilt - magnitude) / at::norm(magnitude)).item<double>();
    EXPECT_LT(convergence, 0.2) << "spectral convergence after 32 iterations";
    options.iterations = 1;
    const at::Tensor rough = mel.magnitude(griffin_lim(magnitude, mel.window(), shape, options));
    EXPECT_LT(convergence, (at::norm(rough - magnitude) / at::norm(magnitude)).item<double>());
}

// Griffin-Lim as torch.stft / torch.istft define it (what griffin_lim ran on
// before its buffers), from the same initial phases.
at::Tensor reference_griffin_lim(const at::Tensor& magnitude, const at::Tensor& phase, const at::Tensor& window,
                                 const StftShape& stft, const GriffinLimOptions& options) {
    const int64_t length = (magnitude.size(1) - 1) * stft.hop_length;
    at::Tensor angles = at::polar(at::ones_like(magnitude), phase);
    at::Tensor previous = at::zeros_like(angles);
    const double carry = options.momentum / (1.0 + options.momentum);
    auto synthesize = [&](const at::Tensor& unit) {
        return at::istft(magnitude * unit, stft.n_fft, stft.hop_length, stft.win_length, window, true, false, true,
                         length);
    };
    for (int64_t i = 0; i < options.iterations; ++i) {
        const at::Tensor rebuilt = at::stft(synthesize(angles), stft.n_fft, stft.hop_length, stft.win_length, window,
                                            true, "reflect", false, true, true);
        angles = rebuilt - previous * carry;
        angles = angles / (at::abs(angles) + 1e-16);
        previous = rebuilt;
    }
    return synthesize(angles);
}

TEST(GriffinLim, EqualsTorchStftAndIstftFromTheSamePhases) {
    const MelCodecConfig config;
    const MelSpectrogram mel(config);
    const at::Tensor magnitude = mel.magnitude(test_signal(16000, 9000));
    at::manual_seed(5);
    const at::Tensor phase = at::rand(magnitude.sizes()) * (2 * M_PI);
    for (const StftShape shape : {StftShape{config.n_fft, config.hop_length, config.win_length},
                                  StftShape{512, 128, 400}}) {
        const at::Tensor window = at::hann_window(shape.win_length, at::kFloat);
        const at::Tensor m = shape.n_fft == config.n_fft ? magnitude
                                                          : at::stft(test_signal(16000, 9000), 512, 128, 400, window,
                                                                     true, "reflect", false, true, true)
                                                                .abs();
        const at::Tensor p = shape.n_fft == config.n_fft ? phase : at::rand(m.sizes()) * (2 * M_PI);
        for (int64_t iterations : {0, 1, 4})
            for (const bool operators : {false, true}) {  // the CPU's loops, the operators of other devices
                GriffinLimOptions options;
                options.iterations = iterations;
                options.operators_on_cpu = operators;
                const at::Tensor expected = reference_griffin_lim(m, p, window, shape, options);
                const at::Tensor actual = griffin_lim_from(m, p, window, shape, options);
                ASSERT_EQ(actual.sizes(), expected.sizes());
                EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-4 * expected.abs().max().item<double>())
                    << "n_fft " << shape.n_fft << ", " << iterations << " iterations"
                    << (operators ? ", operators" : "");
            }
    }
}

// The lane FFT's phases against torch.stft's, where the bin carries energy
// (elsewhere a phase is rounding noise), reflected ends included.
TEST(GriffinLim, StftPhasesEqualTorchStft) {
    const MelCodecConfig config;
    const MelSpectrogram mel(config);
    for (const int64_t samples : {config.n_fft / 2 + 1, int64_t{3000}, int64_t{9000}}) {
        const at::Tensor audio = test_signal(samples, 16000);
        const StftShape shape{config.n_fft, config.hop_length, config.win_length};
        const at::Tensor spectrum = at::stft(audio, config.n_fft, config.hop_length, config.win_length, mel.window(),
                                             true, "reflect", false, true, true);
        const int64_t frames = spectrum.size(1);
        for (const int64_t wanted : {int64_t{1}, frames - 1, frames}) {
            const at::Tensor phases = stft_phases(audio, mel.window(), shape, wanted);
            ASSERT_EQ(phases.sizes(), (at::IntArrayRef{config.n_fft / 2 + 1, wanted}));
            const at::Tensor expected = spectrum.narrow(1, 0, wanted);
            const at::Tensor loud = expected.abs() > 1e-3 * expected.abs().max();
            const at::Tensor difference = at::abs(at::polar(at::ones_like(phases), phases) - expected / expected.abs());
            EXPECT_LT(difference.masked_select(loud).max().item<double>(), 1e-3) << samples << " samples, " << wanted;
        }
        EXPECT_THROW(stft_phases(audio, mel.window(), shape, spectrum.size(1) + 1), std::invalid_argument);
    }
    EXPECT_THROW(stft_phases(test_signal(config.n_fft / 2, 16000), mel.window(),
                             StftShape{config.n_fft, config.hop_length, config.win_length}, 1),
                 std::invalid_argument);
}

TEST(MelFsqCodec, SavesLoadsAndCodesTheSame) {
    const MelCodecConfig config = small_config();
    MelFsqCodec codec(MelAutoencoder::initialize(config, 3), at::zeros({80}), at::ones({80}) * 2.0);
    const auto path = scratch("codec.safetensors");
    codec.save(path, {{"note", "test"}});
    const MelFsqCodec loaded = MelFsqCodec::load(path);
    const at::Tensor signal = test_signal(8000, 16000);
    const at::Tensor codes = codec.encode(signal);
    EXPECT_EQ(codes.size(0), 8000 / 320 + 1);
    EXPECT_TRUE(at::equal(codes, loaded.encode(signal)));
    EXPECT_GE(codes.min().item<int64_t>(), 0);
    EXPECT_LT(codes.max().item<int64_t>(), 8192);
    const at::Tensor audio = loaded.decode(codes, GriffinLimOptions{});
    EXPECT_EQ(audio.numel(), (codes.size(0) - 1) * 320);
    EXPECT_TRUE(at::isfinite(audio).all().item<bool>());
}

TEST(MelFsqCodec, LoadErrorsNameTheFileAndTheTensor) {
    const MelCodecConfig config = small_config();
    const auto model = MelAutoencoder::initialize(config, 3);
    auto write = [&](const std::string& name, bool drop, bool bad_shape, const std::string& config_json) {
        cadenza::safetensors::Writer writer;
        writer.set_metadata("cadenza.mel_fsq.config", config_json);
        for (const auto& [key, tensor] : model.tensors()) {
            if (drop && key == "decoder.output.bias") continue;
            at::Tensor t = bad_shape && key == "encoder.input.bias" ? at::zeros({7}) : tensor.contiguous();
            writer.add_f32(key, {t.sizes().begin(), t.sizes().end()}, t.data_ptr<float>());
        }
        const at::Tensor mean = at::zeros({80}), std_dev = at::ones({80});
        writer.add_f32("mel_mean", {80}, mean.data_ptr<float>());
        writer.add_f32("mel_std", {80}, std_dev.data_ptr<float>());
        const auto path = scratch(name);
        writer.write(path);
        return path;
    };
    auto message = [](const std::filesystem::path& path) {
        try {
            MelFsqCodec::load(path);
        } catch (const std::runtime_error& error) {
            return std::string(error.what());
        }
        return std::string("no error");
    };
    const auto missing = write("missing.safetensors", true, false, config.to_json());
    EXPECT_NE(message(missing).find("missing.safetensors"), std::string::npos);
    EXPECT_NE(message(missing).find("decoder.output.bias"), std::string::npos);
    const auto misshapen = write("misshapen.safetensors", false, true, config.to_json());
    EXPECT_NE(message(misshapen).find("encoder.input.bias"), std::string::npos);
    std::string unknown = config.to_json();
    unknown.insert(1, "\"widht\": 3, ");
    EXPECT_NE(message(write("unknown.safetensors", false, false, unknown)).find("unknown codec config key 'widht'"),
              std::string::npos);
}

TEST(MelStreamDecoder, ChunksAddUpToTheWholeLengthAndSpectrum) {
    const MelCodecConfig config = small_config();
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::zeros({80}), at::ones({80}));
    const at::Tensor codes = codec.encode(test_signal(32000, 16000));
    const at::Tensor whole = codec.decode(codes, GriffinLimOptions{});
    MelStreamDecoder stream(codec, StreamOptions{});
    std::vector<float> streamed;
    int64_t chunks_with_audio = 0;
    for (int64_t begin = 0; begin < codes.size(0); begin += 7) {
        const int64_t length = std::min<int64_t>(7, codes.size(0) - begin);
        const auto out = stream.push(codes.narrow(0, begin, length), begin + length == codes.size(0));
        chunks_with_audio += out.empty() ? 0 : 1;
        streamed.insert(streamed.end(), out.begin(), out.end());
    }
    ASSERT_EQ(static_cast<int64_t>(streamed.size()), whole.numel());
    EXPECT_GE(chunks_with_audio, 3) << "audio must arrive before the stream ends";
    // Not the same samples (Griffin-Lim's phases differ) but the same spectrum.
    const MelSpectrogram mel(config);
    const at::Tensor target = mel.magnitude_from_log_mel(codec.decode_log_mel(codes));
    auto convergence = [&](const at::Tensor& audio) {
        const at::Tensor m = mel.magnitude(audio);
        const int64_t frames = std::min(m.size(1), target.size(1));
        return (at::norm(m.narrow(1, 0, frames) - target.narrow(1, 0, frames)) / at::norm(target.narrow(1, 0, frames)))
            .item<double>();
    };
    const double whole_error = convergence(whole);
    const double stream_error = convergence(at::tensor(streamed, at::kFloat));
    EXPECT_LT(stream_error, whole_error * 1.6 + 0.05) << "whole " << whole_error << ", streamed " << stream_error;
}

// Both sides of the autoencoder on raw rows equal its operators (the path of
// training and of other devices), and encoding gives the operators' codes.
TEST(MelConvolutionStack, RunsEachSideAsTheAutoencodersOperators) {
    const MelCodecConfig config = small_config();
    const MelAutoencoder model = MelAutoencoder::initialize(config, 7);
    at::manual_seed(7);
    for (const int64_t frames : {1, 2, 5, 37}) {
        const at::Tensor mel = at::randn({config.n_mels, frames});
        const at::Tensor latent = model.encode(mel.unsqueeze(0)).squeeze(0);
        const at::Tensor encoded = MelConvolutionStack(model, "encoder").run(mel);
        ASSERT_EQ(encoded.sizes(), latent.sizes());
        EXPECT_LT((encoded - latent).abs().max().item<float>(), 1e-4f * (1.0f + latent.abs().max().item<float>()))
            << frames << " frames";
        const at::Tensor values = at::rand({config.latent_dim(), frames}) * 2 - 1;
        const at::Tensor decoded = model.decode(values.unsqueeze(0)).squeeze(0);
        const at::Tensor rows = MelConvolutionStack(model, "decoder").run(values);
        ASSERT_EQ(rows.sizes(), decoded.sizes());
        EXPECT_LT((rows - decoded).abs().max().item<float>(), 1e-4f * (1.0f + decoded.abs().max().item<float>()))
            << frames << " frames";
    }
    // Two threads, each convolving half of the frames, give the one thread's result to the bit.
    const MelConvolutionStack encoder(model, "encoder"), decoder(model, "decoder");
    for (const int64_t frames : {1, 31, 32, 33, 100}) {
        const at::Tensor mel = at::randn({config.n_mels, frames});
        EXPECT_TRUE(at::equal(encoder.run(mel, 2), encoder.run(mel, 1))) << frames << " frames";
        const at::Tensor values = at::rand({config.latent_dim(), frames}) * 2 - 1;
        EXPECT_TRUE(at::equal(decoder.run(values, 2), decoder.run(values, 1))) << frames << " frames";
    }
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::randn({80}), at::rand({80}) + 0.5);
    const at::Tensor audio = test_signal(16000, 16000);
    const at::Tensor mel = codec.normalize(codec.analysis().log_mel(audio));
    const at::Tensor operators = codec.quantizer().codes(codec.model().encode(mel.unsqueeze(0))).squeeze(0);
    EXPECT_TRUE(at::equal(codec.encode(audio), operators));
}

// decoder_weights = "float16": the decoder's panels in half precision sum
// exactly as float32 panels of the weights rounded to the nearest half (the
// encoder stays float32). Where no vectorized kernel runs there are no
// panels, and the weights stay float32.
TEST(MelConvolutionStack, HalfWeightsSumAsTheWeightsRoundedToHalf) {
    const MelCodecConfig config = small_config();
    const MelAutoencoder model = MelAutoencoder::initialize(config, 7);
    const MelConvolutionStack half(model, "decoder", llama::PanelPrecision::float16);
    if (!llama::combine_rows_vectorized()) {
        EXPECT_EQ(half.precision(), llama::PanelPrecision::float32);
        GTEST_SKIP() << "no vectorized kernel: the panels' precision does not apply";
    }
    ASSERT_EQ(half.precision(), llama::PanelPrecision::float16);
    std::map<std::string, at::Tensor> rounded = model.tensors();
    for (auto& [name, tensor] : rounded)
        if (name.rfind("decoder.", 0) == 0 && name.size() > 7 && name.substr(name.size() - 7) == ".weight")
            tensor = tensor.to(at::kHalf).to(at::kFloat);
    const MelConvolutionStack reference(MelAutoencoder::from_tensors(config, rounded), "decoder");
    const MelConvolutionStack full(model, "decoder");
    EXPECT_EQ(full.precision(), llama::PanelPrecision::float32);
    at::manual_seed(3);
    for (const int64_t frames : {1, 6, 7, 37}) {
        const at::Tensor values = at::rand({config.latent_dim(), frames}) * 2 - 1;
        const at::Tensor rows = half.run(values);
        EXPECT_TRUE(at::equal(rows, reference.run(values))) << frames << " frames";
        EXPECT_FALSE(at::equal(rows, full.run(values))) << frames << " frames";
    }
    // The codec's own: only the decoder changes.
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::randn({80}), at::rand({80}) + 0.5);
    const at::Tensor audio = test_signal(16000, 16000);
    const at::Tensor codes = codec.encode(audio);
    const at::Tensor full_mel = codec.decode_log_mel(codes);
    MelFsqCodec half_codec = codec;
    half_codec.set_decoder_precision(llama::PanelPrecision::float16);
    EXPECT_EQ(half_codec.decoder_stack().precision(), llama::PanelPrecision::float16);
    EXPECT_EQ(codec.decoder_stack().precision(), llama::PanelPrecision::float32);
    EXPECT_TRUE(at::equal(half_codec.encode(audio), codes));
    const at::Tensor half_mel = half_codec.decode_log_mel(codes);
    EXPECT_FALSE(at::equal(half_mel, full_mel));
    EXPECT_LT((half_mel - full_mel).abs().max().item<float>(), 1e-2f * (1.0f + full_mel.abs().max().item<float>()));
}

// decoder_weights = "int8": each convolution is an int8 PanelMatrix of
// the weights as [out, kernel * in] (combine_int8_panels) (each output window's input rounded on
// its own, so a frame's result does not depend on the frames decoded with
// it), near float32's; the encoder stays float32, so the codes do not change.
TEST(MelConvolutionStack, Int8WeightsAreTheInt8PanelsOverEachWindow) {
    const MelCodecConfig config = small_config();
    const MelAutoencoder model = MelAutoencoder::initialize(config, 7);
    if (!llama::combine_rows_vectorized() || !llama::int8_panels_supported()) {
        if (!llama::int8_panels_supported())
            EXPECT_THROW(MelConvolutionStack(model, "decoder", llama::PanelPrecision::int8), std::invalid_argument);
        GTEST_SKIP() << "no int8 kernel: int8 panels do not run here";
    }
    const MelConvolutionStack int8(model, "decoder", llama::PanelPrecision::int8);
    const MelConvolutionStack full(model, "decoder");
    ASSERT_EQ(int8.precision(), llama::PanelPrecision::int8);
    at::manual_seed(3);
    const MelConvolutionStack::Convolution& conv = int8[1];
    const int64_t count = 9;
    const at::Tensor x = at::rand({(count + conv.kernel - 1) * conv.in}) * 2 - 1;
    std::vector<float> y(static_cast<size_t>(count * conv.out)), alone(static_cast<size_t>(conv.out));
    int8.apply(1, x.data_ptr<float>(), count, y.data());
    const llama::PanelMatrix reference = llama::PanelMatrix::pack(conv.weight, {}, llama::PanelPrecision::int8);
    std::vector<float> expected(y.size());
    llama::combine_panels(x.data_ptr<float>(), count, conv.in, reference, conv.bias.data_ptr<float>(), expected.data(),
                          conv.out);
    EXPECT_EQ(y, expected);
    for (int64_t t = 0; t < count; ++t) {
        int8.apply(1, x.data_ptr<float>() + t * conv.in, 1, alone.data());
        EXPECT_TRUE(std::equal(alone.begin(), alone.end(), y.begin() + t * conv.out)) << "frame " << t;
    }
    for (const int64_t frames : {1, 7, 37}) {
        const at::Tensor values = at::rand({config.latent_dim(), frames}) * 2 - 1;
        const at::Tensor rows = int8.run(values), exact = full.run(values);
        EXPECT_FALSE(at::equal(rows, exact)) << frames << " frames";
        EXPECT_LT((rows - exact).abs().max().item<float>(), 5e-2f * (1.0f + exact.abs().max().item<float>()))
            << frames << " frames";
        EXPECT_TRUE(at::equal(int8.run(values, 2), rows)) << frames << " frames on two threads";
    }
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::randn({80}), at::rand({80}) + 0.5);
    const at::Tensor audio = test_signal(16000, 16000);
    MelFsqCodec int8_codec = codec;
    int8_codec.set_decoder_precision(llama::PanelPrecision::int8);
    EXPECT_TRUE(at::equal(int8_codec.encode(audio), codec.encode(audio)));
    EXPECT_EQ(int8_codec.decoder_stack().precision(), llama::PanelPrecision::int8);
}

// Each frame computed once, as the codes arrive in pieces of any size (an
// empty last piece too), is whole decoding's frame; frames become final
// exactly when the decoder's context after them has arrived.
TEST(IncrementalMelDecoder, FramesEqualWholeDecodingWhateverThePieces) {
    const MelCodecConfig config = small_config();
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::randn({80}), at::rand({80}) + 0.5);
    const at::Tensor codes = codec.encode(test_signal(16000, 16000));
    const int64_t frames = codes.size(0), context = config.decoder_context();
    const at::Tensor whole = codec.decode_log_mel(codes);
    for (const std::vector<int64_t>& pieces :
         std::vector<std::vector<int64_t>>{{frames}, {1, 2, 3, 5, 8, 13, 21}, {7}, {context - 1}, {frames - 1, 1, 0}}) {
        IncrementalMelDecoder decoder(codec);
        int64_t pushed = 0;
        for (size_t p = 0; pushed < frames || p < pieces.size(); ++p) {
            const int64_t length = std::min(pieces[std::min(p, pieces.size() - 1)], frames - pushed);
            const bool last = pushed + length == frames && p + 1 >= pieces.size();
            decoder.push(codes.narrow(0, pushed, length), last);
            pushed += length;
            ASSERT_EQ(decoder.final_frames(), last ? frames : std::max<int64_t>(0, pushed - context));
            if (last) break;
        }
        const at::Tensor streamed = decoder.log_mel(0, frames);
        ASSERT_EQ(streamed.sizes(), whole.sizes());
        EXPECT_LT((streamed - whole).abs().max().item<float>(), 1e-4f * (1.0f + whole.abs().max().item<float>()));
        EXPECT_THROW(decoder.push(codes.narrow(0, 0, 1), true), std::logic_error);
        EXPECT_THROW(decoder.log_mel(0, frames + 1), std::out_of_range);
    }
    IncrementalMelDecoder short_sequence(codec);
    short_sequence.push(codes.narrow(0, 0, 3), true);
    EXPECT_LT((short_sequence.log_mel(0, 3) - codec.decode_log_mel(codes.narrow(0, 0, 3))).abs().max().item<float>(),
              1e-4f * (1.0f + whole.abs().max().item<float>()));
}

// griffin_lim_last_iterations: only the window decoded with the last codes
// changes; the audio before it is the same sample for sample, and the
// whole still has whole decoding's length.
TEST(MelStreamDecoder, FewerLastIterationsChangeOnlyTheLastWindow) {
    const MelCodecConfig config = small_config();
    MelFsqCodec codec(MelAutoencoder::initialize(config, 5), at::zeros({80}), at::ones({80}));
    const at::Tensor codes = codec.encode(test_signal(32000, 16000));
    auto chunks = [&](int64_t last_iterations) {
        StreamOptions options;
        options.last_iterations = last_iterations;
        MelStreamDecoder stream(codec, options);
        std::vector<std::vector<float>> out;
        for (int64_t begin = 0; begin < codes.size(0); begin += 7) {
            const int64_t length = std::min<int64_t>(7, codes.size(0) - begin);
            out.push_back(stream.push(codes.narrow(0, begin, length), begin + length == codes.size(0)));
        }
        return out;
    };
    const auto full = chunks(0), cheap = chunks(4);
    ASSERT_EQ(full.size(), cheap.size());
    size_t total = 0;
    for (size_t i = 0; i + 1 < full.size(); ++i) {
        EXPECT_EQ(cheap[i], full[i]) << "chunk " << i;
        total += full[i].size();
    }
    ASSERT_EQ(cheap.back().size(), full.back().size());
    EXPECT_NE(cheap.back(), full.back());
    EXPECT_EQ(static_cast<int64_t>(total + full.back().size()), codec.decode(codes, GriffinLimOptions{}).numel());
    EXPECT_THROW(MelStreamDecoder(codec, StreamOptions{GriffinLimOptions{}, 10, 8, -1}), std::invalid_argument);
}

}  // namespace
