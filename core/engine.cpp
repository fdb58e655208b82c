#include "engine.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "error.h"
#include "host_api.h"
#include "managed_tensor.h"
#include "random_stream.h"
#include "sampling.h"
#include "status_object.h"

namespace cadenza {
namespace {

constexpr DLDataType int32_type{kDLInt, 32, 1};
// Frames decoded at once when streaming: 200 ms at 50 frames per second.
constexpr size_t stream_chunk_frames = 10;

template <typename Info>
Info make_info() {
    Info info{};
    info.struct_size = sizeof(Info);
    return info;
}

// Releases a plugin session with its own destroy function.
class PluginSession {
public:
    PluginSession(void* session, void (*destroy)(void*)) : session_(session), destroy_(destroy) {}
    ~PluginSession() {
        if (session_) destroy_(session_);
    }
    PluginSession(const PluginSession&) = delete;
    PluginSession& operator=(const PluginSession&) = delete;
    void* get() const { return session_; }

private:
    void* session_;
    void (*destroy_)(void*);
};

int32_t tree_depth(const std::vector<int32_t>& parents) {
    std::vector<int32_t> depth(parents.size(), 1);
    int32_t deepest = 0;
    for (size_t i = 0; i < parents.size(); ++i) {
        if (parents[i] >= 0) depth[i] = depth[parents[i]] + 1;
        deepest = std::max(deepest, depth[i]);
    }
    return deepest;
}

void check_tree(const cdz_token_tree& tree, const std::string& drafter) {
    if (tree.node_count < 0 || (tree.node_count > 0 && (!tree.tokens || !tree.parents)))
        throw Error(CDZ_STATUS_INTERNAL, drafter + ": proposed a malformed token tree");
    if (tree.node_count > 0 && tree.tokens_per_node != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, drafter + ": multi-codebook trees are not supported by the engine yet");
    for (int32_t i = 0; i < tree.node_count; ++i)
        if (tree.parents[i] < -1 || tree.parents[i] >= i)
            throw Error(CDZ_STATUS_INTERNAL, drafter + ": tree node " + std::to_string(i) +
                                                 " has parent " + std::to_string(tree.parents[i]) +
                                                 " (parents must precede their children)");
}

}  // namespace

struct Engine::Stages {
    std::unique_ptr<PluginInstance> frontend, codec, backbone, drafter, acceptor;
    cdz_frontend_info frontend_info = make_info<cdz_frontend_info>();
    cdz_codec_info codec_info = make_info<cdz_codec_info>();
    cdz_backbone_info backbone_info = make_info<cdz_backbone_info>();
    cdz_drafter_info drafter_info = make_info<cdz_drafter_info>();
    cdz_acceptor_info acceptor_info = make_info<cdz_acceptor_info>();
    cdz_rng sampling_rng{};
};

Engine::Engine(PipelineConfig config) : config_(std::move(config)), stages_(std::make_unique<Stages>()) {
    Stages& s = *stages_;
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
        throw_if_error(vtable.get_info(s.acceptor->context(), &s.acceptor_info), context(*s.acceptor));
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
    if (s.backbone && s.backbone_info.tokens_per_node != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, config_.source + ": backbone '" + s.backbone->name() +
                                                "' predicts several codebooks per step; the engine decodes one");
}

Engine::~Engine() = default;

uint32_t Engine::sample_rate() const { return stages_->codec ? stages_->codec_info.sample_rate : 0; }

std::vector<float> Engine::synthesize(const SynthesisRequest& request) {
    Stages& s = *stages_;
    std::vector<std::string> missing;
    if (!s.frontend) missing.push_back("[frontend]");
    if (!s.backbone) missing.push_back("[backbone]");
    if (!s.codec) missing.push_back("[codec]");
    if (!missing.empty()) {
        std::string list;
        for (const auto& table : missing) list += (list.empty() ? "" : ", ") + table;
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    config_.source + ": synthesis needs [frontend], [backbone] and [codec]; missing " + list);
    }

