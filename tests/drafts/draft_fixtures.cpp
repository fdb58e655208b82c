#include "draft_fixtures.h"

#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>

#include "code_digit_head.h"
#include "code_digit_output.h"
#include "managed_tensor.h"
#include "recurrent_draft.h"
#include "safetensors.h"
#include "status_object.h"
#include "../core/test_fixtures.h"
#include "../llama/tiny_llama.h"

namespace cadenza::test {
namespace {

void write_heads(const std::filesystem::path& path, const std::string& kind, int64_t count, uint64_t seed) {
    at::manual_seed(seed);
    safetensors::Writer writer;
    for (int64_t i = 0; i < count; ++i) {
        // Heads near the identity (h_i close to h), each further from it:
        // their predictions correlate with the target's next token.
        const at::Tensor weight = at::randn({hidden_size, hidden_size}) * (0.03 * static_cast<double>(i + 1));
        const at::Tensor bias = at::randn({hidden_size}) * 0.1;
        writer.add_f32("heads." + std::to_string(i) + ".linear.weight", {hidden_size, hidden_size},
                       weight.contiguous().data_ptr<float>());
        writer.add_f32("heads." + std::to_string(i) + ".linear.bias", {hidden_size}, bias.contiguous().data_ptr<float>());
    }
    writer.set_metadata("cadenza.kind", kind);
    writer.set_metadata("cadenza.heads", std::to_string(count));
    writer.set_metadata("cadenza.hidden_size", std::to_string(hidden_size));
    writer.write(path);
}

// The fixture's shallow draft with a code-digit head in place of its
// vocabulary head, as `cadenza train draft --code-digits` writes it: the
// vocabulary head tied to the embedding, digits.weight/bias (the factorized
// form of the target's output table, where training starts) beside the
// layers.
void write_code_digit_draft(const std::filesystem::path& from, const at::Tensor& table,
                            const std::filesystem::path& directory) {
    llama::LlamaConfig config = llama::LlamaConfig::from_file(from / "config.json");
    config.tie_word_embeddings = true;
    std::filesystem::create_directories(directory);
    config.save(directory / "config.json");
    const safetensors::File original(from / "model.safetensors");
    safetensors::Writer writer;
    std::map<std::string, std::vector<float>> kept;
    for (const auto& info : original.tensors()) {
        if (info.name == "lm_head.weight") continue;
        kept[info.name] = original.read_f32(info.name);
        writer.add_f32(info.name, info.shape, kept[info.name].data());
    }
    const drafts::CodeGrid grid = drafts::CodeGrid::parse(code_levels, audio_begin, vocab_size, "fixture");
    const training::CodeDigitOutput head = training::CodeDigitOutput::from_table(table, grid);
    writer.add_f32("digits.weight", {grid.head_rows(), hidden_size}, head.weight.data_ptr<float>());
    writer.add_f32("digits.bias", {grid.head_rows()}, head.bias.data_ptr<float>());
    for (const auto& [key, value] : drafts::code_grid_metadata(grid)) writer.set_metadata(key, value);
    writer.write(directory / "model.safetensors");
}

// A recurrent draft whose cell is not the identity (random W_out), with a
// digit head near the factorized form of `table`.
void write_recurrent_draft(const std::filesystem::path& file, const at::Tensor& table, bool table_scored) {
    const drafts::CodeGrid grid = drafts::CodeGrid::parse(code_levels, audio_begin, vocab_size, "fixture");
    const training::CodeDigitOutput head = training::CodeDigitOutput::from_table(table, grid);
    drafts::RecurrentDraft draft = drafts::RecurrentDraft::initial(hidden_size, 48, 3, grid, head.weight, head.bias, 9);
    at::manual_seed(9);
    draft.out_weight = at::randn({hidden_size, 48}) * 0.1;
    draft.bias = at::randn({48}) * 0.1;
    draft.table_scored = table_scored;
    draft.save(file);
}

DraftModels build_models() {
    c10::InferenceMode inference;
    DraftModels m;
    m.directory = fresh_directory("drafts");
    m.target = m.directory / "target";
    llama::LlamaConfig config = tiny_llasa_config();
    config.num_hidden_layers = 4;
    m.target_weights = write_tiny_checkpoint(m.target, 21, StoredAs::f32, 1, config);

    // The shallow draft: layers 0 and 3 of the target, its embedding, norm and head.
    m.draft = m.directory / "draft";
    std::filesystem::create_directories(m.draft);
    llama::LlamaWeights draft = m.target_weights;
    draft.config.num_hidden_layers = 2;
    draft.layers = {m.target_weights.layers[0], m.target_weights.layers[3]};
    draft.config.save(m.draft / "config.json");
    draft.save(m.draft / "model.safetensors", {{"cadenza.kind", "shallow"}});

    m.heads_mtp = m.directory / "heads_mtp.safetensors";
    m.heads_medusa = m.directory / "heads_medusa.safetensors";
    write_heads(m.heads_mtp, "mtp", m.head_count, 5);
    write_heads(m.heads_medusa, "medusa", m.head_count, 5);
    m.heads_digits = m.directory / "heads_digits.safetensors";
    write_code_digit_heads(m.heads_digits, m.target_weights.lm_head, 7);
    m.draft_digits = m.directory / "draft_digits";
    write_code_digit_draft(m.draft, m.target_weights.lm_head, m.draft_digits);
    m.recurrent = m.directory / "recurrent.safetensors";
    write_recurrent_draft(m.recurrent, m.target_weights.lm_head, false);
    m.recurrent_table_scored = m.directory / "recurrent_table_scored.safetensors";
    write_recurrent_draft(m.recurrent_table_scored, m.target_weights.lm_head, true);
    m.choices = write_file(m.directory, "choices.txt",
                           "# a small sparse tree\n0\n1\n2\n0,0\n0,1\n1,0\n0,0,0\n0,0,1\n0,0,0,0\n");
    return m;
}

}  // namespace

void write_code_digit_heads(const std::filesystem::path& file, const at::Tensor& table, uint64_t seed,
                            const std::string& output) {
    const drafts::CodeGrid grid = drafts::CodeGrid::parse(code_levels, audio_begin, vocab_size, "fixture");
    const training::CodeDigitOutput head = training::CodeDigitOutput::from_table(table, grid);
    const int64_t rows = grid.head_rows(), heads = 4;
    safetensors::Writer writer;
    at::manual_seed(seed);
    for (int64_t i = 0; i < heads; ++i) {
        const std::string prefix = "heads." + std::to_string(i);
        const at::Tensor w = (at::randn({hidden_size, hidden_size}) * 0.05).contiguous();
        const at::Tensor b = (at::randn({hidden_size}) * 0.1).contiguous();
        const at::Tensor dw = (head.weight + at::randn({rows, hidden_size}) * 0.01).contiguous();
        const at::Tensor db = (head.bias + at::randn({rows}) * 0.01).contiguous();
        writer.add_f32(prefix + ".linear.weight", {hidden_size, hidden_size}, w.data_ptr<float>());
        writer.add_f32(prefix + ".linear.bias", {hidden_size}, b.data_ptr<float>());
        writer.add_f32(prefix + ".digits.weight", {rows, hidden_size}, dw.data_ptr<float>());
        writer.add_f32(prefix + ".digits.bias", {rows}, db.data_ptr<float>());
    }
    writer.set_metadata("cadenza.kind", "mtp");
    writer.set_metadata("cadenza.heads", std::to_string(heads));
    writer.set_metadata("cadenza.output", output);
    writer.set_metadata("cadenza.code_levels", code_levels);
    writer.set_metadata("cadenza.code_offset", std::to_string(audio_begin));
    writer.write(file);
}

const DraftModels& draft_models() {
    static const DraftModels models = build_models();
    return models;
}

std::string pipeline_text(const std::string& stages, double temperature, double max_audio_seconds) {
    return "[pipeline]\nseed = 3\nmax_audio_seconds = " + std::to_string(max_audio_seconds) +
           "\n[sampling]\ntemperature = " + std::to_string(temperature) +
           "\n[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
           "[codec]\nplugin = \"test.tone_codec\"\ncodebook_size = 62\n"
           "[backbone]\n" +
           tiny_backbone_table(draft_models().target) + "threads = 1\n" + stages;
}

Engine make_engine(const std::string& text) {
    return Engine(load_pipeline_config_string(text, "drafts.toml", source_dir(), {{test_plugin_dir("doubles"), "test", true}}));
}

namespace {

// One stage's plugin on its own.
struct StagePlugin {
    PipelineConfig config;
    std::unique_ptr<PluginInstance> instance;
    explicit StagePlugin(const std::string& text, const std::string& stage)
        : config(load_pipeline_config_string(text, "stage.toml", source_dir(), {{test_plugin_dir("doubles"), "test", true}})),
          instance(std::make_unique<PluginInstance>(*config.stage(stage), "cpu", 0)) {}
};

}  // namespace

std::vector<int32_t> prompt_tokens(const std::string& text) {
    static StagePlugin frontend(
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n", "frontend");
    ManagedTensor ids;
    throw_if_error(frontend.instance->vtable<cdz_frontend_vtable>().encode(frontend.instance->context(), text.c_str(),
                                                                           ids.out()),
                   "encode");
    const auto shape = ids.expect(kDLInt, 32, 1, "ids");
    std::vector<int32_t> tokens(ids.data<int32_t>(), ids.data<int32_t>() + shape[0]);
    tokens.push_back(audio_start);
    return tokens;
}

std::vector<int32_t> codes_of(const std::vector<float>& audio) {
    static StagePlugin codec("[codec]\nplugin = \"test.tone_codec\"\ncodebook_size = 62\n", "codec");
    TensorView view(audio.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(audio.size())});
    ManagedTensor codes;
    throw_if_error(codec.instance->vtable<cdz_codec_vtable>().encode(codec.instance->context(), view.get(), codes.out()),
                   "encode");
    const auto shape = codes.expect(kDLInt, 32, 2, "codes");
    return std::vector<int32_t>(codes.data<int32_t>(), codes.data<int32_t>() + shape[1]);
}

void expect_candidate_row(const float* row, const at::Tensor& tokens, const at::Tensor& scores, double temperature,
                          int32_t drafted, const std::string& what) {
    const at::Tensor expected = at::zeros({vocab_size}, at::kDouble)
                                    .index_copy_(0, tokens, at::softmax(scores.to(at::kDouble) / temperature, 0));
    double worst = 0;
    int64_t nonzero = 0;
    for (int64_t t = 0; t < vocab_size; ++t) {
        worst = std::max(worst, std::fabs(row[t] - expected[t].item<double>()));
        nonzero += row[t] > 0.0f;
    }
    EXPECT_LT(worst, 1e-5) << what;
    EXPECT_EQ(nonzero, tokens.numel()) << what;
    EXPECT_GT(row[drafted], 0.0f) << what;
}

cdz_sampling synthesis_sampling(double temperature) {
    cdz_sampling sampling{};
    sampling.struct_size = sizeof(sampling);
    sampling.temperature = temperature;
    sampling.top_k = 0;
    sampling.top_p = 1.0;
    sampling.allowed_begin = audio_begin;
    sampling.allowed_end = audio_end;
    sampling.allowed_extra = end_token;
    return sampling;
}

DrafterPlugin::DrafterPlugin(const std::string& draft_table, uint64_t seed)
    : config_(load_pipeline_config_string("[draft]\n" + draft_table, "draft.toml", source_dir())),
      instance_(std::make_unique<PluginInstance>(*config_.stage("draft"), "cpu", seed)) {}

DrafterPlugin::~DrafterPlugin() {
    for (void* session : sessions_) instance_->vtable<cdz_drafter_vtable>().session_destroy(session);
}

cdz_drafter_info DrafterPlugin::info() const {
    cdz_drafter_info info{};
    info.struct_size = sizeof(info);
    throw_if_error(instance_->vtable<cdz_drafter_vtable>().get_info(instance_->context(), &info), "get_info");
    return info;
}

void* DrafterPlugin::new_session(int64_t capacity) {
    void* session = nullptr;
    throw_if_error(instance_->vtable<cdz_drafter_vtable>().session_create(instance_->context(), capacity, &session),
                   "session_create");
    sessions_.push_back(session);
    return session;
}

DrafterPlugin::Proposal DrafterPlugin::propose(void* session, const std::vector<int32_t>& tokens,
                                               const cdz_sampling& sampling, const std::vector<float>& hidden,
                                               int64_t hidden_position, const DLTensor* target_keys,
                                               const DLTensor* target_values) {
    TensorView hidden_view(hidden.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(hidden.size())});
    cdz_draft_input in{};
    in.struct_size = sizeof(in);
    in.tokens = tokens.data();
    in.token_count = static_cast<int64_t>(tokens.size());
    in.target_hidden = hidden.empty() ? nullptr : hidden_view.get();
    in.target_hidden_position = hidden.empty() ? -1 : hidden_position;
    in.sampling = &sampling;
    in.target_keys = target_keys;
    in.target_values = target_values;
    cdz_draft_output out{};
    out.struct_size = sizeof(out);
    throw_if_error(instance_->vtable<cdz_drafter_vtable>().propose(session, &in, &out), "propose");
    ManagedTensor probabilities(out.probabilities);
    Proposal proposal;
    const int32_t n = out.tree.node_count;
    proposal.tokens.assign(out.tree.tokens, out.tree.tokens + n);
    proposal.parents.assign(out.tree.parents, out.tree.parents + n);
    if (n > 0) {
        const auto shape = probabilities.expect(kDLFloat, 32, 2, "probabilities");
        if (shape[0] != n || shape[1] != vocab_size) throw std::runtime_error("probabilities have the wrong shape");
        proposal.probabilities.assign(probabilities.data<float>(), probabilities.data<float>() + n * vocab_size);
    }
    return proposal;
}

}  // namespace cadenza::test
