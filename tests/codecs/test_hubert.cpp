// codec.hubert: every tensor of ../shared/golden/hubert/vectors.safetensors
// (torchaudio 0.13 Wav2Vec2Model, random weights) from both weight files,
// the official hubert_base key list, checkpoint errors naming the key, the
// k-means file, the plugin through the loader and the engine's refusal to
// synthesize with it.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <ATen/ops/from_blob.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include "engine.h"
#include "error.h"
#include "golden.h"
#include "hubert_model.h"
#include "managed_tensor.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "safetensors.h"
#include "state_dict_file.h"
#include "status_object.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

using hubert::HubertConfig;
using hubert::HubertModel;
using hubert::KMeansTokenizer;
using seanet::StateDict;

std::filesystem::path dir() { return test::golden_dir("hubert"); }

#define SKIP_WITHOUT_HUBERT()                                                                                 \
    SKIP_WITHOUT_GOLDEN("hubert", "config.json", "vectors.safetensors", "weights_torchaudio.safetensors", \
                        "weights_hf.safetensors")

// The k-means layer of the golden file: metadata kmeans_layer is 0-based
// (an index into extract_features' list); ours is 1-based.
int64_t golden_layer() {
    const safetensors::File file(dir() / "vectors.safetensors");
    return std::stoll(file.metadata().at("kmeans_layer")) + 1;
}

// Writes the golden centroids as a k-means file of the documented format.
std::filesystem::path write_kmeans_file(const std::string& name, bool with_layer) {
    const test::GoldenVectors vectors(dir() / "vectors.safetensors");
    const at::Tensor centroids = vectors.get("kmeans_centroids").contiguous();
    safetensors::Writer writer;
    if (with_layer) writer.set_metadata("layer", std::to_string(golden_layer()));
    writer.add_f32("centroids", {centroids.size(0), centroids.size(1)}, centroids.data_ptr<float>());
    const auto path = std::filesystem::temp_directory_path() / ("cadenza_hubert_" + name + ".safetensors");
    writer.write(path);
    return path;
}

void check_golden(const std::string& weights) {
    c10::InferenceMode inference;
    const HubertConfig config = HubertConfig::from_file(dir() / "config.json");
    const HubertModel model = HubertModel::load(config, dir() / weights, c10::Device(c10::kCPU));
    const test::GoldenVectors vectors(dir() / "vectors.safetensors");
    const at::Tensor input = vectors.get("input");
    const hubert::HubertOutputs out = model.run(input);
    test::expect_close(weights + " conv_features", out.conv_features, vectors.get("conv_features"));
    test::expect_close(weights + " projected", out.projected, vectors.get("projected"));
    test::expect_close(weights + " encoder_input", out.encoder_input, vectors.get("encoder_input"));
    size_t layers = 0;
    for (const std::string& name : vectors.names()) {
        if (name.rfind("layer_", 0) != 0) continue;
        const size_t index = std::stoul(name.substr(6));
        ASSERT_LT(index, out.layers.size()) << name;
        test::expect_close(weights + " " + name, out.layers[index], vectors.get(name));
        ++layers;
    }
    EXPECT_EQ(layers, out.layers.size());
    // forward: a post-norm model adds nothing after the last layer.
    if (!config.layer_norm_first)
        test::expect_close(weights + " forward", out.output, vectors.get("layer_" + std::to_string(out.layers.size() - 1)));
    // extract_features with a layer count stops there.
    const std::vector<at::Tensor> first = model.extract_features(input, 1);
    ASSERT_EQ(first.size(), 1u);
    test::expect_close(weights + " extract_features(num_layers=1)", first[0], vectors.get("layer_0"));

    const KMeansTokenizer kmeans(vectors.get("kmeans_centroids"), golden_layer());
    const at::Tensor units = kmeans.assign(out.layers[static_cast<size_t>(golden_layer() - 1)]);
    test::expect_codes_equal(weights + " units", units, vectors.get("units"));
}

TEST(HubertGolden, TorchaudioNamedWeightsReproduceEveryTensor) {
    SKIP_WITHOUT_HUBERT();
    check_golden("weights_torchaudio.safetensors");
}

TEST(HubertGolden, HuggingFaceNamedWeightsReproduceEveryTensor) {
    SKIP_WITHOUT_HUBERT();
    check_golden("weights_hf.safetensors");
}

// Four columns: torchaudio key ("-" when none), Hugging Face key, shape, dtype.
struct OfficialKey {
    std::string torchaudio, hugging_face;
    seanet::Shape shape;
};

