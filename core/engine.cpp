#include "engine.h"
#include "codec_calls.h"
#include "decoding_loop.h"
#include "engine_stages.h"
#include "logits_processor_factory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "error.h"
#include "host_api.h"
#include "managed_tensor.h"
#include "random_stream.h"
#include "text_to_speak.h"
#include "resampler.h"
#include "wav_file.h"
#include "sampling.h"
#include "status_object.h"
#include "synthesis_audio_stream.h"

namespace cadenza {
namespace {

// The text and audio ranges and the two special tokens must lie inside the
// vocabulary and apart: an end token among the text ids, or a start token
// that is also a code, decodes silently wrong.
void check_token_layout(const cdz_backbone_info& b, const std::string& where) {
    auto range = [](int64_t begin, int64_t count) { return std::to_string(begin) + ".." + std::to_string(begin + count - 1); };
    auto fail = [&](const std::string& what) { throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": " + what); };
    auto inside = [](int64_t token, int64_t begin, int64_t count) { return token >= begin && token < begin + count; };
    if (b.text_token_offset < 0 || b.text_token_count < 0 || b.text_token_offset + b.text_token_count > b.vocab_size)
        fail("the text tokens " + range(b.text_token_offset, b.text_token_count) + " do not fit the vocabulary of " +
             std::to_string(b.vocab_size));
    if (b.audio_token_offset < 0 || b.audio_token_count <= 0 || b.audio_token_offset + b.audio_token_count > b.vocab_size)
        fail("the audio tokens " + range(b.audio_token_offset, b.audio_token_count) + " do not fit the vocabulary of " +
             std::to_string(b.vocab_size));
    if (b.text_token_count > 0 && b.text_token_offset < b.audio_token_offset + b.audio_token_count &&
        b.audio_token_offset < b.text_token_offset + b.text_token_count)
        fail("the text tokens " + range(b.text_token_offset, b.text_token_count) + " and the audio tokens " +
             range(b.audio_token_offset, b.audio_token_count) + " overlap");
    const std::pair<const char*, int32_t> special[] = {{"audio_start_token", b.audio_start_token},
                                                       {"end_token", b.end_token}};
    for (const auto& [name, token] : special) {
        if (token < 0) continue;
        if (token >= b.vocab_size)
            fail(std::string(name) + " " + std::to_string(token) + " is outside the vocabulary of " +
                 std::to_string(b.vocab_size));
        if (inside(token, b.audio_token_offset, b.audio_token_count))
            fail(std::string(name) + " " + std::to_string(token) + " is one of the audio tokens " +
                 range(b.audio_token_offset, b.audio_token_count));
        if (inside(token, b.text_token_offset, b.text_token_count))
            fail(std::string(name) + " " + std::to_string(token) + " is one of the text tokens " +
                 range(b.text_token_offset, b.text_token_count));
    }
    if (b.audio_start_token >= 0 && b.audio_start_token == b.end_token)
        fail("audio_start_token and end_token are both " + std::to_string(b.end_token));
}

// decode_audio: longer code sequences are decoded through the codec's stream,
// in pieces; beyond an hour they are refused.
constexpr int64_t whole_decode_frames = 3000;
constexpr int64_t long_decode_chunk_frames = 500;
constexpr double max_decoded_seconds = 3600.0;

void check_max_audio_seconds(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "max_audio_seconds must be a finite number >= 0 (0: the pipeline's)");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Engine::Engine(PipelineConfig config) : config_(std::move(config)), stages_(std::make_unique<EngineStages>()) {
    EngineStages& s = *stages_;
    auto create = [&](const char* table) -> std::unique_ptr<PluginInstance> {
        const StageConfig* stage = config_.stage(table);
        return stage ? std::make_unique<PluginInstance>(*stage, config_.device, config_.seed) : nullptr;
    };
    s.frontend = create("frontend");
    s.codec = create("codec");
    s.backbone = create("backbone");
    s.drafter = create("draft");
    s.acceptor = create("acceptor");

    auto context = [&](const PluginInstance& instance) { return config_.source + ": " + instance.name(); };
    if (s.frontend) {
        const auto& vtable = s.frontend->vtable<cdz_frontend_vtable>();
        throw_if_error(vtable.get_info(s.frontend->context(), &s.frontend_info), context(*s.frontend));
    }
    if (s.codec) {
        const auto& vtable = s.codec->vtable<cdz_codec_vtable>();
        throw_if_error(vtable.get_info(s.codec->context(), &s.codec_info), context(*s.codec));
        if (!s.codec_info.can_decode)
            throw Error(CDZ_STATUS_INVALID_CONFIG, context(*s.codec) + ": this codec only encodes; [codec] of a "
                                                                       "synthesis pipeline must decode");
    }
    if (s.backbone) {
        const auto& vtable = s.backbone->vtable<cdz_backbone_vtable>();
        throw_if_error(vtable.get_info(s.backbone->context(), &s.backbone_info), context(*s.backbone));
    }
    if (s.drafter) {
        const auto& vtable = s.drafter->vtable<cdz_drafter_vtable>();
        throw_if_error(vtable.get_info(s.drafter->context(), &s.drafter_info), context(*s.drafter));
        if (!s.acceptor)
            throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": [draft] needs an [acceptor] to judge its drafts");
    }
    if (s.acceptor) {
        const auto& vtable = s.acceptor->vtable<cdz_acceptor_vtable>();
        s.acceptor_info.verifies = 1;  // the documented default
        throw_if_error(vtable.get_info(s.acceptor->context(), &s.acceptor_info), context(*s.acceptor));
    }
    if (config_.draft_ahead) {
        const std::string& at = config_.draft_ahead_at;
        if (!s.drafter) throw Error(CDZ_STATUS_INVALID_CONFIG, at + "'draft_ahead' needs a [draft] stage");
        if (s.drafter_info.needs_target_hidden)
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        at + "'draft_ahead': drafter '" + s.drafter->name() +
                            "' reads the target's hidden states, which a proposal made beside the target's pass "
                            "does not have yet");
        if (!s.acceptor_info.verifies)
            throw Error(CDZ_STATUS_INVALID_CONFIG, at + "'draft_ahead': acceptor '" + s.acceptor->name() +
                                                       "' does not verify; there is no pass to draft beside");
    }

    if (s.backbone && s.codec) {
        const auto& b = s.backbone_info;
        const auto& c = s.codec_info;
        if (b.tokens_per_node != static_cast<int32_t>(c.codebook_count) ||
            b.audio_token_count != static_cast<int64_t>(c.codebook_size))
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        config_.source + ": backbone '" + s.backbone->name() + "' predicts " +
                            std::to_string(b.tokens_per_node) + " codebook(s) of " +
                            std::to_string(b.audio_token_count) + " codes, but codec '" + s.codec->name() +
                            "' has " + std::to_string(c.codebook_count) + " of " + std::to_string(c.codebook_size));
    }
    if (s.backbone && s.frontend && s.frontend_info.vocab_size > s.backbone_info.text_token_count)
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    config_.source + ": frontend '" + s.frontend->name() + "' has " +
                        std::to_string(s.frontend_info.vocab_size) + " symbols, but backbone '" +
                        s.backbone->name() + "' reserves " + std::to_string(s.backbone_info.text_token_count));
    if (s.backbone && s.backbone_info.phone_markers) {
        const auto& b = s.backbone_info;
        if (b.text_token_offset + b.text_token_count != b.audio_token_offset &&
            b.audio_token_offset + b.audio_token_count != b.text_token_offset)
            throw Error(CDZ_STATUS_INVALID_CONFIG, context(*s.backbone) +
                                                       ": phone_markers needs the text and audio token ranges to adjoin");
    }
    if (s.backbone) check_token_layout(s.backbone_info, context(*s.backbone));
    if (s.backbone && s.backbone_info.tokens_per_node != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, config_.source + ": backbone '" + s.backbone->name() +
                                                "' predicts several codebooks per step; the engine decodes one");
    s.logits_processors = build_logits_chain(config_, s);
}

