// codec.encodec and codec.speechtokenizer as the engine sees them: loaded
// from their libraries through a pipeline's [codec] table, parameters
// checked, metadata, encode -> decode through DLPack, chunked decoding.
#include <gtest/gtest.h>

#include <ATen/ops/cat.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>

#include "encodec_config.h"
#include "error.h"
#include "speechtokenizer_config.h"
#include "golden.h"
#include "managed_tensor.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "safetensors.h"
#include "state_dict_file.h"
#include "status_object.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

class CodecPlugin {
public:
    explicit CodecPlugin(const std::string& table)
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

    at::Tensor decode(const at::Tensor& codes) const {
        const at::Tensor input = codes.to(at::kInt).contiguous();
        TensorView view(input.data_ptr<int32_t>(), DLDataType{kDLInt, 32, 1}, {input.size(0), input.size(1)});
        ManagedTensor audio;
        throw_if_error(vtable().decode(instance_.context(), view.get(), audio.out()), "decode");
        return to_tensor(audio);
    }

    // Decodes `chunk` frames at a time; returns every chunk's audio.
    std::vector<at::Tensor> stream_decode(const at::Tensor& codes, int64_t chunk) const {
        void* stream = nullptr;
        throw_if_error(vtable().stream_create(instance_.context(), &stream), "stream_create");
        std::vector<at::Tensor> pieces;
        const at::Tensor all = codes.to(at::kInt).contiguous();
        for (int64_t start = 0; start < all.size(1); start += chunk) {
            const at::Tensor part = all.narrow(1, start, std::min(chunk, all.size(1) - start)).contiguous();
            TensorView view(part.data_ptr<int32_t>(), DLDataType{kDLInt, 32, 1}, {part.size(0), part.size(1)});
            ManagedTensor audio;
            const bool last = start + chunk >= all.size(1);
            throw_if_error(vtable().stream_decode(stream, view.get(), last ? 1 : 0, audio.out()), "stream_decode");
            pieces.push_back(to_tensor(audio));
        }
        vtable().stream_destroy(stream);
        return pieces;
    }

private:
    static at::Tensor to_tensor(const ManagedTensor& audio) {
        const auto shape = audio.expect(kDLFloat, 32, 1, "audio");
        return at::from_blob(const_cast<float*>(audio.data<float>()), {shape[0]}, at::kFloat).clone();
    }

    PipelineConfig config_;
    PluginInstance instance_;
};

std::string quoted(const std::filesystem::path& path) { return "\"" + path.string() + "\""; }

std::string encodec_table(const std::string& folder, const std::string& extra = "") {
    const auto dir = test::golden_dir(folder);
    return "plugin = \"codec.encodec\"\ncheckpoint = " + quoted(dir / "checkpoint.th") +
           "\nconfig = " + quoted(dir / "config.json") + "\n" + extra;
}

// The bandwidth of the first "codes_bw<kbps>..." tensor of the golden file.
std::string first_bandwidth(const test::GoldenVectors& vectors) {
    for (const std::string& name : vectors.names()) {
        if (name.rfind("codes_bw", 0) != 0) continue;
        const std::string rest = name.substr(8);
        return rest.substr(0, rest.find('_'));
    }
    ADD_FAILURE() << "no codes_bw* tensor";
    return "";
}

// The message of the error `body` raises ("" when none), printed for the log.
std::string message_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const std::exception& e) {
        std::printf("    error: %s\n", e.what());
        return e.what();
    }
    return "";
}