    stats_ = DecodingStats{};
    ScopedTimer wall(stats_.wall_seconds);
    const uint64_t seed = request.seed.value_or(config_.seed);
    for (auto* instance : {s.frontend.get(), s.codec.get(), s.backbone.get(), s.drafter.get(), s.acceptor.get()})
        if (instance) instance->reseed(seed);
    random_stream_seed(s.sampling_rng, derive_stream_seed(seed, "sampling"));

    const auto& frontend = s.frontend->vtable<cdz_frontend_vtable>();
    const auto& backbone = s.backbone->vtable<cdz_backbone_vtable>();
    const auto& codec = s.codec->vtable<cdz_codec_vtable>();
    const cdz_backbone_info& info = s.backbone_info;

    // The prompt: text ids in the backbone's text range, then the audio start.
    ManagedTensor text_ids;
    throw_if_error(frontend.encode(s.frontend->context(), request.text.c_str(), text_ids.out()), s.frontend->name());
    const auto text_shape = text_ids.expect(kDLInt, 32, 1, s.frontend->name() + ": encode");
    std::vector<int32_t> sequence;
    for (int64_t i = 0; i < text_shape[0]; ++i) {
        const int32_t id = text_ids.data<int32_t>()[i];
        if (id < 0 || id >= info.text_token_count)
            throw Error(CDZ_STATUS_INTERNAL, s.frontend->name() + ": produced id " + std::to_string(id) +
                                                 " outside the backbone's text range");
        sequence.push_back(static_cast<int32_t>(info.text_token_offset + id));
    }
    if (info.audio_start_token >= 0) sequence.push_back(info.audio_start_token);
    if (sequence.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the text gives no tokens to synthesize from");

    const double max_seconds = request.max_audio_seconds > 0 ? request.max_audio_seconds : config_.max_audio_seconds;
    const auto max_frames = static_cast<size_t>(std::ceil(max_seconds * s.codec_info.frame_rate));
    const int64_t capacity = static_cast<int64_t>(sequence.size() + max_frames) + s.drafter_info.max_nodes + 2;
    if (info.max_sequence_length > 0 && capacity > info.max_sequence_length)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "the prompt (" + std::to_string(sequence.size()) + " tokens) and " + std::to_string(max_frames) +
                        " audio frames exceed the backbone's " + std::to_string(info.max_sequence_length) +
                        " positions; shorten the text or max_audio_seconds");

    void* raw_session = nullptr;
    throw_if_error(backbone.session_create(s.backbone->context(), capacity, &raw_session), s.backbone->name());
    PluginSession session(raw_session, backbone.session_destroy);
    std::unique_ptr<PluginSession> draft_session;
    if (s.drafter) {
        const auto& drafter = s.drafter->vtable<cdz_drafter_vtable>();
        void* raw = nullptr;
        throw_if_error(drafter.session_create(s.drafter->context(), capacity, &raw), s.drafter->name());
        draft_session = std::make_unique<PluginSession>(raw, drafter.session_destroy);
    }

    const bool verifying = !s.acceptor || s.acceptor_info.needs_target;
    const bool want_hidden = s.drafter && s.drafter_info.needs_target_hidden;
    const int64_t vocab = info.vocab_size;
    std::vector<float> hidden;        // the target's hidden state at hidden_position
    int64_t hidden_position = -1;
    size_t evaluated = 0;             // tokens of `sequence` in the backbone's cache

