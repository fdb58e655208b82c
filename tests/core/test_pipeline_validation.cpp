// Pipeline files: every problem is reported in one pass, each with its
// file, line and column; valid pipelines resolve with defaults filled in.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "diagnostic.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

std::vector<PluginLocation> test_locations() {
    return {{test::test_plugin_dir("c_plugin"), "test", true}, {test::test_plugin_dir("doubles"), "test", true}};
}

PipelineConfig load(const std::string& text) {
    return load_pipeline_config_string(text, "test.toml", test::source_dir() / "pipelines", test_locations());
}

std::vector<Diagnostic> errors_of(const std::string& text) {
    try {
        load(text);
    } catch (const ValidationError& e) {
        return e.diagnostics();
    }
    ADD_FAILURE() << "expected validation errors for:\n" << text;
    return {};
}

::testing::AssertionResult has_error(const std::vector<Diagnostic>& errors, uint32_t line, uint32_t column,
                                     const std::string& fragment) {
    for (const auto& e : errors)
        if (e.line == line && e.column == column && e.message.find(fragment) != std::string::npos)
            return ::testing::AssertionSuccess();
    auto failure = ::testing::AssertionFailure() << "no error at " << line << ":" << column << " containing '"
                                                 << fragment << "'; got:\n";
    for (const auto& e : errors) failure << "  " << e.to_string() << "\n";
    return failure;
}

const char* const acceptor_table = "[acceptor]\nplugin = \"example.argmax_acceptor\"\n";

TEST(PipelineValidation, AValidPipelineResolvesWithDefaults) {
    const auto config = load(std::string("[pipeline]\nname = \"ok\"\nseed = 42\n") + acceptor_table +
                             "min_probability = 0.25\n");
    EXPECT_EQ(config.name, "ok");
    EXPECT_EQ(config.seed, 42u);
    EXPECT_EQ(config.device, "cpu");
    EXPECT_DOUBLE_EQ(config.sampling.temperature, 1.0);
    const StageConfig* acceptor = config.stage("acceptor");
    ASSERT_NE(acceptor, nullptr);
    EXPECT_DOUBLE_EQ(acceptor->params->values.at("min_probability").number, 0.25);
    EXPECT_EQ(acceptor->params->values.at("mode").text, "argmax");
    EXPECT_TRUE(acceptor->params->values.at("mode").from_default);
    const std::string resolved = config.to_toml();
    EXPECT_NE(resolved.find("mode = \"argmax\"  # default"), std::string::npos) << resolved;
    EXPECT_NE(resolved.find("min_probability = 0.25\n"), std::string::npos) << resolved;
}

TEST(PipelineValidation, TheResolvedPipelineParsesAgainToTheSameValues) {
    const auto config = load(std::string(acceptor_table) + "max_accept = 3\n[sampling]\ntemperature = 0\n"
                             "[logits]\nprocessors = [\"classifier_free_guidance\", \"phone_markers\"]\n"
                             "[logits.classifier_free_guidance]\nscale = 1.5\n");
    // Without the first line (its source) and the default markers, the text is a fixed point.
    auto body = [](std::string text) {
        text = text.substr(text.find('\n'));
        for (size_t at; (at = text.find("  # default")) != std::string::npos;) text.erase(at, 11);
        return text;
    };
    const auto again = load_pipeline_config_string(config.to_toml(), "again.toml", test::source_dir(), test_locations());
    EXPECT_EQ(body(again.to_toml()), body(config.to_toml()));
    EXPECT_NE(config.to_toml().find("max_audio_seconds = 30.0\n"), std::string::npos) << config.to_toml();
}