Engine::~Engine() = default;

const cdz_frontend_info& Engine::frontend_info() const { return stages_->frontend_info; }
const cdz_codec_info& Engine::codec_info() const { return stages_->codec_info; }

const cdz_backbone_info& Engine::backbone_info() const {
    if (!stages_->backbone) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [backbone]");
    return stages_->backbone_info;
}
bool Engine::has_codec() const { return stages_->codec != nullptr; }
bool Engine::has_frontend() const { return stages_->frontend != nullptr; }

std::vector<int32_t> Engine::text_ids(const std::string& text) {
    EngineStages& s = *stages_;
    if (!s.frontend) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [frontend]");
    const auto& frontend = s.frontend->vtable<cdz_frontend_vtable>();
    ManagedTensor ids;
    throw_if_error(frontend.encode(s.frontend->context(), text.c_str(), ids.out()), s.frontend->name());
    const auto shape = ids.expect(kDLInt, 32, 1, s.frontend->name() + ": encode");
    return std::vector<int32_t>(ids.data<int32_t>(), ids.data<int32_t>() + shape[0]);
}

std::string Engine::text_symbol(int32_t id) {
    EngineStages& s = *stages_;
    if (!s.frontend) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [frontend]");
    const auto& frontend = s.frontend->vtable<cdz_frontend_vtable>();
    const char* symbol = nullptr;
    throw_if_error(frontend.token_symbol(s.frontend->context(), id, &symbol), s.frontend->name());
    return symbol ? symbol : "";
}