    // Runs the backbone over sequence[evaluated..] followed by `draft`, keeps
    // the logits of the last unevaluated token and of every draft node.
    std::vector<float> logits;        // [rows, vocab]
    auto forward = [&](const cdz_token_tree* draft) {
        const int32_t pending = static_cast<int32_t>(sequence.size() - evaluated);
        const int32_t draft_nodes = draft ? draft->node_count : 0;
        std::vector<int32_t> tokens(sequence.begin() + static_cast<std::ptrdiff_t>(evaluated), sequence.end());
        std::vector<int32_t> parents;
        for (int32_t i = 0; i < pending; ++i) parents.push_back(i - 1);
        for (int32_t i = 0; i < draft_nodes; ++i) {
            tokens.push_back(draft->tokens[i]);
            parents.push_back(draft->parents[i] < 0 ? pending - 1 : draft->parents[i] + pending);
        }
        cdz_token_tree tree{sizeof(cdz_token_tree), static_cast<int32_t>(tokens.size()), 1, tokens.data(),
                            parents.data()};
        cdz_backbone_output output{sizeof(cdz_backbone_output), nullptr, nullptr};
        {
            ScopedTimer timer(stats_.verify_seconds);
            throw_if_error(backbone.session_forward(session.get(), &tree, want_hidden ? 1 : 0, &output),
                           s.backbone->name() + ": forward");
            stats_.add_target_pass();
        }
        ManagedTensor logits_tensor(output.logits), hidden_tensor(output.hidden);
        const auto shape = logits_tensor.expect(kDLFloat, 32, 2, s.backbone->name() + ": logits");
        if (shape[0] != tree.node_count || shape[1] != vocab)
            throw Error(CDZ_STATUS_INTERNAL, s.backbone->name() + ": logits have the wrong shape");
        const float* rows = logits_tensor.data<float>() + static_cast<size_t>(pending - 1) * vocab;
        logits.assign(rows, rows + static_cast<size_t>(1 + draft_nodes) * vocab);
        if (want_hidden) {
            const auto hidden_shape = hidden_tensor.expect(kDLFloat, 32, 2, s.backbone->name() + ": hidden states");
            const size_t width = static_cast<size_t>(hidden_shape[1]);
            hidden.assign(hidden_tensor.data<float>(), hidden_tensor.data<float>() + hidden_shape[0] * width);
        }
        return pending;
    };

    // Target probabilities: restricted to audio tokens and the end token,
    // then temperature, top-k and top-p.
    auto target_probabilities = [&](size_t rows) {
        std::vector<float> probabilities(rows * vocab);
        std::vector<float> masked(vocab);
        for (size_t r = 0; r < rows; ++r) {
            std::fill(masked.begin(), masked.end(), -std::numeric_limits<float>::infinity());
            const float* row = logits.data() + r * vocab;
            std::copy(row + info.audio_token_offset, row + info.audio_token_offset + info.audio_token_count,
                      masked.begin() + info.audio_token_offset);
            if (info.end_token >= 0) masked[info.end_token] = row[info.end_token];
            sampling_probabilities(config_.sampling, masked.data(), probabilities.data() + r * vocab, vocab);
        }
        return probabilities;
    };

    // Prefill: everything but the last prompt token, which roots the first step.
    if (sequence.size() > 1) {
        const int32_t count = static_cast<int32_t>(sequence.size() - 1);
        std::vector<int32_t> parents(count);
        for (int32_t i = 0; i < count; ++i) parents[i] = i - 1;
        cdz_token_tree tree{sizeof(cdz_token_tree), count, 1, sequence.data(), parents.data()};
        cdz_backbone_output output{sizeof(cdz_backbone_output), nullptr, nullptr};
        {
            ScopedTimer timer(stats_.verify_seconds);
            throw_if_error(backbone.session_forward(session.get(), &tree, want_hidden ? 1 : 0, &output),
                           s.backbone->name() + ": prefill");
            stats_.add_target_pass();
        }
        ManagedTensor logits_tensor(output.logits), hidden_tensor(output.hidden);
        std::vector<int32_t> path(count);
        for (int32_t i = 0; i < count; ++i) path[i] = i;
        throw_if_error(backbone.session_commit(session.get(), path.data(), count), s.backbone->name() + ": commit");
        if (want_hidden) {
            const auto shape = hidden_tensor.expect(kDLFloat, 32, 2, s.backbone->name() + ": hidden states");
            const float* last = hidden_tensor.data<float>() + (shape[0] - 1) * shape[1];
            hidden.assign(last, last + shape[1]);
            hidden_position = count - 1;
        }
        evaluated = static_cast<size_t>(count);
    }

