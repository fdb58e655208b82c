#include "mel_codec_training.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

#include "corpus_manifest.h"
#include "error.h"
#include "lr_schedule.h"
#include "mel_fsq_codec.h"
#include "progress.h"
#include "resampler.h"
#include "safetensors.h"
#include "thread_policy.h"
#include "wav_file.h"

namespace cadenza::training {
namespace {

using mel_fsq::MelAutoencoder;
using mel_fsq::MelCodecConfig;
using mel_fsq::MelFsqCodec;

constexpr double beta1 = 0.9, beta2 = 0.99, adam_eps = 1e-8;

std::vector<int64_t> parse_levels(const std::string& text) {
    std::vector<int64_t> levels;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        try {
            size_t used = 0;
            levels.push_back(std::stoll(item, &used));
            if (used != item.size()) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--levels must be comma-separated integers, not '" + text + "'");
        }
    }
    return levels;
}

struct MelSet {
    std::vector<at::Tensor> mels;  // log-mel [n_mels, frames] per utterance
    int64_t frames = 0;
    double seconds = 0;
};

MelSet load_mels(const std::vector<speech_corpus::Utterance>& utterances, const mel_fsq::MelSpectrogram& analysis,
                 const std::string& label, std::ostream& log, bool show) {
    MelSet set;
    const int64_t rate = analysis.config().sample_rate;
    auto last = std::chrono::steady_clock::now();
    for (size_t i = 0; i < utterances.size(); ++i) {
        audio::Waveform wave = audio::read_waveform(utterances[i].path);
        if (wave.sample_rate != rate) wave.samples = audio::resample(wave.samples, wave.sample_rate, rate);
        if (wave.samples.size() < static_cast<size_t>(analysis.config().n_fft)) continue;
        const at::Tensor audio = at::from_blob(wave.samples.data(), {static_cast<int64_t>(wave.samples.size())}, at::kFloat);
        at::Tensor mel = analysis.log_mel(audio).contiguous();
        set.frames += mel.size(1);
        set.seconds += static_cast<double>(wave.samples.size()) / rate;
        set.mels.push_back(std::move(mel));
        const auto now = std::chrono::steady_clock::now();
        if (show && (now - last > std::chrono::seconds(1) || i + 1 == utterances.size())) {
            log << label << ": " << (i + 1) << "/" << utterances.size() << " utterances, "
                << format_duration(set.seconds) << " of audio\n"
                << std::flush;
            last = now;
        }
    }
    return set;
}

// Per-bin mean and standard deviation over every frame, in double precision.
std::pair<at::Tensor, at::Tensor> bin_statistics(const MelSet& set, int64_t n_mels) {
    at::Tensor sum = at::zeros({n_mels}, at::kDouble), square = at::zeros({n_mels}, at::kDouble);
    for (const auto& mel : set.mels) {
        const at::Tensor m = mel.to(at::kDouble);
        sum += m.sum(1);
        square += (m * m).sum(1);
    }
    const double n = static_cast<double>(set.frames);
    const at::Tensor mean = sum / n;
    const at::Tensor variance = at::clamp_min(square / n - mean * mean, 1e-8);
    return {mean.to(at::kFloat), at::sqrt(variance).to(at::kFloat)};
}

struct AdamState {
    std::map<std::string, at::Tensor> first, second;
    int64_t step = 0;
};

const char* const latent_smoothness_key = "cadenza.train.latent_smoothness";

std::map<std::string, std::string> settings_of(const MelCodecJob& job, const MelCodecConfig& config) {
    const TrainOptions& o = job.options;
    char lr[160];
    std::snprintf(lr, sizeof(lr), "%.17g/%lld/%.17g/%.17g/%.17g", o.lr, static_cast<long long>(o.warmup), o.min_lr_ratio,
                  o.weight_decay, o.clip);
    std::map<std::string, std::string> settings = {{"cadenza.train.config", config.to_json()},
                                                   {"cadenza.train.steps", std::to_string(o.steps)},
                                                   {"cadenza.train.batch", std::to_string(o.batch)},
                                                   {"cadenza.train.crop_frames", std::to_string(o.seq_len)},
                                                   {"cadenza.train.optimizer", lr},
                                                   {"cadenza.train.seed", std::to_string(o.seed)},
                                                   {"cadenza.train.max_utterances", std::to_string(job.max_utterances)}};
    // Only when used, so that checkpoints from before the options still resume.
    if (!job.init_from.empty()) settings["cadenza.train.init_from"] = job.init_from.string();
    if (job.latent_smoothness > 0) {
        char weight[64];
        std::snprintf(weight, sizeof(weight), "%.17g", job.latent_smoothness);
        settings[latent_smoothness_key] = weight;
    }
    return settings;
}

void write_state(const std::filesystem::path& path, const MelFsqCodec& codec, const AdamState& adam,
                 const std::map<std::string, std::string>& settings) {
    safetensors::Writer writer;
    for (const auto& [key, value] : settings) writer.set_metadata(key, value);
    auto add = [&](const std::string& name, const at::Tensor& tensor) {
        const at::Tensor cpu = tensor.detach().to(at::kCPU, at::kFloat).contiguous();
        writer.add_f32(name, safetensors::Shape(cpu.sizes().begin(), cpu.sizes().end()), cpu.data_ptr<float>());
    };
    for (const auto& [name, tensor] : codec.model().tensors()) {
        add("weight/" + name, tensor);
        add("adam_m/" + name, adam.first.at(name));
        add("adam_v/" + name, adam.second.at(name));
    }
    add("mel_mean", codec.mel_mean());
    add("mel_std", codec.mel_std());
    writer.add_i64("adam_step", {1}, &adam.step);
    writer.write(path);
}

at::Tensor read_tensor(const safetensors::File& file, const std::string& name) {
    const auto& info = file.info(name);
    return at::tensor(file.read_f32(name), at::kFloat).view(info.shape).clone();
}

// The batch of step `step` depends only on the seed and the step, so a resumed
// run sees the same batches as an uninterrupted one.
at::Tensor sample_batch(const std::vector<const at::Tensor*>& pool, int64_t batch, int64_t crop, uint64_t seed,
                        int64_t step) {
    std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step));
    std::vector<at::Tensor> crops;
    for (int64_t b = 0; b < batch; ++b) {
        const at::Tensor& mel = *pool[random() % pool.size()];
        const int64_t start = static_cast<int64_t>(random() % static_cast<uint64_t>(mel.size(1) - crop + 1));
        crops.push_back(mel.narrow(1, start, crop));
    }
    return at::stack(crops);
}

}  // namespace