Engine::Codes Engine::encode_audio(const std::vector<float>& samples, int sample_rate) {
    EngineStages& s = *stages_;
    if (!s.codec) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [codec]");
    if (!s.codec_info.can_encode) throw Error(CDZ_STATUS_UNSUPPORTED, s.codec->name() + ": this codec cannot encode");
    if (sample_rate <= 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "audio without a sample rate");
    // Resampling allocates in proportion to the rate ratio: a WAV declaring
    // 1 Hz cost gigabytes before any other check.
    constexpr int lowest_rate = 1000, highest_rate = 768000;
    if (sample_rate < lowest_rate || sample_rate > highest_rate)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "audio at " + std::to_string(sample_rate) + " Hz: rates from " +
                                                     std::to_string(lowest_rate) + " to " +
                                                     std::to_string(highest_rate) + " Hz are accepted");
    if (samples.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "audio with no samples");
    check_finite_audio(samples.data(), samples.size(), CDZ_STATUS_INVALID_ARGUMENT, "the audio");
    std::vector<float> audio = samples;
    if (static_cast<uint32_t>(sample_rate) != s.codec_info.sample_rate)
        audio = audio::resample(samples, sample_rate, s.codec_info.sample_rate);
    const auto& codec = s.codec->vtable<cdz_codec_vtable>();
    TensorView view(audio.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(audio.size())});
    ManagedTensor encoded;
    throw_if_error(codec.encode(s.codec->context(), view.get(), encoded.out()), s.codec->name() + ": encode");
    const auto shape = encoded.expect(kDLInt, 32, 2, s.codec->name() + ": codes");
    Codes codes;
    codes.codebooks = shape[0];
    codes.frames = shape[1];
    codes.values.assign(encoded.data<int32_t>(), encoded.data<int32_t>() + shape[0] * shape[1]);
    return codes;
}