    std::vector<int32_t> codes;
    size_t streamed_frames = 0;
    bool finished = false;
    void* stream = nullptr;
    std::unique_ptr<PluginSession> stream_guard;
    const bool streaming = static_cast<bool>(request.on_audio) && s.codec_info.can_stream;
    if (streaming) {
        throw_if_error(codec.stream_create(s.codec->context(), &stream), s.codec->name());
        stream_guard = std::make_unique<PluginSession>(stream, codec.stream_destroy);
    }
    auto deliver = [&](const ManagedTensor& audio) {
        const auto shape = audio.expect(kDLFloat, 32, 1, s.codec->name() + ": audio");
        stats_.audio_seconds += static_cast<double>(shape[0]) / s.codec_info.sample_rate;
        if (shape[0] > 0 && !request.on_audio(audio.data<float>(), static_cast<size_t>(shape[0])))
            throw Error(CDZ_STATUS_CANCELLED, "synthesis cancelled by the audio callback");
    };
    auto stream_out = [&](bool last) {
        const size_t ready = codes.size() - streamed_frames;
        if (!streaming || (!last && ready < stream_chunk_frames)) return;
        TensorView view(codes.data() + streamed_frames, int32_type, {1, static_cast<int64_t>(ready)});
        ManagedTensor audio;
        throw_if_error(codec.stream_decode(stream, view.get(), last ? 1 : 0, audio.out()), s.codec->name());
        streamed_frames = codes.size();
        deliver(audio);
    };