TEST(PipelineValidation, AMisspelledKeyIsReportedAtItsPositionWithASuggestion) {
    const auto errors = errors_of(std::string(acceptor_table) + "min_probabilty = 0.5\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].file, "test.toml");
    EXPECT_TRUE(has_error(errors, 3, 1, "unknown key 'min_probabilty' in [acceptor] for 'example.argmax_acceptor' "
                                        "(did you mean 'min_probability'?)"));
}

TEST(PipelineValidation, WrongTypeOutOfRangeAndBadChoiceAreEachReported) {
    const auto errors = errors_of(std::string(acceptor_table) +
                                  "min_probability = \"high\"\nmax_accept = 65\nmode = \"argmx\"\n");
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_TRUE(has_error(errors, 3, 19, "'min_probability': expected a float, found a string"));
    EXPECT_TRUE(has_error(errors, 4, 14, "'max_accept': value 65 is out of range [0, 64]"));
    EXPECT_TRUE(has_error(errors, 5, 8, "'argmx' is not one of 'argmax', 'sample' (did you mean 'argmax'?)"));
}

TEST(PipelineValidation, AFloatParameterAcceptsAnInteger) {
    const auto config = load(std::string(acceptor_table) + "min_probability = 1\n");
    EXPECT_DOUBLE_EQ(config.stage("acceptor")->params->values.at("min_probability").number, 1.0);
}

TEST(PipelineValidation, MissingRequiredKeysAreReportedAtTheirTable) {
    const auto errors = errors_of("[pipeline]\nname = \"x\"\n\n[frontend]\nplugin = \"frontend.chars\"\n\n[codec]\n");
    EXPECT_TRUE(has_error(errors, 4, 1, "missing required key 'vocabulary' in [frontend] for 'frontend.chars'"));
    EXPECT_TRUE(has_error(errors, 7, 1, "missing required key 'plugin' in [codec]"));
}

TEST(PipelineValidation, AMissingFileIsReportedAtItsKey) {
    const auto errors = errors_of("[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"no/such.vocab\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_TRUE(has_error(errors, 3, 14, "'vocabulary': file not found: "));
    EXPECT_NE(errors[0].message.find("no/such.vocab"), std::string::npos);
}

TEST(PipelineValidation, AFileParameterThatIsADeviceOrFifoIsReportedAtItsKey) {
    // /dev/zero as a vocabulary took 6 GB before an error; a FIFO hung forever.
    const auto fifo = std::filesystem::temp_directory_path() / ("cadenza-test-fifo-" + std::to_string(::getpid()));
    std::filesystem::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string path : {std::string("/dev/zero"), fifo.string()}) {
        const auto errors = errors_of("[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"" + path + "\"\n");
        ASSERT_EQ(errors.size(), 1u) << path;
        EXPECT_TRUE(has_error(errors, 3, 14, "'vocabulary': not a regular file or directory")) << path;
    }
    std::filesystem::remove(fifo);
}

TEST(PipelineValidation, UnknownTablesPluginsAndWrongKindsAreReported) {
    const auto errors = errors_of(
        "[pipline]\nname = \"x\"\n"                                    // lines 1-2
        "[backbone]\nplugin = \"example.argmax_acceptor\"\n"            // lines 3-4
        "[acceptor]\nplugin = \"test.no_such_thing\"\n");              // lines 5-6
    EXPECT_TRUE(has_error(errors, 1, 2, "unknown table or key 'pipline' (did you mean 'pipeline'?)"));
    EXPECT_TRUE(has_error(errors, 4, 10, "plugin 'example.argmax_acceptor' is a acceptor, but [backbone] needs a backbone"));
    EXPECT_TRUE(has_error(errors, 6, 10, "no plugin named 'test.no_such_thing'"));
}

TEST(PipelineValidation, PipelineAndSamplingTablesAreValidatedToo) {
    const auto errors = errors_of("[pipeline]\ndevice = \"gpu\"\nseed = -1\n[sampling]\ntop_p = 1.5\ntopk = 3\n");
    EXPECT_TRUE(has_error(errors, 2, 10, "'device': expected 'cpu' or 'cuda:N', found 'gpu'"));
    EXPECT_TRUE(has_error(errors, 3, 8, "'seed': value -1 is out of range"));
    EXPECT_TRUE(has_error(errors, 5, 9, "'top_p': value 1.5 is out of range"));
    EXPECT_TRUE(has_error(errors, 6, 1, "unknown key 'topk' in [sampling] for 'cadenza' (did you mean 'top_k'?)"));
}

TEST(PipelineValidation, TheLogitsProcessorsAreReadInTheirOrder) {
    const auto config = load("[logits]\nprocessors = [\"phone_markers\", \"classifier_free_guidance\"]\n"
                             "[logits.classifier_free_guidance]\nscale = 2\n");
    ASSERT_EQ(config.logits_processors.size(), 2u);
    EXPECT_EQ(config.logits_processors[0].name, "phone_markers");
    EXPECT_DOUBLE_EQ(config.logits_processors[0].params.values.at("max_phone_seconds").number, 0.0);  // default
    EXPECT_EQ(config.logits_processors[1].name, "classifier_free_guidance");
    EXPECT_DOUBLE_EQ(config.logits_processors[1].params.values.at("scale").number, 2.0);
    const std::string resolved = config.to_toml();
    EXPECT_NE(resolved.find("[logits]\nprocessors = [\"phone_markers\", \"classifier_free_guidance\"]\n\n"
                            "[logits.phone_markers]\nmax_phone_seconds = 0.0  # default\n\n"
                            "[logits.classifier_free_guidance]\nscale = 2.0\n"),
              std::string::npos)
        << resolved;
    EXPECT_TRUE(load("").logits_processors.empty());
    EXPECT_NE(load("").to_toml().find("[logits]\nprocessors = []\n"), std::string::npos);
}

TEST(PipelineValidation, AnUnknownLogitsProcessorIsReportedWithTheKnownOnes) {
    const auto errors = errors_of("[logits]\nprocessors = [\"phone_markers\", \"phone_marker\"]\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_TRUE(has_error(errors, 2, 32, "'processors': element: 'phone_marker' is not one of "
                                         "'classifier_free_guidance', 'phone_markers' (did you mean 'phone_markers'?)"));
}