std::vector<float> Engine::decode_audio(const Codes& codes) {
    EngineStages& s = *stages_;
    if (!s.codec) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [codec]");
    if (codes.values.size() != static_cast<size_t>(codes.codebooks * codes.frames))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes: the values do not fill [codebooks, frames]");
    const cdz_codec_info& info = s.codec_info;
    if (codes.codebooks != static_cast<int64_t>(info.codebook_count))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes: " + std::to_string(codes.codebooks) + " codebooks, but codec '" +
                                                     s.codec->name() + "' has " + std::to_string(info.codebook_count));
    for (size_t i = 0; i < codes.values.size(); ++i)
        if (codes.values[i] < 0 || static_cast<uint32_t>(codes.values[i]) >= info.codebook_size)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes: value " + std::to_string(codes.values[i]) + " at frame " +
                                                         std::to_string(static_cast<int64_t>(i) % std::max<int64_t>(codes.frames, 1)) +
                                                         " is not a code of codec '" + s.codec->name() + "' (0.." +
                                                         std::to_string(info.codebook_size - 1) + ")");
    const double seconds = static_cast<double>(codes.frames) / info.frame_rate;
    if (seconds > max_decoded_seconds)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes: " + std::to_string(codes.frames) + " frames are " +
                                                     std::to_string(static_cast<int64_t>(seconds)) +
                                                     " s of audio; at most " +
                                                     std::to_string(static_cast<int64_t>(max_decoded_seconds)) +
                                                     " s are decoded at once");
    const auto& codec = s.codec->vtable<cdz_codec_vtable>();
    if (!info.can_stream || codes.codebooks != 1 || codes.frames <= whole_decode_frames)
        return decode_whole(*s.codec, codes.values.data(), codes.codebooks, codes.frames);
    // Long sequences go through the codec's stream in bounded pieces: whole
    // decoding's memory and time grew faster than the frames (500,000 frames
    // passed 10 GB).
    void* stream = nullptr;
    throw_if_error(codec.stream_create(s.codec->context(), &stream), s.codec->name() + ": stream_create");
    PluginSession stream_guard(stream, codec.stream_destroy);
    std::vector<float> audio;
    for (int64_t begin = 0; begin < codes.frames; begin += long_decode_chunk_frames) {
        const int64_t count = std::min(long_decode_chunk_frames, codes.frames - begin);
        const ManagedTensor piece =
            decode_stream_piece(*s.codec, stream, codes.values.data() + begin, count, begin + count == codes.frames);
        audio.insert(audio.end(), piece.data<float>(), piece.data<float>() + piece.dl().shape[0]);
    }
    return audio;
}

std::vector<int32_t> Engine::voice_prompt_tokens(const std::vector<float>& samples, int sample_rate) {
    const Codes codes = encode_audio(samples, sample_rate);
    if (codes.codebooks != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, stages_->codec->name() + ": voice prompts need a codec with one codebook");
    const cdz_backbone_info& info = stages_->backbone_info;
    std::vector<int32_t> tokens;
    for (int32_t code : codes.values) {
        if (code < 0 || code >= info.audio_token_count)
            throw Error(CDZ_STATUS_INTERNAL, stages_->codec->name() + ": code " + std::to_string(code) + " out of range");
        tokens.push_back(static_cast<int32_t>(info.audio_token_offset + code));
    }
    return tokens;
}

uint32_t Engine::sample_rate() const { return stages_->codec ? stages_->codec_info.sample_rate : 0; }

void Engine::require_synthesis_stages() const {
    const EngineStages& s = *stages_;
    std::vector<std::string> missing;
    if (!s.frontend) missing.push_back("[frontend]");
    if (!s.backbone) missing.push_back("[backbone]");
    if (!s.codec) missing.push_back("[codec]");
    if (missing.empty()) return;
    std::string list;
    for (const auto& table : missing) list += (list.empty() ? "" : ", ") + table;
    throw Error(CDZ_STATUS_INVALID_CONFIG,
                config_.source + ": synthesis needs [frontend], [backbone] and [codec]; missing " + list);
}

void Engine::start_synthesis(uint64_t seed) {
    EngineStages& s = *stages_;
    stats_ = DecodingStats{};
    for (auto* instance : {s.frontend.get(), s.codec.get(), s.backbone.get(), s.drafter.get(), s.acceptor.get()})
        if (instance) instance->reseed(seed);
    random_stream_seed(s.sampling_rng, derive_stream_seed(seed, "sampling"));
}