std::vector<OfficialKey> read_official_keys() {
    std::ifstream file(dir() / "official_base_keys.tsv");
    std::vector<OfficialKey> keys;
    for (std::string line; std::getline(file, line);) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        OfficialKey key;
        std::string shape_text, dtype;
        std::getline(fields, key.torchaudio, '\t');
        std::getline(fields, key.hugging_face, '\t');
        std::getline(fields, shape_text, '\t');
        std::getline(fields, dtype, '\t');
        EXPECT_EQ(dtype, "float32") << line;
        std::istringstream dims(shape_text.substr(1, shape_text.size() - 2));
        for (std::string dim; std::getline(dims, dim, ',');) key.shape.push_back(std::stoll(dim));
        keys.push_back(key);
    }
    return keys;
}

TEST(HubertOfficialKeys, HubertBaseBuildsTheOfficialStateDictUnderBothNames) {
    SKIP_WITHOUT_GOLDEN("hubert", "official_base_keys.tsv");
    c10::InferenceMode inference;
    seanet::ParameterRecorder recorder;
    HubertModel model(HubertConfig::official("hubert_base"), recorder);
    std::vector<OfficialKey> official = read_official_keys();
    ASSERT_FALSE(official.empty());
    // The last line, masked_spec_embed, exists only in Hugging Face checkpoints.
    ASSERT_EQ(official.back().torchaudio, "-");
    EXPECT_EQ(official.back().hugging_face, "masked_spec_embed");
    EXPECT_EQ(official.back().shape, seanet::Shape{768});
    official.pop_back();
    const auto& specs = recorder.specs();
    ASSERT_EQ(specs.size(), official.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        ASSERT_EQ(specs[i].name, official[i].torchaudio) << "entry " << i;
        EXPECT_EQ(hubert::hugging_face_key(specs[i].name), official[i].hugging_face) << specs[i].name;
        EXPECT_EQ(specs[i].shape, official[i].shape) << specs[i].name;
    }
    // Both namings load (random weights, Hugging Face with masked_spec_embed).
    StateDict hf;
    for (const auto& [name, tensor] : recorder.tensors()) hf.emplace_back(hubert::hugging_face_key(name), tensor);
    hf.emplace_back("masked_spec_embed", at::randn({768}));
    EXPECT_NO_THROW(HubertModel::from_state_dict(HubertConfig::official("hubert_base"), hf, "hf", c10::Device(c10::kCPU)));
    EXPECT_NO_THROW(HubertModel::from_state_dict(HubertConfig::official("hubert_base"), recorder.tensors(), "ta",
                                                 c10::Device(c10::kCPU)));
}

TEST(HubertConfigs, LargeAndXlargeArePreNormWithLayerNormExtractors) {
    c10::InferenceMode inference;
    for (const char* name : {"hubert_large", "hubert_xlarge"}) {
        seanet::ParameterRecorder recorder;
        HubertConfig config = HubertConfig::official(name);
        config.num_hidden_layers = 1;  // keep it small
        HubertModel model(config, recorder);
        int64_t extractor_norms = 0;
        for (const auto& spec : recorder.specs())
            if (spec.name.find("feature_extractor") == 0 && spec.name.find("layer_norm.weight") != std::string::npos)
                ++extractor_norms;
        EXPECT_EQ(extractor_norms, 7) << name;
        // A pre-norm model's forward ends with the encoder LayerNorm.
        const at::Tensor audio = at::randn({1, 1600});
        EXPECT_EQ(model.forward(audio).size(1), 4) << name;
    }
}

class HubertCheckpointErrors : public ::testing::Test {
protected:
    void SetUp() override {
        if (!test::golden_available("hubert", {"config.json", "weights_torchaudio.safetensors", "weights_hf.safetensors"}))
            GTEST_SKIP() << "golden folder hubert is absent";
        config_ = HubertConfig::from_file(dir() / "config.json");
    }
    std::string load_error(StateDict state) {
        c10::InferenceMode inference;
        try {
            HubertModel::from_state_dict(config_, std::move(state), "weights.safetensors", c10::Device(c10::kCPU));
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
            std::printf("    error: %s\n", e.what());
            return e.what();
        }
        return "";
    }
    HubertConfig config_;
};