TrainResult run_mel_codec_job(const MelCodecJob& job, std::ostream& out, std::ostream& log) {
    const TrainOptions& o = job.options;
    if (o.steps < 1 || o.batch < 1 || o.seq_len < 8) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "need --steps >= 1, --batch >= 1, --seq-len >= 8");
    if (o.length_buckets)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--length-buckets is for token corpora; the codec trains on fixed-length crops");
    MelCodecConfig config;
    config.width = job.width;
    config.encoder_blocks = job.encoder_blocks;
    config.decoder_blocks = job.decoder_blocks;
    config.levels = parse_levels(job.levels);
    try {
        config.validate();
    } catch (const std::invalid_argument& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, std::string("codec config: ") + error.what());
    }
    const int threads = llama::apply_thread_policy(static_cast<int>(o.threads));
    at::manual_seed(o.seed);

    std::filesystem::create_directories(job.output);
    const auto codec_path = job.output / "codec.safetensors";
    const auto state_path = job.output / "training_state.safetensors";
    if (std::filesystem::exists(state_path) && !o.resume)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() + " exists: pass --resume to continue it, or choose another --output");
    if (!std::filesystem::exists(state_path) && o.resume)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() + ": no checkpoint to resume");

    const auto corpus = speech_corpus::read_corpus_manifest(job.manifest.string());
    auto train = speech_corpus::select_split(corpus, "train");
    auto dev = speech_corpus::select_split(corpus, "dev");
    if (job.max_utterances > 0 && static_cast<int64_t>(train.size()) > job.max_utterances)
        train.resize(static_cast<size_t>(job.max_utterances));
    if (dev.size() > 200) dev.resize(200);
    if (train.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, job.manifest.string() + ": the train split is empty");

    const mel_fsq::MelSpectrogram analysis(config);
    const MelSet train_mels = load_mels(train, analysis, "log-mel (train)", log, o.progress);
    const MelSet dev_mels = load_mels(dev, analysis, "log-mel (dev)", log, o.progress);
    std::vector<const at::Tensor*> pool;
    for (const auto& mel : train_mels.mels)
        if (mel.size(1) >= o.seq_len) pool.push_back(&mel);
    if (pool.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "no training utterance is as long as --seq-len frames");

    const auto settings = settings_of(job, config);
    AdamState adam;
    std::optional<MelFsqCodec> codec;
    if (o.resume) {
        const safetensors::File state(state_path);
        for (const auto& [key, value] : settings) {
            const auto found = state.metadata().find(key);
            // A finished run may be continued with more steps: the cosine
            // then ends at the new last step (a warm restart of its tail).
            if (key == "cadenza.train.steps" && found != state.metadata().end() && found->second != value) {
                const int64_t stored = std::stoll(found->second);
                if (o.steps < stored)
                    throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() + ": --steps " + std::to_string(o.steps) +
                                " is below the checkpoint's run of " + found->second + " steps");
                log << "note: continuing the checkpoint's " << stored << "-step run to " << o.steps
                    << " steps; the learning rate follows the longer schedule from here\n";
                continue;
            }
            if (found == state.metadata().end() || found->second != value)
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() + ": the checkpoint was made with other settings (" + key +
                            "); resume with the same options");
        }
        if (state.metadata().count(latent_smoothness_key) && !settings.count(latent_smoothness_key))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() + ": the checkpoint was made with other settings (" +
                                                         latent_smoothness_key + "); resume with the same options");
        std::map<std::string, at::Tensor> weights;
        for (const auto& [name, shape] : MelAutoencoder::expected_shapes(config)) {
            weights[name] = read_tensor(state, "weight/" + name);
            adam.first[name] = read_tensor(state, "adam_m/" + name);
            adam.second[name] = read_tensor(state, "adam_v/" + name);
        }
        adam.step = state.read_i64("adam_step", {1}).at(0);
        codec.emplace(MelAutoencoder::from_tensors(config, std::move(weights)), read_tensor(state, "mel_mean"),
                      read_tensor(state, "mel_std"));
    } else {
        if (!job.init_from.empty()) {
            MelFsqCodec initial = [&] {
                try {
                    return MelFsqCodec::load(job.init_from);
                } catch (const std::runtime_error& error) {
                    throw Error(CDZ_STATUS_INVALID_CONFIG, std::string("--init-from: ") + error.what());
                }
            }();
            if (initial.config().to_json() != config.to_json())
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, job.init_from.string() + ": its architecture " +
                                                             initial.config().to_json() + " is not this run's " +
                                                             config.to_json() + " (set --width, --levels, ...)");
            std::map<std::string, at::Tensor> weights;
            for (const auto& [name, tensor] : initial.model().tensors()) weights[name] = tensor.detach().clone();
            codec.emplace(MelAutoencoder::from_tensors(config, std::move(weights)), initial.mel_mean().clone(),
                          initial.mel_std().clone());
        } else {
            auto [mean, std_dev] = bin_statistics(train_mels, config.n_mels);
            codec.emplace(MelAutoencoder::initialize(config, o.seed), mean, std_dev);
        }
        for (const auto& [name, tensor] : codec->model().tensors()) {
            adam.first[name] = at::zeros_like(tensor);
            adam.second[name] = at::zeros_like(tensor);
        }
    }
    std::vector<std::pair<std::string, at::Tensor>> parameters;
    for (const auto& [name, tensor] : codec->model().tensors()) {
        tensor.requires_grad_(true);
        parameters.emplace_back(name, tensor);
    }
    int64_t parameter_count = 0;
    for (const auto& p : parameters) parameter_count += p.second.numel();

    out << "codec: mel-FSQ, " << config.codebook_size() << " codes (levels " << job.levels << "), width "
        << config.width << ", " << config.encoder_blocks << "+" << config.decoder_blocks << " blocks, "
        << parameter_count << " parameters\n"
        << "train: " << train_mels.mels.size() << " utterances, " << format_duration(train_mels.seconds)
        << " of audio; dev: " << dev_mels.mels.size() << " utterances\nthreads: " << threads << '\n'
        << std::flush;

    const LrSchedule schedule(o.lr, o.warmup, o.steps, o.min_lr_ratio);
    TrainResult result;
    result.first_step = adam.step;
    result.train_sequences = static_cast<int64_t>(train_mels.mels.size());
    result.heldout_sequences = static_cast<int64_t>(dev_mels.mels.size());
    Progress progress(o.label, adam.step, o.steps, o.progress, log);
    auto checkpoint = [&] {
        at::NoGradGuard no_grad;
        write_state(state_path, *codec, adam, settings);
        codec->save(codec_path, {{"cadenza.train.steps_done", std::to_string(adam.step)},
                                 {"cadenza.train.manifest", job.manifest.string()}});
    };
    std::vector<double> recent;
    const int64_t last = o.stop_after > 0 ? std::min(o.stop_after, o.steps) : o.steps;
    while (adam.step < last) {
        const int64_t step = adam.step + 1;
        const at::Tensor target = codec->normalize(sample_batch(pool, o.batch, o.seq_len, o.seed, step));
        const auto& fsq = codec->quantizer();
        const at::Tensor latent = codec->model().encode(target);
        const at::Tensor reconstruction = codec->model().decode(fsq.quantize(latent));
        at::Tensor loss = at::abs(reconstruction - target).mean();
        if (job.latent_smoothness > 0) {
            const at::Tensor bounded = fsq.bound(latent);  // [batch, dims, frames], in digit steps
            const int64_t frames = bounded.size(2);
            loss = loss + job.latent_smoothness *
                              at::abs(bounded.narrow(2, 1, frames - 1) - bounded.narrow(2, 0, frames - 1)).mean();
        }
        for (auto& p : parameters) p.second.mutable_grad() = at::Tensor();
        loss.backward();
        {
            at::NoGradGuard no_grad;
            double norm_square = 0;
            for (auto& p : parameters) norm_square += p.second.grad().pow(2).sum().item<double>();
            const double norm = std::sqrt(norm_square);
            const double scale = o.clip > 0 && norm > o.clip ? o.clip / norm : 1.0;
            const double lr = schedule.at(step);
            const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
            const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
            for (auto& [name, weight] : parameters) {
                const at::Tensor grad = weight.grad() * scale;
                at::Tensor& m = adam.first.at(name);
                at::Tensor& v = adam.second.at(name);
                m.mul_(beta1).add_(grad, 1.0 - beta1);
                v.mul_(beta2).addcmul_(grad, grad, 1.0 - beta2);
                if (weight.dim() > 1 && o.weight_decay > 0) weight.mul_(1.0 - lr * o.weight_decay);
                weight.addcdiv_(m / correction1, (v / correction2).sqrt_().add_(adam_eps), -lr);
            }
            adam.step = step;
            const double value = loss.item<double>();
            if (!std::isfinite(value)) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the loss became " + std::to_string(value) + " at step " + std::to_string(step));
            recent.push_back(value);
            if (recent.size() > 20) recent.erase(recent.begin());
            progress.update(step, value, o.batch * o.seq_len, lr);
        }
        const bool stopping = o.interrupt && o.interrupt->load();
        if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || stopping || step == last) checkpoint();
        if (stopping) {
            result.interrupted = true;
            break;
        }
    }
    progress.finish();
    result.last_step = adam.step;
    result.finished = adam.step == o.steps;
    result.tokens = progress.tokens();
    result.seconds = progress.elapsed_seconds();
    result.tokens_per_second = progress.tokens_per_second();
    for (double value : recent) result.final_loss += value / static_cast<double>(recent.size());

    // Held-out reconstruction on whole dev utterances, and how many codes they use.
    at::NoGradGuard no_grad;
    double l1_sum = 0, frames = 0, movement_sum = 0, moves = 0;
    std::vector<int64_t> used(static_cast<size_t>(config.codebook_size()), 0);
    for (const auto& mel : dev_mels.mels) {
        const at::Tensor normalized = codec->normalize(mel).unsqueeze(0);
        const at::Tensor latent = codec->model().encode(normalized);
        const at::Tensor codes = codec->quantizer().codes(latent);
        const at::Tensor values = codec->quantizer().values(codes);  // [1, dims, frames] in [-1, 1]
        const at::Tensor decoded = codec->model().decode(values);
        l1_sum += at::abs(decoded - normalized).mean(1).sum().item<double>();
        const int64_t length = values.size(2);
        if (length > 1) {
            movement_sum += at::abs(values.narrow(2, 1, length - 1) - values.narrow(2, 0, length - 1)).sum().item<double>();
            moves += static_cast<double>(length - 1);
        }
        frames += static_cast<double>(mel.size(1));
        const at::Tensor flat = codes.flatten().contiguous();
        const int64_t* data = flat.data_ptr<int64_t>();
        for (int64_t i = 0; i < flat.numel(); ++i) ++used[static_cast<size_t>(data[i])];
    }
    double entropy = 0;
    int64_t distinct = 0;
    for (int64_t count : used)
        if (count > 0) {
            ++distinct;
            const double p = static_cast<double>(count) / frames;
            entropy -= p * std::log2(p);
        }
    result.heldout.add("l1_normalized_log_mel", Unit::nats, l1_sum, frames);
    // The L1 distance between consecutive frames' FSQ latents, summed over the
    // dimensions: what a TTS target must predict beyond the previous code.
    result.heldout.add("code movement per frame", Unit::nats, movement_sum, moves);
    char line[384];
    std::snprintf(line, sizeof(line),
                  "steps %lld-%lld in %s (%.0f frames/s); train L1 %.4f; dev L1 %.4f (normalized log-mel) over %.0f "
                  "frames; %lld distinct codes, %.2f bits/frame; codes move %.3f per frame (FSQ latent L1)\n",
                  static_cast<long long>(result.first_step), static_cast<long long>(result.last_step),
                  format_duration(result.seconds).c_str(), result.tokens_per_second, result.final_loss,
                  frames > 0 ? l1_sum / frames : 0.0, frames, static_cast<long long>(distinct), entropy,
                  moves > 0 ? movement_sum / moves : 0.0);
    out << line << "codec: " << codec_path.string() << '\n' << std::flush;
    return result;
}

}  // namespace cadenza::training
