// Plugins built against an older minor of the plugin ABI load and run: the
// frozen 0.3 frontend and acceptor (tests/abi/frozen_0_3_plugins.c, compiled
// with tests/abi/frozen-0.3/) hand over tables smaller than this host's.
#include <gtest/gtest.h>

#include <cstddef>

#include "engine.h"
#include "pipeline_config.h"
#include "plugin_library.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

// Plugin ABI 0.3's tables ended with these members.
constexpr size_t acceptor_table_0_3 = CDZ_SIZE_THROUGH(cdz_acceptor_vtable, accept);
constexpr size_t frontend_table_0_3 = CDZ_SIZE_THROUGH(cdz_frontend_vtable, token_symbol);

const cdz_plugin_descriptor& frozen(const std::string& name) {
    const PluginLibrary& library = PluginLibrary::load(test::test_plugin_library("frozen_abi", "frozen_0_3"));
    for (const cdz_plugin_descriptor* descriptor : library.descriptors())
        if (name == descriptor->name) return *descriptor;
    throw std::runtime_error("no plugin " + name + " in the frozen library");
}

TEST(OlderPlugins, TablesOfAnOlderMinorAreReadOnlyAsFarAsTheyReach) {
    const cdz_plugin_descriptor& greedy = frozen("frozen.greedy");
    EXPECT_EQ(greedy.abi_minor, 3u);
    const auto& acceptor = *static_cast<const cdz_acceptor_vtable*>(greedy.vtable);
    ASSERT_EQ(acceptor.struct_size, acceptor_table_0_3);
    static_assert(acceptor_table_0_3 < sizeof(cdz_acceptor_vtable), "this host's acceptor table grew after 0.3");
    EXPECT_NE(acceptor.accept, nullptr);
    // What 0.4 appended reads as its default: no sessions.
    EXPECT_EQ(acceptor.session_create, nullptr);
    EXPECT_EQ(acceptor.session_commit, nullptr);
    const auto& frontend = *static_cast<const cdz_frontend_vtable*>(frozen("frozen.letters").vtable);
    EXPECT_EQ(frontend.struct_size, frontend_table_0_3);
    EXPECT_NE(frontend.encode, nullptr);
}

std::string pipeline(const std::string& acceptor) {
    return "[pipeline]\nseed = 5\nmax_audio_seconds = 2.0\n"
           "[sampling]\ntemperature = 0.0\n"
           "[frontend]\nplugin = \"frozen.letters\"\n"
           "[codec]\nplugin = \"test.tone_codec\"\n"
           "[backbone]\nplugin = \"test.markov_backbone\"\nend_after = 40\n" +
           acceptor;
}

std::vector<float> synthesize(const std::string& text) {
    Engine engine(load_pipeline_config_string(text, "frozen.toml", test::source_dir(),
                                              {{test::test_plugin_dir("frozen_abi"), "frozen", true},
                                               {test::test_plugin_dir("doubles"), "test", true}}));
    SynthesisRequest request;
    request.text = "Older plugins, same audio.";
    return engine.synthesize(request);
}

TEST(OlderPlugins, AFrontendAndAnAcceptorBuiltAgainstPluginAbi03Run) {
    // Greedy acceptance is plain decoding at temperature 0: the same audio.
    const std::vector<float> with_frozen_acceptor = synthesize(pipeline("[acceptor]\nplugin = \"frozen.greedy\"\n"));
    EXPECT_EQ(with_frozen_acceptor.size(), 40u * 320u);  // end_after frames of 20 ms at 16 kHz
    EXPECT_EQ(with_frozen_acceptor, synthesize(pipeline("")));
}

}  // namespace
}  // namespace cadenza