TEST(PipelineValidation, AProcessorsTableMustBelongToAListedProcessor) {
    const auto errors = errors_of("[logits]\nprocessors = [\"phone_markers\"]\n"
                                  "[logits.classifier_free_guidance]\nscale = 2\n"
                                  "[logits.phone_marks]\nmax_phone_seconds = 0.5\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_TRUE(has_error(errors, 3, 9, "[logits.classifier_free_guidance] is for a processor that [logits] "
                                        "processors does not list; add \"classifier_free_guidance\" there or remove "
                                        "the table"));
    EXPECT_TRUE(has_error(errors, 5, 9, "unknown logits processor [logits.phone_marks]; known: "
                                        "'classifier_free_guidance', 'phone_markers' (did you mean 'phone_markers'?)"));
}

TEST(PipelineValidation, TheOldSamplingKeysSayWhereTheyMoved) {
    const auto errors = errors_of("[sampling]\ntemperature = 0.7\nmax_phone_seconds = 0.5\nguidance_scale = 2\n");
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_TRUE(has_error(errors, 3, 1, "'max_phone_seconds' moved: [logits] processors = [\"phone_markers\"] with "
                                        "[logits.phone_markers] max_phone_seconds"));
    EXPECT_TRUE(has_error(errors, 4, 1, "'guidance_scale' moved: [logits] processors = "
                                        "[\"classifier_free_guidance\"] with [logits.classifier_free_guidance] scale"));
}