TEST_F(HubertCheckpointErrors, MissingWrongShapeAndUnexpectedKeysAreNamed) {
    for (const char* file : {"weights_torchaudio.safetensors", "weights_hf.safetensors"}) {
        const StateDict state = seanet::read_state_dict(dir() / file);
        EXPECT_EQ(load_error(state), "") << file;
        for (size_t dropped : {size_t{0}, size_t{15}, state.size() - 1}) {
            StateDict missing = state;
            const std::string key = missing[dropped].first;
            missing.erase(missing.begin() + static_cast<std::ptrdiff_t>(dropped));
            EXPECT_NE(load_error(missing).find("missing key '" + key + "'"), std::string::npos) << key;
        }
        StateDict reshaped = state;
        reshaped[14].second = reshaped[14].second.narrow(2, 0, 64);  // pos_conv weight_g [1, 1, 128] -> [1, 1, 64]
        EXPECT_NE(load_error(reshaped).find("key '" + reshaped[14].first + "' has shape [1, 1, 64]"), std::string::npos);
        StateDict extra = state;
        extra.emplace_back("encoder.layers.7.attention.k_proj.weight", at::randn({96, 96}));
        if (std::string(file) == "weights_torchaudio.safetensors") extra.back().first = "encoder.transformer.layers.7.x";
        EXPECT_NE(load_error(extra).find("unexpected key '" + extra.back().first + "'"), std::string::npos);
    }
    StateDict neither{{"foo.weight", at::randn({3})}};
    EXPECT_NE(load_error(neither).find("neither torchaudio"), std::string::npos);
}

TEST_F(HubertCheckpointErrors, AConfigOfAnotherSizeNamesTheFirstKeyThatDiffers) {
    config_.conv_dim.assign(7, 64);
    const std::string message = load_error(seanet::read_state_dict(dir() / "weights_torchaudio.safetensors"));
    EXPECT_NE(message.find("key 'feature_extractor.conv_layers.0.layer_norm.weight' has shape [128]"), std::string::npos);
}

TEST(HubertKMeans, TheFileFormatAndItsErrors) {
    SKIP_WITHOUT_HUBERT();
    c10::InferenceMode inference;
    const auto path = write_kmeans_file("format", true);
    const KMeansTokenizer kmeans = KMeansTokenizer::load(path, c10::Device(c10::kCPU));
    EXPECT_EQ(kmeans.size(), 50);
    EXPECT_EQ(kmeans.dimension(), 96);
    EXPECT_EQ(kmeans.layer(), golden_layer());
    safetensors::Writer wrong;
    const std::vector<float> values(6, 0.f);
    wrong.add_f32("cluster_centers_", {2, 3}, values.data());
    const auto wrong_path = std::filesystem::temp_directory_path() / "cadenza_hubert_wrong.safetensors";
    wrong.write(wrong_path);
    try {
        KMeansTokenizer::load(wrong_path, c10::Device(c10::kCPU));
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no tensor 'centroids'"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
    std::filesystem::remove(wrong_path);
}

// The plugin through the core's loader, as a pipeline's [codec] table.
class HubertPlugin {
public:
    explicit HubertPlugin(const std::string& table)
        : config_(load_pipeline_config_string("[codec]\n" + table, "codec.toml", test::source_dir())),
          instance_(*config_.stage("codec"), "cpu", 0) {}
    const cdz_codec_vtable& vtable() const { return instance_.vtable<cdz_codec_vtable>(); }
    cdz_codec_info info() const {
        cdz_codec_info info{};
        info.struct_size = sizeof(info);
        throw_if_error(vtable().get_info(instance_.context(), &info), "get_info");
        return info;
    }
    at::Tensor encode(const at::Tensor& samples) const {
        const at::Tensor input = samples.contiguous();
        TensorView view(input.data_ptr<float>(), DLDataType{kDLFloat, 32, 1}, {input.size(0)});
        ManagedTensor codes;
        throw_if_error(vtable().encode(instance_.context(), view.get(), codes.out()), "encode");
        const auto shape = codes.expect(kDLInt, 32, 2, "codes");
        return at::from_blob(const_cast<int32_t*>(codes.data<int32_t>()), {shape[0], shape[1]}, at::kInt).clone();
    }
    void* context() const { return instance_.context(); }

private:
    PipelineConfig config_;
    PluginInstance instance_;
};

std::string quoted(const std::filesystem::path& path) { return "\"" + path.string() + "\""; }

std::string message_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const std::exception& e) {
        std::printf("    error: %s\n", e.what());
        return e.what();
    }
    return "";
}

