// Plugins built against plugin ABI 1.0 load and run with this host: the
// frozen 1.0 frontend and acceptor (tests/abi/frozen_1_0_plugins.c, compiled
// with tests/abi/frozen-1.0/). Every later 1.x minor must keep passing this.
#include <gtest/gtest.h>

#include <cstddef>

#include "engine.h"
#include "pipeline_config.h"
#include "plugin_library.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

// Plugin ABI 1.0's tables ended with these members (append-only: the
// expressions stay valid in every later minor).
constexpr size_t frontend_table_1_0 = CDZ_SIZE_THROUGH(cdz_frontend_vtable, token_symbol);
constexpr size_t acceptor_table_1_0 = CDZ_SIZE_THROUGH(cdz_acceptor_vtable, session_commit);

const cdz_plugin_descriptor& frozen(const std::string& name) {
    const PluginLibrary& library = PluginLibrary::load(test::test_plugin_library("frozen_abi", "frozen_1_0"));
    for (const cdz_plugin_descriptor* descriptor : library.descriptors())
        if (name == descriptor->name) return *descriptor;
    throw std::runtime_error("no plugin " + name + " in the frozen library");
}

// The host's copy of a table: the plugin's struct_size, and zero (each
// appended field's default) in every byte of this host's larger table the
// plugin's does not reach.
void expect_read_as_far_as_it_reaches(const cdz_plugin_descriptor& descriptor, size_t table_1_0, size_t host_table) {
    EXPECT_EQ(descriptor.abi_major, 1u);
    EXPECT_EQ(descriptor.abi_minor, 0u);
    const auto* table = static_cast<const cdz_instance_vtable*>(descriptor.vtable);
    ASSERT_EQ(table->struct_size, table_1_0) << descriptor.name;
    ASSERT_LE(table_1_0, host_table);
    const auto* bytes = static_cast<const unsigned char*>(descriptor.vtable);
    for (size_t i = table_1_0; i < host_table; ++i) EXPECT_EQ(bytes[i], 0) << descriptor.name << " byte " << i;
}

TEST(FrozenAbi10, TheirTablesAreReadOnlyAsFarAsTheyReach) {
    const cdz_plugin_descriptor& letters = frozen("frozen.letters");
    expect_read_as_far_as_it_reaches(letters, frontend_table_1_0, sizeof(cdz_frontend_vtable));
    EXPECT_NE(static_cast<const cdz_frontend_vtable*>(letters.vtable)->encode, nullptr);
    const cdz_plugin_descriptor& greedy = frozen("frozen.greedy");
    expect_read_as_far_as_it_reaches(greedy, acceptor_table_1_0, sizeof(cdz_acceptor_vtable));
    EXPECT_NE(static_cast<const cdz_acceptor_vtable*>(greedy.vtable)->session_commit, nullptr);
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
    request.text = "Frozen plugins, same audio.";
    return engine.synthesize(request);
}

TEST(FrozenAbi10, AFrontendAndAnAcceptorWithSessionsBuiltAgainstPluginAbi10Run) {
    // Greedy acceptance is plain decoding at temperature 0: the same audio.
    // frozen.greedy's session fails the step if the host's sequence is not
    // the prompt and the tokens it committed.
    const std::vector<float> with_frozen_acceptor = synthesize(pipeline("[acceptor]\nplugin = \"frozen.greedy\"\n"));
    EXPECT_EQ(with_frozen_acceptor.size(), 40u * 320u);  // end_after frames of 20 ms at 16 kHz
    EXPECT_EQ(with_frozen_acceptor, synthesize(pipeline("")));
}

}  // namespace
}  // namespace cadenza