    std::vector<int32_t> accepted_nodes, emitted;
    while (!finished && codes.size() < max_frames) {
        cdz_draft_output draft{};
        draft.struct_size = sizeof(draft);
        ManagedTensor draft_probabilities;
        const cdz_token_tree* tree = nullptr;
        int32_t pending = 0;
        std::vector<float> target;

        auto propose = [&] {
            if (!s.drafter) return;
            const auto& drafter = s.drafter->vtable<cdz_drafter_vtable>();
            TensorView hidden_view(hidden.data(), DLDataType{kDLFloat, 32, 1},
                                   {static_cast<int64_t>(want_hidden ? s.backbone_info.hidden_size : 0)});
            cdz_draft_input input{};
            input.struct_size = sizeof(input);
            input.tokens = sequence.data();
            input.token_count = static_cast<int64_t>(sequence.size());
            const bool have_hidden = want_hidden && hidden_position >= 0;
            input.target_hidden = have_hidden ? hidden_view.get() : nullptr;
            input.target_hidden_position = have_hidden ? hidden_position : -1;
            input.sampling = &config_.sampling;
            {
                ScopedTimer timer(stats_.draft_seconds);
                throw_if_error(drafter.propose(draft_session->get(), &input, &draft), s.drafter->name() + ": propose");
                stats_.add_draft_pass();
            }
            draft_probabilities = ManagedTensor(draft.probabilities);
            check_tree(draft.tree, s.drafter->name());
            if (draft.tree.node_count > 0) tree = &draft.tree;
        };

        if (verifying) {
            propose();
            pending = forward(tree);
            target = target_probabilities(1 + (tree ? tree->node_count : 0));
        } else {
            pending = forward(nullptr);
            std::vector<int32_t> path(pending);
            for (int32_t i = 0; i < pending; ++i) path[i] = i;
            throw_if_error(backbone.session_commit(session.get(), path.data(), pending), s.backbone->name() + ": commit");
            evaluated = sequence.size();
            if (want_hidden) {
                const size_t width = hidden.size() / pending;
                hidden.erase(hidden.begin(), hidden.end() - static_cast<std::ptrdiff_t>(width));
                hidden_position = static_cast<int64_t>(sequence.size()) - 1;
            }
            propose();
        }

        const int32_t nodes = tree ? tree->node_count : 0;
        accepted_nodes.assign(nodes, -1);
        emitted.assign(static_cast<size_t>(nodes) + 1, -1);
        cdz_accept_output result{sizeof(cdz_accept_output), accepted_nodes.data(), 0, emitted.data(), 0};
        {
            ScopedTimer timer(stats_.accept_seconds);
            if (s.acceptor) {
                static const cdz_token_tree empty_tree{sizeof(cdz_token_tree), 0, 1, nullptr, nullptr};
                cdz_accept_input input{};
                input.struct_size = sizeof(input);
                input.tree = tree ? tree : &empty_tree;
                input.vocab_size = vocab;
                input.target_probabilities = verifying ? target.data() : nullptr;
                input.draft_probabilities = draft_probabilities ? draft_probabilities.data<float>() : nullptr;
                input.sampling = &config_.sampling;
                throw_if_error(s.acceptor->vtable<cdz_acceptor_vtable>().accept(s.acceptor->context(), &input, &result),
                               s.acceptor->name() + ": accept");
            } else {
                emitted[0] = static_cast<int32_t>(sample_index(s.sampling_rng, target.data(), vocab));
                result.emitted_count = 1;
            }
        }
        if (result.accepted_count < 0 || result.accepted_count > nodes || result.emitted_count < 1 ||
            result.emitted_count > nodes + 1)
            throw Error(CDZ_STATUS_INTERNAL, "acceptor returned an invalid result");

        if (verifying) {
            // Keep the unevaluated tokens and the accepted path; drop the rest.
            std::vector<int32_t> path;
            for (int32_t i = 0; i < pending; ++i) path.push_back(i);
            int32_t expected_parent = -1;
            for (int32_t k = 0; k < result.accepted_count; ++k) {
                const int32_t node = accepted_nodes[k];
                if (node < 0 || node >= nodes || tree->parents[node] != expected_parent)
                    throw Error(CDZ_STATUS_INTERNAL, "acceptor returned a path that is not a root-to-leaf path");
                if (emitted[k] != tree->tokens[node])
                    throw Error(CDZ_STATUS_INTERNAL, "acceptor emitted a token that differs from its accepted node");
                expected_parent = node;
                path.push_back(pending + node);
            }
            throw_if_error(backbone.session_commit(session.get(), path.data(), static_cast<int32_t>(path.size())),
                           s.backbone->name() + ": commit");
            evaluated = sequence.size() + static_cast<size_t>(result.accepted_count);
            if (want_hidden) {
                const size_t width = static_cast<size_t>(s.backbone_info.hidden_size);
                const size_t row = static_cast<size_t>(path.back());
                hidden.assign(hidden.begin() + row * width, hidden.begin() + (row + 1) * width);
                hidden_position = static_cast<int64_t>(evaluated) - 1;
            }
        }

        int64_t appended = 0;
        for (int32_t k = 0; k < result.emitted_count && !finished && codes.size() < max_frames; ++k) {
            const int32_t token = emitted[k];
            sequence.push_back(token);
            ++appended;
            if (token == info.end_token) {
                finished = true;
            } else if (token >= info.audio_token_offset && token < info.audio_token_offset + info.audio_token_count) {
                codes.push_back(static_cast<int32_t>(token - info.audio_token_offset));
            } else {
                throw Error(CDZ_STATUS_INTERNAL, "token " + std::to_string(token) + " is neither audio nor the end");
            }
        }
        stats_.record_step(tree ? tree_depth(std::vector<int32_t>(tree->parents, tree->parents + nodes)) : 0,
                           result.accepted_count, appended);
        stream_out(false);
    }

    if (streaming) {
        stream_out(true);
        return {};
    }
    std::vector<float> audio;
    if (!codes.empty()) {
        TensorView view(codes.data(), int32_type, {1, static_cast<int64_t>(codes.size())});
        ManagedTensor decoded;
        throw_if_error(codec.decode(s.codec->context(), view.get(), decoded.out()), s.codec->name() + ": decode");
        const auto shape = decoded.expect(kDLFloat, 32, 1, s.codec->name() + ": audio");
        audio.assign(decoded.data<float>(), decoded.data<float>() + shape[0]);
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
