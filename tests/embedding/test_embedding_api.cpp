// The embedding API as an application sees it: only cadenza.h and
// libcadenza.so. The pipelines use the test doubles test.markov_backbone
// and test.tone_codec with the real frontend.chars.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cadenza/cadenza.h"

namespace {

struct StatusDeleter {
    void operator()(cdz_status* s) const { cdz_status_free(s); }
};
using Status = std::unique_ptr<cdz_status, StatusDeleter>;
struct PipelineDeleter {
    void operator()(cdz_pipeline* p) const { cdz_pipeline_free(p); }
};
using Pipeline = std::unique_ptr<cdz_pipeline, PipelineDeleter>;

std::string message_of(const Status& status) { return status ? cdz_status_get_message(status.get()) : "ok"; }

const std::string vocabulary = std::string(CADENZA_SOURCE_DIR) + "/models/frontend/english_chars.vocab";

std::string doubles_pipeline(const std::string& extra = "", const std::string& sampling = "temperature = 0.8") {
    return "[pipeline]\nname = \"doubles\"\nseed = 11\nmax_audio_seconds = 2.0\n"
           "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"" + vocabulary + "\"\n"
           "[codec]\nplugin = \"test.tone_codec\"\n"
           "[backbone]\nplugin = \"test.markov_backbone\"\nend_after = 60\n"
           "[sampling]\n" + sampling + "\n" + extra;
}

// The doubles' pipeline with [pipeline] codec_thread set ("true" or "false").
std::string doubles_pipeline_with_codec_thread(const std::string& codec_thread) {
    std::string text = doubles_pipeline();
    return text.insert(text.find("[frontend]"), "codec_thread = " + codec_thread + "\n");
}

Pipeline load(const std::string& text) {
    const std::string doubles = std::string(TEST_PLUGIN_DIR) + "/doubles";
    const std::string c_plugin = std::string(TEST_PLUGIN_DIR) + "/c_plugin";
    const char* paths[] = {doubles.c_str(), c_plugin.c_str()};
    cdz_pipeline_params params = cdz_pipeline_default_params();
    params.plugin_paths = paths;
    params.plugin_path_count = 2;
    cdz_pipeline* pipeline = nullptr;
    Status status(cdz_pipeline_load_string(text.c_str(), nullptr, &params, &pipeline));
    EXPECT_EQ(status, nullptr) << message_of(status);
    return Pipeline(pipeline);
}

// A synthesis that must fail: no audio, `code`, and `fragment` in the message.
void expect_synthesis_error(cdz_pipeline* pipeline, cdz_status_code code, const std::string& fragment) {
    cdz_audio* audio = nullptr;
    Status status(cdz_pipeline_synthesize(pipeline, "Some text.", nullptr, &audio));
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(audio, nullptr);
    EXPECT_EQ(cdz_status_get_code(status.get()), code);
    EXPECT_NE(message_of(status).find(fragment), std::string::npos) << message_of(status);
}

std::vector<float> synthesize(cdz_pipeline* pipeline, const char* text, uint64_t seed) {
    cdz_synthesis_params params = cdz_synthesis_default_params();
    params.use_seed = 1;
    params.seed = seed;
    cdz_audio* audio = nullptr;
    Status status(cdz_pipeline_synthesize(pipeline, text, &params, &audio));
    EXPECT_EQ(status, nullptr) << message_of(status);
    if (!audio) return {};
    EXPECT_EQ(audio->sample_rate, 16000u);
    std::vector<float> samples(audio->samples, audio->samples + audio->sample_count);
    cdz_audio_free(audio);
    return samples;
}

TEST(EmbeddingApi, ReportsItsVersions) {
    cdz_version version{};
    version.struct_size = sizeof(version);
    cdz_version_get(&version);
    EXPECT_EQ(version.abi_major, static_cast<uint32_t>(CDZ_ABI_VERSION_MAJOR));
    EXPECT_EQ(version.abi_minor, static_cast<uint32_t>(CDZ_ABI_VERSION_MINOR));
    EXPECT_EQ(version.plugin_abi_major, 1u);  // the plugin ABI 1.x contract (docs/abi.md)
    EXPECT_STREQ(version.library_version, cdz_library_version());
}

TEST(EmbeddingApi, AnOlderSmallerVersionStructIsFilledOnlyAsFarAsItReaches) {
    unsigned char buffer[sizeof(cdz_version)];
    std::fill(std::begin(buffer), std::end(buffer), 0xAB);
    auto* version = reinterpret_cast<cdz_version*>(buffer);
    version->struct_size = offsetof(cdz_version, plugin_abi_major);
    cdz_version_get(version);
    EXPECT_EQ(version->abi_major, static_cast<uint32_t>(CDZ_ABI_VERSION_MAJOR));
    EXPECT_EQ(buffer[offsetof(cdz_version, plugin_abi_major)], 0xAB);
}

TEST(EmbeddingApi, InvalidArgumentsGiveAStatusNotACrash) {
    cdz_pipeline* pipeline = nullptr;
    Status status(cdz_pipeline_load_file(nullptr, nullptr, &pipeline));
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(cdz_status_get_code(status.get()), CDZ_STATUS_INVALID_ARGUMENT);
    Status missing(cdz_pipeline_load_file("/no/such/pipeline.toml", nullptr, &pipeline));
    ASSERT_NE(missing, nullptr);
    EXPECT_EQ(cdz_status_get_code(missing.get()), CDZ_STATUS_NOT_FOUND);
    EXPECT_NE(message_of(missing).find("/no/such/pipeline.toml"), std::string::npos);
    Status synthesis(cdz_pipeline_synthesize(nullptr, "text", nullptr, nullptr));
    EXPECT_EQ(cdz_status_get_code(synthesis.get()), CDZ_STATUS_INVALID_ARGUMENT);
}

TEST(EmbeddingApi, ValidationErrorsCarryEveryPosition) {
    cdz_pipeline* pipeline = nullptr;
    const std::string text = "[pipeline]\nnmae = \"x\"\n[sampling]\ntemperature = -1\n";
    Status status(cdz_pipeline_load_string(text.c_str(), "bad.toml", nullptr, &pipeline));
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(pipeline, nullptr);
    EXPECT_EQ(cdz_status_get_code(status.get()), CDZ_STATUS_INVALID_CONFIG);
    EXPECT_NE(message_of(status).find("bad.toml:2:1: unknown key 'nmae'"), std::string::npos) << message_of(status);
    EXPECT_NE(message_of(status).find("bad.toml:4:15: 'temperature'"), std::string::npos) << message_of(status);
}

TEST(EmbeddingApi, SynthesisRepeatsBitForBitWithASeed) {
    Pipeline pipeline = load(doubles_pipeline());
    ASSERT_TRUE(pipeline);
    const auto first = synthesize(pipeline.get(), "Hello, world.", 3);
    const auto again = synthesize(pipeline.get(), "Hello, world.", 3);
    const auto other = synthesize(pipeline.get(), "Hello, world.", 4);
    ASSERT_EQ(first.size(), 60u * 320u);  // end_after = 60 frames of 320 samples
    EXPECT_EQ(first, again);
    EXPECT_NE(first, other);
}

TEST(EmbeddingApi, StatisticsDescribeTheLastRun) {
    Pipeline pipeline = load(doubles_pipeline());
    ASSERT_TRUE(pipeline);
    synthesize(pipeline.get(), "Statistics.", 1);
    cdz_stats stats{};
    stats.struct_size = sizeof(stats);
    Status status(cdz_pipeline_get_stats(pipeline.get(), &stats));
    ASSERT_EQ(status, nullptr) << message_of(status);
    EXPECT_EQ(stats.tokens_generated, 61);  // 60 audio tokens and the end
    EXPECT_EQ(stats.steps, 61);
    EXPECT_EQ(stats.target_passes, 62);     // the prefill and one pass per token
    EXPECT_EQ(stats.draft_passes, 0);
    EXPECT_DOUBLE_EQ(stats.mean_accepted_length, 1.0);
    EXPECT_DOUBLE_EQ(stats.audio_seconds, 60 * 320 / 16000.0);
    EXPECT_GT(stats.tokens_per_second, 0.0);
    EXPECT_GE(stats.wall_seconds, stats.verify_seconds + stats.accept_seconds);
}

TEST(EmbeddingApi, StreamingDeliversTheSameAudioInChunks) {
    struct Collected {
        std::vector<float> samples;
        int chunks = 0;
    };
    auto collect = [](const float* samples, size_t count, uint32_t rate, void* user) -> int {
        auto* c = static_cast<Collected*>(user);
        c->samples.insert(c->samples.end(), samples, samples + count);
        ++c->chunks;
        return rate == 16000 ? 0 : 1;
    };
    // The codec decodes on a thread beside the loop (the default) or between steps.
    for (const char* codec_thread : {"true", "false"}) {
        SCOPED_TRACE(std::string("codec_thread = ") + codec_thread);
        Pipeline pipeline = load(doubles_pipeline_with_codec_thread(codec_thread));
        ASSERT_TRUE(pipeline);
        const auto whole = synthesize(pipeline.get(), "Streaming.", 8);
        Collected collected;
        cdz_synthesis_params params = cdz_synthesis_default_params();
        params.use_seed = 1;
        params.seed = 8;
        Status status(cdz_pipeline_synthesize_stream(pipeline.get(), "Streaming.", &params, collect, &collected));
        ASSERT_EQ(status, nullptr) << message_of(status);
        EXPECT_EQ(collected.samples, whole);
        EXPECT_EQ(collected.chunks, 6);  // 60 frames in chunks of 10, one call each, whenever they come
        cdz_stats stats{};
        stats.struct_size = sizeof(stats);
        ASSERT_EQ(Status(cdz_pipeline_get_stats(pipeline.get(), &stats)), nullptr);
        EXPECT_DOUBLE_EQ(stats.audio_seconds, 60 * 320 / 16000.0);
        EXPECT_GT(stats.codec_seconds, 0.0);
    }
}

TEST(EmbeddingApi, TheCallbackCanCancelAndThePipelineStaysUsable) {
    // The callback goes on after the first chunk and cancels at the second,
    // whether the codec decodes between steps or beside the loop.
    for (const char* codec_thread : {"false", "true"}) {
        SCOPED_TRACE(std::string("codec_thread = ") + codec_thread);
        Pipeline pipeline = load(doubles_pipeline_with_codec_thread(codec_thread));
        ASSERT_TRUE(pipeline);
        int calls = 0;
        auto cancel = [](const float*, size_t, uint32_t, void* user) -> int { return ++*static_cast<int*>(user) >= 2; };
        Status status(cdz_pipeline_synthesize_stream(pipeline.get(), "Cancel me.", nullptr, cancel, &calls));
        ASSERT_NE(status, nullptr);
        EXPECT_EQ(cdz_status_get_code(status.get()), CDZ_STATUS_CANCELLED);
        EXPECT_EQ(calls, 2);
        EXPECT_EQ(synthesize(pipeline.get(), "Still works.", 1).size(), 60u * 320u);
    }
}

TEST(EmbeddingApi, AGreedyAcceptorWithoutDraftsEqualsGreedyDecoding) {
    Pipeline plain = load(doubles_pipeline("", "temperature = 0"));
    Pipeline with_acceptor = load(doubles_pipeline("[acceptor]\nplugin = \"example.argmax_acceptor\"\n", "temperature = 0"));
    ASSERT_TRUE(plain && with_acceptor);
    EXPECT_EQ(synthesize(plain.get(), "Greedy.", 1), synthesize(with_acceptor.get(), "Greedy.", 2));
}

TEST(EmbeddingApi, DescribeGivesTheResolvedPipeline) {
    Pipeline pipeline = load(doubles_pipeline());
    ASSERT_TRUE(pipeline);
    char* text = nullptr;
    Status status(cdz_pipeline_describe(pipeline.get(), &text));
    ASSERT_EQ(status, nullptr);
    const std::string resolved = text;
    cdz_string_free(text);
    EXPECT_NE(resolved.find("plugin = \"test.markov_backbone\""), std::string::npos) << resolved;
    EXPECT_NE(resolved.find("end_after = 60\n"), std::string::npos) << resolved;
    EXPECT_NE(resolved.find("audio_tokens = 32  # default"), std::string::npos) << resolved;
}

TEST(EmbeddingApi, SynthesisWithoutABackboneSaysWhatIsMissing) {
    Pipeline pipeline = load("[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"" + vocabulary + "\"\n");
    ASSERT_TRUE(pipeline);
    expect_synthesis_error(pipeline.get(), CDZ_STATUS_INVALID_CONFIG, "missing [backbone], [codec]");
}

TEST(EmbeddingApi, ACodecThatDisagreesWithTheBackboneIsRefusedAtLoad) {
    const std::string doubles = std::string(TEST_PLUGIN_DIR) + "/doubles";
    const char* paths[] = {doubles.c_str()};
    cdz_pipeline_params params = cdz_pipeline_default_params();
    params.plugin_paths = paths;
    params.plugin_path_count = 1;
    const std::string text = doubles_pipeline("").replace(doubles_pipeline("").find("[codec]\nplugin = \"test.tone_codec\"\n"),
                                                            35, "[codec]\nplugin = \"test.tone_codec\"\ncodebook_size = 16\n");
    cdz_pipeline* pipeline = nullptr;
    Status status(cdz_pipeline_load_string(text.c_str(), nullptr, &params, &pipeline));
    ASSERT_NE(status, nullptr);
    EXPECT_NE(message_of(status).find("32 codes, but codec 'test.tone_codec' has 1 of 16"), std::string::npos)
        << message_of(status);
}

const std::string drafter_table = "[draft]\nplugin = \"test.markov_drafter\"\nend_after = 60\n";

int64_t passes_of(cdz_pipeline* pipeline, cdz_stats& stats) {
    stats = cdz_stats{};
    stats.struct_size = sizeof(stats);
    Status status(cdz_pipeline_get_stats(pipeline, &stats));
    EXPECT_EQ(status, nullptr) << message_of(status);
    return stats.target_passes;
}

TEST(EmbeddingApi, GreedySpeculativeDecodingEqualsGreedyDecodingInFewerPasses) {
    Pipeline plain = load(doubles_pipeline("", "temperature = 0"));
    Pipeline chain = load(doubles_pipeline(drafter_table + "depth = 4\n[acceptor]\nplugin = \"example.argmax_acceptor\"\n",
                                           "temperature = 0"));
    Pipeline tree = load(doubles_pipeline(drafter_table + "depth = 3\nbranching = 2\nnoise = 2.0\n"
                                          "[acceptor]\nplugin = \"example.argmax_acceptor\"\n", "temperature = 0"));
    ASSERT_TRUE(plain && chain && tree);
    const auto reference = synthesize(plain.get(), "Speculate.", 1);
    cdz_stats plain_stats{}, chain_stats{}, tree_stats{};
    const int64_t plain_passes = passes_of(plain.get(), plain_stats);
    EXPECT_EQ(synthesize(chain.get(), "Speculate.", 1), reference);
    EXPECT_LT(passes_of(chain.get(), chain_stats), plain_passes);
    EXPECT_EQ(synthesize(tree.get(), "Speculate.", 1), reference);
    EXPECT_LT(passes_of(tree.get(), tree_stats), plain_passes);
    EXPECT_GT(chain_stats.mean_accepted_length, 1.0);
    EXPECT_GT(tree_stats.mean_accepted_length, 1.0);
    EXPECT_EQ(chain_stats.tokens_generated, plain_stats.tokens_generated);
    EXPECT_EQ(chain_stats.draft_passes, chain_stats.steps);
    ASSERT_EQ(chain_stats.position_count, 4);
    for (int d = 1; d < 4; ++d) EXPECT_LE(chain_stats.acceptance_rate[d], 1.0);
}

// Threads (cadenza.h, "Threads"): a speculative pipeline has the most state
// a second synthesis could trample (drafter, acceptor, KV cache, statistics).
const std::string speculative_doubles = doubles_pipeline(drafter_table + "depth = 3\nbranching = 2\nnoise = 2.0\n"
                                                         "[acceptor]\nplugin = \"example.argmax_acceptor\"\n");

TEST(EmbeddingApi, PipelinesInSeveralThreadsGiveTheAudioOfSequentialRuns) {
    constexpr int count = 3;
    std::vector<Pipeline> pipelines;
    std::vector<std::vector<float>> sequential;
    for (int i = 0; i < count; ++i) {
        pipelines.push_back(load(speculative_doubles));
        ASSERT_TRUE(pipelines.back());
        sequential.push_back(synthesize(pipelines.back().get(), "In parallel.", 20 + i));
    }
    std::vector<std::vector<float>> threaded(count);
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back([&, i] {
            for (int round = 0; round < 5; ++round) threaded[i] = synthesize(pipelines[i].get(), "In parallel.", 20 + i);
        });
    for (auto& thread : threads) thread.join();
    for (int i = 0; i < count; ++i) EXPECT_EQ(threaded[i], sequential[i]) << "pipeline " << i;
}

TEST(EmbeddingApi, OnePipelineSharedByThreadsSynthesizesOneTextAtATime) {
    Pipeline pipeline = load(speculative_doubles);
    ASSERT_TRUE(pipeline);
    constexpr int count = 4;
    std::vector<std::vector<float>> sequential;
    for (int i = 0; i < count; ++i) sequential.push_back(synthesize(pipeline.get(), "Shared handle.", 30 + i));
    std::vector<int> mismatches(count, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back([&, i] {
            for (int round = 0; round < 100; ++round) {
                if (synthesize(pipeline.get(), "Shared handle.", 30 + i) != sequential[i]) ++mismatches[i];
                cdz_stats stats{};
                stats.struct_size = sizeof(stats);
                Status status(cdz_pipeline_get_stats(pipeline.get(), &stats));
                EXPECT_EQ(status, nullptr) << message_of(status);
            }
        });
    for (auto& thread : threads) thread.join();
    for (int i = 0; i < count; ++i) EXPECT_EQ(mismatches[i], 0) << "thread " << i;
}

TEST(EmbeddingApi, ASynthesisFromInsideItsOwnCallbackIsBusyAndTheRunningOneIsUnharmed) {
    Pipeline pipeline = load(speculative_doubles);
    ASSERT_TRUE(pipeline);
    const auto whole = synthesize(pipeline.get(), "Re-entry.", 9);
    struct Inside {
        cdz_pipeline* pipeline;
        std::vector<float> samples;
        std::vector<cdz_status_code> codes;
        std::string message;
    } inside{pipeline.get(), {}, {}, {}};
    auto reenter = [](const float* samples, size_t count, uint32_t, void* user) -> int {
        auto* in = static_cast<Inside*>(user);
        in->samples.insert(in->samples.end(), samples, samples + count);
        cdz_audio* audio = nullptr;
        Status nested(cdz_pipeline_synthesize(in->pipeline, "Nested.", nullptr, &audio));
        in->codes.push_back(cdz_status_get_code(nested.get()));
        in->message = message_of(nested);
        cdz_audio_free(audio);
        cdz_stats stats{};
        stats.struct_size = sizeof(stats);
        Status during(cdz_pipeline_get_stats(in->pipeline, &stats));
        in->codes.push_back(cdz_status_get_code(during.get()));
        return 0;
    };
    cdz_synthesis_params params = cdz_synthesis_default_params();
    params.use_seed = 1;
    params.seed = 9;
    Status status(cdz_pipeline_synthesize_stream(pipeline.get(), "Re-entry.", &params, reenter, &inside));
    ASSERT_EQ(status, nullptr) << message_of(status);
    EXPECT_EQ(inside.samples, whole);
    ASSERT_FALSE(inside.codes.empty());
    for (cdz_status_code code : inside.codes) EXPECT_EQ(code, CDZ_STATUS_BUSY);
    EXPECT_NE(inside.message.find("inside a callback"), std::string::npos) << inside.message;
    EXPECT_EQ(synthesize(pipeline.get(), "Re-entry.", 9), whole);
}

TEST(EmbeddingApi, NonFiniteDraftProbabilitiesAreAnErrorNamingTheDrafter) {
    Pipeline pipeline = load(doubles_pipeline(drafter_table + "nan_probabilities = true\n"
                                              "[acceptor]\nplugin = \"example.argmax_acceptor\"\n"));
    ASSERT_TRUE(pipeline);
    expect_synthesis_error(pipeline.get(), CDZ_STATUS_INVALID_ARGUMENT,
                           "test.markov_drafter: the draft probabilities of node 2 are not finite");
}

TEST(EmbeddingApi, ADrafterThatAsksForHiddenStatesGetsThem) {
    Pipeline pipeline = load(doubles_pipeline(drafter_table + "needs_hidden = true\n"
                                              "[acceptor]\nplugin = \"example.argmax_acceptor\"\n"));
    ASSERT_TRUE(pipeline);
    EXPECT_EQ(synthesize(pipeline.get(), "Hidden.", 5).size(), 60u * 320u);
}

TEST(EmbeddingApi, ADraftWithoutAnAcceptorIsRefused) {
    const std::string doubles = std::string(TEST_PLUGIN_DIR) + "/doubles";
    const char* paths[] = {doubles.c_str()};
    cdz_pipeline_params params = cdz_pipeline_default_params();
    params.plugin_paths = paths;
    params.plugin_path_count = 1;
    cdz_pipeline* pipeline = nullptr;
    Status status(cdz_pipeline_load_string(doubles_pipeline(drafter_table).c_str(), nullptr, &params, &pipeline));
    ASSERT_NE(status, nullptr);
    EXPECT_NE(message_of(status).find("[draft] needs an [acceptor]"), std::string::npos) << message_of(status);
}

TEST(EmbeddingApi, TheCatalogListsEveryPluginFound) {
    const std::string doubles = std::string(TEST_PLUGIN_DIR) + "/doubles";
    const char* paths[] = {doubles.c_str()};
    cdz_pipeline_params params = cdz_pipeline_default_params();
    params.plugin_paths = paths;
    params.plugin_path_count = 1;
    cdz_catalog* catalog = nullptr;
    Status status(cdz_catalog_scan(&params, &catalog));
    ASSERT_EQ(status, nullptr) << message_of(status);
    std::unique_ptr<cdz_catalog, void (*)(cdz_catalog*)> owned(catalog, cdz_catalog_free);
    bool found_double = false, found_own = false;
    for (size_t i = 0; i < cdz_catalog_count(catalog); ++i) {
        cdz_catalog_entry entry{};
        entry.struct_size = sizeof(entry);
        Status got(cdz_catalog_get(catalog, i, &entry));
        ASSERT_EQ(got, nullptr) << message_of(got);
        const std::string name = entry.name;
        if (name == "test.markov_backbone") {
            found_double = true;
            EXPECT_STREQ(entry.kind, "backbone");
            EXPECT_STREQ(entry.origin, "cdz_pipeline_params");
            EXPECT_NE(std::string(entry.library).find(doubles), std::string::npos) << entry.library;
        }
        if (name == "frontend.chars") {
            found_own = true;
            EXPECT_STREQ(entry.kind, "frontend");
            EXPECT_STREQ(entry.origin, "cadenza's own plugins");
            EXPECT_EQ(entry.shadowed, 0);
        }
    }
    EXPECT_TRUE(found_double);
    EXPECT_TRUE(found_own);
    cdz_catalog_entry entry{};
    entry.struct_size = sizeof(entry);
    Status out_of_range(cdz_catalog_get(catalog, cdz_catalog_count(catalog), &entry));
    ASSERT_NE(out_of_range, nullptr);
    EXPECT_EQ(cdz_status_get_code(out_of_range.get()), CDZ_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(cdz_catalog_problem(catalog, cdz_catalog_problem_count(catalog)), nullptr);
}

TEST(EmbeddingApi, TheCatalogReportsAMissingExplicitPathAsAProblem) {
    const char* paths[] = {"/no/such/plugins"};
    cdz_pipeline_params params = cdz_pipeline_default_params();
    params.plugin_paths = paths;
    params.plugin_path_count = 1;
    cdz_catalog* catalog = nullptr;
    Status status(cdz_catalog_scan(&params, &catalog));
    ASSERT_EQ(status, nullptr) << message_of(status);
    ASSERT_EQ(cdz_catalog_problem_count(catalog), 1u);
    EXPECT_NE(std::string(cdz_catalog_problem(catalog, 0)).find("/no/such/plugins"), std::string::npos);
    cdz_catalog_free(catalog);
}

}  // namespace