TEST(PipelineValidation, LogitsTablesAreTypeChecked) {
    const auto errors = errors_of("[logits]\nprocessors = \"phone_markers\"\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_TRUE(has_error(errors, 2, 14, "'processors': expected a string array, found a string"));

    const auto more = errors_of("[logits]\nprocessors = [\"phone_markers\", \"classifier_free_guidance\", "
                                "\"phone_markers\"]\nlimit = 3\n[logits.phone_markers]\nmax_phone_seconds = "
                                "\"long\"\n[logits.classifier_free_guidance]\nscale = 21\nscael = 2\n");
    ASSERT_EQ(more.size(), 5u);
    EXPECT_TRUE(has_error(more, 2, 60, "'phone_markers' is listed twice in [logits] processors"));
    EXPECT_TRUE(has_error(more, 3, 1, "unknown key 'limit' in [logits] for 'cadenza'"));
    EXPECT_TRUE(has_error(more, 5, 21, "'max_phone_seconds': expected a float, found a string"));
    EXPECT_TRUE(has_error(more, 7, 9, "'scale': value 21 is out of range [1, 20]"));
    EXPECT_TRUE(has_error(more, 8, 1, "unknown key 'scael' in [logits.classifier_free_guidance] for 'cadenza' "
                                      "(did you mean 'scale'?)"));

    const auto not_a_table = errors_of("[logits]\nprocessors = [\"phone_markers\"]\nphone_markers = 0.5\n");
    ASSERT_EQ(not_a_table.size(), 1u);
    EXPECT_TRUE(has_error(not_a_table, 3, 17, "'phone_markers' must be a table ([logits.phone_markers])"));
    const auto logits_not_a_table = errors_of("logits = 3\n");
    EXPECT_TRUE(has_error(logits_not_a_table, 1, 10, "'logits' must be a table ([logits])"));
}

TEST(PipelineValidation, ACudaDeviceIsAccepted) {
    EXPECT_EQ(load("[pipeline]\ndevice = \"cuda:1\"\n").device, "cuda:1");
    EXPECT_EQ(load("[pipeline]\ndevice = \"cuda\"\n").device, "cuda:0");
}

TEST(PipelineValidation, ASyntaxErrorIsReportedWithItsPosition) {
    const auto errors = errors_of("[pipeline]\nname = \"unterminated\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].line, 2u);
}

TEST(PipelineValidation, DeepKeysAndHeadersAreRefusedBeforeParsing) {
    // 50,000 levels overflowed the stack inside toml++ (issue 24, finding 2).
    std::string deep_header = "[pipeline]\nname = \"x\"\n[a";
    for (int i = 0; i < 50000; ++i) deep_header += ".a";
    deep_header += "]\n";
    EXPECT_TRUE(has_error(errors_of(deep_header), 3, 65, "more than 32 dotted parts"));
    std::string deep_key = "[pipeline]\nx";
    for (int i = 0; i < 50000; ++i) deep_key += ".x";
    EXPECT_TRUE(has_error(errors_of(deep_key + " = 1\n"), 2, 64, "more than 32 dotted parts"));
    std::string deep_inline = "[pipeline]\nname = \"a.b.c\" # a.b.c.d\ny = { z";
    for (int i = 0; i < 40; ++i) deep_inline += ".z";
    EXPECT_TRUE(has_error(errors_of(deep_inline + " = 1 }\n"), 3, 70, "more than 32 dotted parts"));
    // Dots in strings, comments and values are not key parts.
    std::string dots = "[pipeline]\nname = \"";
    for (int i = 0; i < 100; ++i) dots += "a.";
    dots += "\" # . . .\n[sampling]\ntemperature = 0.5\n";
    for (const auto& e : errors_of(dots + "[a.b]\n")) EXPECT_EQ(e.message.find("dotted"), std::string::npos) << e.to_string();
}

TEST(PipelineValidation, AHugeFileAndThousandsOfErrorsAreBounded) {
    const auto big = errors_of("[pipeline]\nname = \"" + std::string(2 << 20, 'x') + "\"\n");
    ASSERT_EQ(big.size(), 1u);
    EXPECT_NE(big[0].message.find("larger than 1048576 bytes"), std::string::npos) << big[0].to_string();
    std::string unknown = "[pipeline]\n";
    for (int i = 0; i < 5000; ++i) unknown += "key" + std::to_string(i) + " = 1\n";
    const auto many = errors_of(unknown);
    ASSERT_EQ(many.size(), 101u);
    EXPECT_NE(many.back().message.find("more errors not shown"), std::string::npos) << many.back().to_string();
}

TEST(PipelineValidation, APipelinePathThatIsNotARegularFileIsRefused) {
    for (const char* path : {"/dev/zero", "/tmp"}) {
        try {
            load_pipeline_config_file(path, test_locations());
            ADD_FAILURE() << path;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
        }
    }
}

TEST(PipelineValidation, PluginPathsAreResolvedAgainstThePipelineFile) {
    const auto directory = test::fresh_directory("plugin-paths");
    std::filesystem::create_directories(directory / "mine");
    std::filesystem::copy_file(test::test_plugin_library("c_plugin", "argmax"), directory / "mine" / "libmine.so");
    const auto file = test::write_file(directory, "p.toml",
                                       "[pipeline]\nplugin_paths = [\"mine\", \"missing\"]\n" + std::string(acceptor_table));
    try {
        load_pipeline_config_file(file);
        FAIL() << "the missing plugin path must be reported";
    } catch (const ValidationError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
        EXPECT_TRUE(has_error(e.diagnostics(), 2, 25, "'plugin_paths': not found: " + (directory / "missing").string()));
    }
    test::write_file(directory, "p.toml", "[pipeline]\nplugin_paths = [\"mine\"]\n" + std::string(acceptor_table));
    const auto config = load_pipeline_config_file(file);
    EXPECT_EQ(config.stage("acceptor")->plugin.library, std::filesystem::canonical(directory / "mine" / "libmine.so"));
}

TEST(PipelineValidation, ShippedPipelinesValidate) {
    if (!CADENZA_HAVE_MODEL_PLUGINS) GTEST_SKIP() << "built without LibTorch (-DCADENZA_WITH_TORCH=OFF): no model plugins";
    for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "pipelines")) {
        if (entry.path().extension() != ".toml") continue;
        EXPECT_NO_THROW(load_pipeline_config_file(entry.path())) << entry.path();
    }
}

}  // namespace
}  // namespace cadenza