Engine::Prompt Engine::text_prompt(const SynthesisRequest& request) {
    EngineStages& s = *stages_;
    const auto& frontend = s.frontend->vtable<cdz_frontend_vtable>();
    const cdz_backbone_info& info = s.backbone_info;

    // The prompt: text ids in the backbone's text range, then the audio start.
    ManagedTensor text_ids;
    throw_if_error(frontend.encode(s.frontend->context(), request.text.c_str(), text_ids.out()), s.frontend->name());
    const auto text_shape = text_ids.expect(kDLInt, 32, 1, s.frontend->name() + ": encode");
    Prompt prompt;
    for (int64_t i = 0; i < text_shape[0]; ++i) {
        const int32_t id = text_ids.data<int32_t>()[i];
        if (id < 0 || id >= info.text_token_count)
            throw Error(CDZ_STATUS_INTERNAL, s.frontend->name() + ": produced id " + std::to_string(id) +
                                                 " outside the backbone's text range");
        prompt.tokens.push_back(static_cast<int32_t>(info.text_token_offset + id));
    }
    prompt.text_tokens = prompt.tokens.size();
    if (info.audio_start_token >= 0) prompt.tokens.push_back(info.audio_start_token);
    // A voice prompt follows as audio tokens and is closed by a second audio
    // start token, after which the target's audio begins (docs/pipelines.md).
    std::vector<int32_t> voice_tokens;
    if (!request.voice_prompt.empty()) {
        voice_tokens = voice_prompt_tokens(request.voice_prompt, request.voice_prompt_sample_rate);
    } else if (!config_.voice_prompt.empty()) {
        if (!default_voice_encoded_) {
            const audio::Waveform wave = audio::read_waveform(config_.voice_prompt.string());
            default_voice_tokens_ = voice_prompt_tokens(wave.samples, wave.sample_rate);
            default_voice_encoded_ = true;
        }
        voice_tokens = default_voice_tokens_;
    }
    if (!voice_tokens.empty()) {
        if (info.audio_start_token < 0)
            throw Error(CDZ_STATUS_INVALID_CONFIG, s.backbone->name() +
                                                       ": a voice prompt needs a backbone with an audio_start_token");
        prompt.tokens.insert(prompt.tokens.end(), voice_tokens.begin(), voice_tokens.end());
        prompt.tokens.push_back(info.audio_start_token);
    }
    prompt.voice_tokens = voice_tokens.size();
    if (prompt.tokens.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the text gives no tokens to synthesize from");
    return prompt;
}

Engine::Prompt Engine::token_prompt(const std::vector<int32_t>& tokens) const {
    const EngineStages& s = *stages_;
    const cdz_backbone_info& info = s.backbone_info;
    if (tokens.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the prompt has no tokens");
    Prompt prompt;
    prompt.tokens = tokens;
    // Text ids up to the first audio start, then the voice prompt's codes up to the second.
    size_t i = 0;
    for (; i < tokens.size() && tokens[i] != info.audio_start_token; ++i) {
        if (tokens[i] < info.text_token_offset || tokens[i] >= info.text_token_offset + info.text_token_count)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "prompt token " + std::to_string(tokens[i]) + " at " +
                                                         std::to_string(i) + " is not in the text range before the audio start");
    }
    prompt.text_tokens = i;
    for (size_t j = i + 1; j < tokens.size(); ++j) {
        if (tokens[j] == info.audio_start_token) {
            if (j + 1 != tokens.size())
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the prompt goes on after its second audio start token");
            break;
        }
        if (!is_audio_token(info, tokens[j]))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "prompt token " + std::to_string(tokens[j]) + " at " +
                                                         std::to_string(j) + " is not a voice prompt code");
        ++prompt.voice_tokens;
    }
    return prompt;
}