TEST(CodecPlugins, EncodecEncodesAndDecodesThroughTheAbiLikeTheReference) {
    SKIP_WITHOUT_GOLDEN("encodec", "config.json", "checkpoint.th", "vectors.safetensors");
    c10::InferenceMode inference;
    const test::GoldenVectors vectors(test::golden_dir("encodec") / "vectors.safetensors");
    const std::string bandwidth = first_bandwidth(vectors);
    const CodecPlugin codec(encodec_table("encodec", "bandwidth = " + bandwidth + "\n"));
    const cdz_codec_info info = codec.info();
    const at::Tensor reference_codes = vectors.get("codes_bw" + bandwidth)[0];
    const auto config = encodec::EncodecConfig::from_file(test::golden_dir("encodec") / "config.json");
    EXPECT_EQ(info.sample_rate, static_cast<uint32_t>(config.sample_rate));
    EXPECT_DOUBLE_EQ(info.frame_rate, static_cast<double>(config.sample_rate) / static_cast<double>(config.hop_length()));
    EXPECT_EQ(info.codebook_count, static_cast<uint32_t>(reference_codes.size(0)));
    EXPECT_EQ(info.codebook_size, static_cast<uint32_t>(config.quantizer.bins));
    EXPECT_EQ(info.can_stream, config.decoder.causal && !config.segment ? 1 : 0);

    const at::Tensor input = vectors.get("input")[0][0];
    const at::Tensor codes = codec.encode(input);
    test::expect_codes_equal("abi codes_bw" + bandwidth, codes, reference_codes);
    const at::Tensor audio = codec.decode(codes);
    test::expect_close("abi decoded_bw" + bandwidth, audio, vectors.get("decoded_bw" + bandwidth)[0][0]);

    // Chunks of 1, 7 and 40 frames give the samples of whole decoding.
    for (int64_t chunk : {1, 7, 40}) {
        const std::vector<at::Tensor> pieces = codec.stream_decode(codes, chunk);
        const at::Tensor streamed = at::cat(pieces);
        test::expect_close("streamed in chunks of " + std::to_string(chunk), streamed, audio);
    }
}

TEST(CodecPlugins, Encodec48khzDuplicatesMonoAndConcatenatesSegments) {
    SKIP_WITHOUT_GOLDEN("encodec48", "config.json", "checkpoint.th", "vectors.safetensors");
    c10::InferenceMode inference;
    const test::GoldenVectors vectors(test::golden_dir("encodec48") / "vectors.safetensors");
    const std::string bandwidth = first_bandwidth(vectors);
    const CodecPlugin codec(encodec_table("encodec48", "bandwidth = " + bandwidth + "\ndecode_scale = 0.2\n"));
    const cdz_codec_info info = codec.info();
    const auto config = encodec::EncodecConfig::from_file(test::golden_dir("encodec48") / "config.json");
    EXPECT_EQ(info.sample_rate, static_cast<uint32_t>(config.sample_rate));
    EXPECT_EQ(info.codebook_count, static_cast<uint32_t>(vectors.get("codes_bw" + bandwidth + "_seg0").size(1)));
    EXPECT_EQ(info.can_stream, 0);  // not causal: a stream decodes when it ends

    const at::Tensor input = vectors.get("input")[0].mean(0);
    const at::Tensor codes = codec.encode(input);
    int64_t frames = 0;
    for (int segment = 0; vectors.contains("codes_bw" + bandwidth + "_seg" + std::to_string(segment)); ++segment)
        frames += vectors.get("codes_bw" + bandwidth + "_seg" + std::to_string(segment)).size(2);
    EXPECT_EQ(codes.size(0), static_cast<int64_t>(info.codebook_count));
    EXPECT_EQ(codes.size(1), frames);
    const at::Tensor audio = codec.decode(codes);
    EXPECT_EQ(audio.size(0), vectors.get("decoded_bw" + bandwidth).size(2));
    const std::vector<at::Tensor> pieces = codec.stream_decode(codes, 50);
    for (size_t i = 0; i + 1 < pieces.size(); ++i) EXPECT_EQ(pieces[i].size(0), 0);
    test::expect_close("48k streamed on flush", pieces.back(), audio);
}