TEST(HubertPluginTest, EncodesGoldenUnitsThroughTheAbiAndRefusesToDecode) {
    SKIP_WITHOUT_HUBERT();
    c10::InferenceMode inference;
    const auto kmeans = write_kmeans_file("plugin", true);
    const test::GoldenVectors vectors(dir() / "vectors.safetensors");
    for (const char* weights : {"weights_torchaudio.safetensors", "weights_hf.safetensors"}) {
        const HubertPlugin codec("plugin = \"codec.hubert\"\ncheckpoint = " + quoted(dir() / weights) +
                                 "\nkmeans = " + quoted(kmeans) + "\n");
        const cdz_codec_info info = codec.info();
        EXPECT_EQ(info.sample_rate, 16000u);
        EXPECT_DOUBLE_EQ(info.frame_rate, 50.0);
        EXPECT_EQ(info.codebook_count, 1u);
        EXPECT_EQ(info.codebook_size, 50u);
        EXPECT_EQ(info.can_encode, 1);
        EXPECT_EQ(info.can_decode, 0);
        EXPECT_EQ(info.can_stream, 0);
        const at::Tensor codes = codec.encode(vectors.get("input")[0]);
        test::expect_codes_equal(std::string("abi units ") + weights, codes, vectors.get("units"));

        const at::Tensor some = codes.contiguous();
        TensorView view(some.data_ptr<int32_t>(), DLDataType{kDLInt, 32, 1}, {some.size(0), some.size(1)});
        ManagedTensor audio;
        const std::string decode_error = message_of(
            [&] { throw_if_error(codec.vtable().decode(codec.context(), view.get(), audio.out()), "decode"); });
        EXPECT_NE(decode_error.find("codec.hubert"), std::string::npos);
        EXPECT_NE(decode_error.find("encode-only"), std::string::npos);
        void* stream = nullptr;
        try {
            throw_if_error(codec.vtable().stream_create(codec.context(), &stream), "stream_create");
            ADD_FAILURE() << "stream_create succeeded";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), CDZ_STATUS_UNSUPPORTED) << e.what();
        }
    }
    // Too short for one frame.
    const HubertPlugin codec("plugin = \"codec.hubert\"\ncheckpoint = " + quoted(dir() / "weights_hf.safetensors") +
                             "\nkmeans = " + quoted(kmeans) + "\n");
    EXPECT_NE(message_of([&] { codec.encode(at::zeros({100})); }).find("at least 400 samples"), std::string::npos);
    std::filesystem::remove(kmeans);
}

TEST(HubertPluginTest, ParameterErrors) {
    SKIP_WITHOUT_HUBERT();
    const auto with_layer = write_kmeans_file("params_layer", true);
    const auto without_layer = write_kmeans_file("params_nolayer", false);
    const std::string base = "plugin = \"codec.hubert\"\ncheckpoint = " + quoted(dir() / "weights_hf.safetensors") + "\n";
    EXPECT_NE(message_of([&] { HubertPlugin("" + base + "kmeans = " + quoted(without_layer) + "\n"); })
                  .find("does not name its layer"),
              std::string::npos);
    EXPECT_EQ(message_of([&] { HubertPlugin(base + "kmeans = " + quoted(without_layer) + "\nlayer = 3\n"); }), "");
    EXPECT_NE(message_of([&] { HubertPlugin(base + "kmeans = " + quoted(with_layer) + "\nlayer = 1\n"); })
                  .find("was made for layer"),
              std::string::npos);
    EXPECT_NE(message_of([&] { HubertPlugin(base + "kmeans = " + quoted(without_layer) + "\nlayer = 4\n"); })
                  .find("out of range"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  HubertPlugin(base + "kmeans = " + quoted(with_layer) + "\nconfig = \"hubert_base\"\n");
              }).find("dimension 96"),
              std::string::npos);
    std::filesystem::remove(with_layer);
    std::filesystem::remove(without_layer);
}

TEST(HubertPluginTest, ASynthesisPipelineWithAnEncodeOnlyCodecIsRefusedClearly) {
    SKIP_WITHOUT_HUBERT();
    const auto kmeans = write_kmeans_file("engine", true);
    const std::string message = message_of([&] {
        Engine engine(load_pipeline_config_string("[codec]\nplugin = \"codec.hubert\"\ncheckpoint = " +
                                                      quoted(dir() / "weights_hf.safetensors") +
                                                      "\nkmeans = " + quoted(kmeans) + "\n",
                                                  "pipeline.toml", test::source_dir()));
    });
    EXPECT_NE(message.find("codec.hubert"), std::string::npos) << message;
    EXPECT_NE(message.find("only encodes"), std::string::npos) << message;
    std::filesystem::remove(kmeans);
}

}  // namespace
}  // namespace cadenza