int64_t Engine::loop_capacity(const Prompt& prompt, size_t max_frames, size_t max_markers) const {
    const EngineStages& s = *stages_;
    const cdz_backbone_info& info = s.backbone_info;
    const int64_t capacity =
        static_cast<int64_t>(prompt.tokens.size() + max_frames + max_markers) + s.drafter_info.max_nodes + 2;
    if (info.max_sequence_length > 0 && capacity > info.max_sequence_length)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "the text (" + std::to_string(prompt.tokens.size() - prompt.voice_tokens) + " tokens)" +
                        (prompt.voice_tokens == 0 ? std::string()
                                                  : ", the voice prompt (" + std::to_string(prompt.voice_tokens) + " frames)") +
                        ", " + std::to_string(max_frames) + " audio frames" +
                        (max_markers ? ", " + std::to_string(max_markers) + " phone markers" : std::string()) +
                        (s.drafter_info.max_nodes ? ", the draft tree (" + std::to_string(s.drafter_info.max_nodes) + " nodes)"
                                                  : std::string()) +
                        " and 2 spare need " + std::to_string(capacity) + " positions, more than the backbone's " +
                        std::to_string(info.max_sequence_length) +
                        "; shorten the text, the voice prompt or max_audio_seconds");
    return capacity;
}

Engine::DecodedTokens Engine::decode_tokens(Prompt prompt, double max_audio_seconds,
                                            const std::function<void(int32_t)>& on_token,
                                            const std::function<void(const std::vector<int32_t>&)>& after_step) {
    EngineStages& s = *stages_;
    const cdz_backbone_info& info = s.backbone_info;
    const double max_seconds = max_audio_seconds > 0 ? max_audio_seconds : config_.max_audio_seconds;
    const auto max_frames = static_cast<size_t>(std::ceil(max_seconds * s.codec_info.frame_rate));
    // Phone markers come on top of the frames: one per text symbol, a few spare.
    const size_t max_markers = info.phone_markers ? prompt.text_tokens + 16 : 0;
    const size_t max_tokens = max_frames + max_markers;
    const int64_t capacity = loop_capacity(prompt, max_frames, max_markers);
    const cdz_sampling sampling = restrict_sampling_to_audio(config_.sampling, info);
    const size_t prompt_length = prompt.tokens.size();
    DecodingLoop loop(s, sampling, stats_, std::move(prompt.tokens), capacity, config_.draft_ahead);

    DecodedTokens decoded;
    size_t emitted = 0;
    while (!decoded.finished && decoded.codes.size() < max_frames && emitted < max_tokens) {
        context_positions_ += static_cast<double>(prompt_length + emitted);
        ++context_steps_;
        const StepResult step = loop.step();
        int32_t used = 0;  // emitted tokens up to the end token or the frame limit
        for (size_t k = 0; k < step.emitted.size(); ++k) {
            if (decoded.finished || decoded.codes.size() >= max_frames || emitted >= max_tokens) break;
            const int32_t token = step.emitted[k];
            ++used;
            ++emitted;
            if (on_token) on_token(token);
            if (token == info.end_token) {
                decoded.finished = true;
            } else if (is_audio_token(info, token)) {
                const int32_t heard = step.audio.empty() ? token : step.audio[k];
                decoded.codes.push_back(static_cast<int32_t>(heard - info.audio_token_offset));
            } else if (is_phone_marker(info, token)) {
                // The phone the target speaks next: no audio.
            } else {
                throw Error(CDZ_STATUS_INTERNAL, "token " + std::to_string(token) + " is neither audio nor the end");
            }
        }
        // Without verification every emitted token is an accepted draft.
        const int32_t accepted = loop.verifies() ? std::min(step.accepted_drafts, used - 1) : used;
        stats_.record_step(step.tree_depth, step.tree_nodes, accepted, used);
        if (after_step) after_step(decoded.codes);
    }
    if (loop.sequence().size() > speech_context_.size()) speech_context_ = loop.sequence();
    return decoded;
}