TEST(CodecPlugins, SpeechTokenizerGivesSemanticTokensWithOneQuantizer) {
    SKIP_WITHOUT_GOLDEN("speechtokenizer", "config.json", "checkpoint.pt", "vectors.safetensors");
    c10::InferenceMode inference;
    const auto dir = test::golden_dir("speechtokenizer");
    const test::GoldenVectors vectors(dir / "vectors.safetensors");
    const std::string table = "plugin = \"codec.speechtokenizer\"\ncheckpoint = " + quoted(dir / "checkpoint.pt") +
                              "\nconfig = " + quoted(dir / "config.json") + "\n";
    const at::Tensor input = vectors.get("input")[0][0];

    const CodecPlugin semantic(table + "n_q = 1\n");
    EXPECT_EQ(semantic.info().codebook_count, 1u);
    const auto config = speechtokenizer::SpeechTokenizerConfig::from_file(dir / "config.json");
    EXPECT_EQ(semantic.info().sample_rate, static_cast<uint32_t>(config.sample_rate));
    EXPECT_DOUBLE_EQ(semantic.info().frame_rate,
                     static_cast<double>(config.sample_rate) / static_cast<double>(config.hop_length()));
    test::expect_codes_equal("abi codes_rvq1", semantic.encode(input), vectors.get("codes_rvq1").select(1, 0));

    const std::string too_many = std::to_string(config.quantizer.n_q + 1);
    const std::string message = message_of([&] { CodecPlugin codec(table + "n_q = " + too_many + "\n"); });
    EXPECT_NE(message.find("n_q = " + too_many + " but the model has"), std::string::npos) << message;

    const CodecPlugin all(table);
    const at::Tensor reference = vectors.get("codes").select(1, 0);
    EXPECT_EQ(all.info().codebook_count, static_cast<uint32_t>(reference.size(0)));
    const at::Tensor codes = all.encode(input);
    test::expect_codes_equal("abi codes", codes, reference);
    test::expect_close("abi decoded", all.decode(codes), vectors.get("decoded")[0][0]);
}

TEST(CodecPlugins, ParametersAreCheckedAgainstTheModel) {
    SKIP_WITHOUT_GOLDEN("encodec", "config.json", "checkpoint.th");
    std::string message = message_of([] { CodecPlugin codec(encodec_table("encodec", "bandwidth = 0.123\n")); });
    EXPECT_NE(message.find("bandwidth 0.123 kbps is not one of"), std::string::npos) << message;
    message = message_of([] { CodecPlugin codec(encodec_table("encodec", "bandwith = 6.0\n")); });
    EXPECT_NE(message.find("bandwith"), std::string::npos) << message;  // the host's schema check
    message = message_of([] { CodecPlugin codec(encodec_table("encodec", "device = \"gpu\"\n")); });
    EXPECT_NE(message.find("device 'gpu' is not a device"), std::string::npos) << message;
    message = message_of([] {
        const auto dir = test::golden_dir("encodec");
        CodecPlugin codec("plugin = \"codec.encodec\"\ncheckpoint = " + quoted(dir / "checkpoint.th") +
                          "\nconfig = \"no_such_config.json\"\n");
    });
    EXPECT_NE(message.find("neither an official model"), std::string::npos) << message;
}

TEST(CodecPlugins, ACheckpointWithAMissingKeyIsRefusedNamingIt) {
    SKIP_WITHOUT_GOLDEN("speechtokenizer", "config.json", "checkpoint.pt");
    c10::InferenceMode inference;
    const auto dir = test::golden_dir("speechtokenizer");
    const auto scratch = test::fresh_directory("codec-missing-key");
    seanet::StateDict state = seanet::read_state_dict(dir / "checkpoint.pt");
    const std::string dropped = state[state.size() / 3].first;
    safetensors::Writer writer;
    for (const auto& [name, tensor] : state) {
        if (name == dropped) continue;
        const at::Tensor values = tensor.contiguous();
        writer.add_f32(name, std::vector<int64_t>(values.sizes().begin(), values.sizes().end()),
                       values.data_ptr<float>());
    }
    writer.write(scratch / "model.safetensors");
    const std::string message = message_of([&] {
        CodecPlugin codec("plugin = \"codec.speechtokenizer\"\ncheckpoint = " + quoted(scratch / "model.safetensors") +
                          "\nconfig = " + quoted(dir / "config.json") + "\n");
    });
    EXPECT_NE(message.find("missing key '" + dropped + "'"), std::string::npos) << message;
}

}  // namespace
}  // namespace cadenza