Engine::DecodedTokens Engine::run_decoding_loop(Prompt prompt, double max_audio_seconds,
                                               const std::function<void(int32_t)>& on_token,
                                               SynthesisAudioStream* audio_stream) {
    double streaming_seconds = 0.0;  // the loop's time in after_step: not the loop's
    std::function<void(const std::vector<int32_t>&)> after_step;
    if (audio_stream)
        after_step = [&](const std::vector<int32_t>& codes) {
            ScopedTimer timer(streaming_seconds);
            audio_stream->after_step(codes);
        };
    const auto loop_start = std::chrono::steady_clock::now();
    DecodedTokens decoded = decode_tokens(std::move(prompt), max_audio_seconds, on_token, after_step);
    stats_.loop_seconds = seconds_since(loop_start) - streaming_seconds;
    stats_.audio_wait_seconds = streaming_seconds;
    return decoded;
}

std::vector<int32_t> Engine::continue_prompt(const std::vector<int32_t>& prompt_tokens, uint64_t seed,
                                             double max_audio_seconds) {
    require_synthesis_stages();
    check_max_audio_seconds(max_audio_seconds);
    start_synthesis(seed);
    ScopedTimer wall(stats_.wall_seconds);
    std::vector<int32_t> tokens;
    run_decoding_loop(token_prompt(prompt_tokens), max_audio_seconds, [&](int32_t token) { tokens.push_back(token); },
                      nullptr);
    return tokens;
}

std::vector<float> Engine::synthesize(const SynthesisRequest& request) {
    require_synthesis_stages();
    check_max_audio_seconds(request.max_audio_seconds);
    check_text_to_speak(request.text, stages_->backbone_info.max_sequence_length);
    start_synthesis(request.seed.value_or(config_.seed));
    ScopedTimer wall(stats_.wall_seconds);
    Prompt prompt;
    {
        ScopedTimer timer(stats_.prompt_seconds);
        prompt = text_prompt(request);
    }
    const std::unique_ptr<SynthesisAudioStream> audio_stream = open_audio_stream(request);
    const DecodedTokens decoded =
        run_decoding_loop(std::move(prompt), request.max_audio_seconds, request.on_token, audio_stream.get());
    ScopedTimer finishing(stats_.audio_finish_seconds);
    if (audio_stream) {
        finish_streamed_audio(*audio_stream, decoded.codes);
        return {};
    }
    return decode_whole_audio(request, decoded.codes);
}

std::unique_ptr<SynthesisAudioStream> Engine::open_audio_stream(const SynthesisRequest& request) {
    const EngineStages& s = *stages_;
    if (!request.on_audio || !s.codec_info.can_stream) return nullptr;
    return std::make_unique<SynthesisAudioStream>(*s.codec, s.codec_info, request.on_audio, config_.codec_thread);
}

void Engine::finish_streamed_audio(SynthesisAudioStream& audio_stream, const std::vector<int32_t>& codes) {
    audio_stream.finish(codes);
    stats_.codec_seconds = audio_stream.codec_seconds();
    stats_.audio_seconds = audio_stream.audio_seconds();
}

std::vector<float> Engine::decode_whole_audio(const SynthesisRequest& request, const std::vector<int32_t>& codes) {
    const EngineStages& s = *stages_;
    std::vector<float> audio;
    if (!codes.empty()) {
        ScopedTimer timer(stats_.codec_seconds);
        audio = decode_whole(*s.codec, codes.data(), 1, static_cast<int64_t>(codes.size()));
    }
    stats_.audio_seconds = static_cast<double>(audio.size()) / s.codec_info.sample_rate;
    if (request.on_audio && !audio.empty() && !request.on_audio(audio.data(), audio.size()))
        throw Error(CDZ_STATUS_CANCELLED, "synthesis cancelled by the audio callback");
    if (request.on_audio) return {};
    spdlog::debug("synthesized {} frames ({:.2f} s of audio) in {} steps", codes.size(), stats_.audio_seconds,
                  stats_.steps());
    return audio;
}

}  // namespace cadenza
