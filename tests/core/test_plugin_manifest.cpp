// A library's manifest section: the host lists it and validates against it
// without loading it, loads it only to create an instance, and refuses a
// manifest that disagrees with what the library returns.
#include <gtest/gtest.h>

#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "error.h"
#include "plugin_catalog.h"
#include "plugin_library.h"
#include "plugin_manifest.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

bool is_mapped(const std::filesystem::path& library) {
    struct Search {
        std::string wanted;
        bool found = false;
    } search{std::filesystem::canonical(library).string()};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (info->dlpi_name && s->wanted == info->dlpi_name) s->found = true;
            return 0;
        },
        &search);
    return search.found;
}

// A copy of the C test acceptor under `file_name` in a fresh directory, its
// manifest section holding `manifest` (objcopy, as cadenza_add_plugin does).
std::filesystem::path library_with_manifest(const std::string& directory_name, const std::string& manifest) {
    const auto directory = test::fresh_directory(directory_name);
    const auto copy = directory / "libexample_argmax_acceptor.so";
    std::filesystem::copy_file(test::test_plugin_library("c_plugin", "argmax"), copy);
    const auto text = test::write_file(directory, "manifest.toml", manifest);
    const std::string command = std::string(CADENZA_OBJCOPY) + " --add-section .cadenza_plugins=" + text.string() +
                                " --set-section-flags .cadenza_plugins=readonly " + copy.string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return copy;
}

std::string argmax_manifest() {
    return write_plugin_manifest(PluginLibrary::load(test::test_plugin_library("c_plugin", "argmax")).descriptors());
}

TEST(PluginManifest, ALibraryWithAManifestIsValidatedAgainstWithoutBeingLoaded) {
    const auto library = library_with_manifest("manifest_described", argmax_manifest());
    const PluginCatalog catalog = PluginCatalog::scan({{library.parent_path(), "test", true}}, {"example.argmax_acceptor"});
    const CatalogEntry& entry = catalog.find("example.argmax_acceptor");
    EXPECT_EQ(entry.descriptor->kind, CDZ_PLUGIN_KIND_ACCEPTOR);
    EXPECT_EQ(entry.descriptor->param_count, 3u);
    EXPECT_EQ(entry.descriptor->vtable, nullptr);
    EXPECT_FALSE(is_mapped(library));

    const cdz_plugin_descriptor& loaded = entry.loaded();  // creating an instance needs the function table
    EXPECT_NE(loaded.vtable, nullptr);
    EXPECT_STREQ(loaded.name, "example.argmax_acceptor");
    EXPECT_TRUE(is_mapped(library));
}

TEST(PluginManifest, AManifestThatDisagreesWithTheLibraryIsRefusedWhenItLoads) {
    std::string manifest = argmax_manifest();
    const std::string version = "version = \"";
    const size_t at = manifest.find(version);
    ASSERT_NE(at, std::string::npos);
    manifest.insert(at + version.size(), "9");
    const auto library = library_with_manifest("manifest_disagrees", manifest);
    const PluginCatalog catalog = PluginCatalog::scan({{library.parent_path(), "test", true}});
    const CatalogEntry& entry = catalog.find("example.argmax_acceptor");
    try {
        entry.loaded();
        FAIL() << "a manifest that disagrees must not pass";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_ABI_MISMATCH);
        const std::string message = e.what();
        EXPECT_NE(message.find(library.string()), std::string::npos) << message;
        EXPECT_NE(message.find("version = \"9"), std::string::npos) << message;
        EXPECT_NE(message.find("rebuild"), std::string::npos) << message;
    }
}

TEST(PluginManifest, AMalformedManifestIsAProblemNamingTheLibraryAndLine) {
    const auto library = library_with_manifest("manifest_malformed", "[[plugin]]\nname = \"example.argmax_acceptor\"\n"
                                                                     "kind = \"acceptor\"\nversion = 3\n");
    const PluginCatalog catalog = PluginCatalog::scan({{library.parent_path(), "test", true}});
    ASSERT_EQ(catalog.problems().size(), 1u);
    const std::string problem = catalog.problems()[0];
    EXPECT_NE(problem.find(library.string()), std::string::npos) << problem;
    EXPECT_NE(problem.find("line 4"), std::string::npos) << problem;
    EXPECT_NE(problem.find("'version' is not a string"), std::string::npos) << problem;
}

TEST(PluginManifest, AManifestForANewerMinorIsRefusedLikeTheLibrary) {
    std::string manifest = argmax_manifest();
    const std::string abi = "abi = [" + std::to_string(CDZ_PLUGIN_ABI_MAJOR) + ", ";
    const size_t at = manifest.find(abi);
    ASSERT_NE(at, std::string::npos);
    manifest.replace(at, manifest.find(']', at) - at, abi + std::to_string(CDZ_PLUGIN_ABI_MINOR + 1));
    const auto library = library_with_manifest("manifest_newer", manifest);
    const PluginCatalog catalog = PluginCatalog::scan({{library.parent_path(), "test", true}});
    ASSERT_EQ(catalog.problems().size(), 1u);
    EXPECT_NE(catalog.problems()[0].find("was built for plugin ABI"), std::string::npos) << catalog.problems()[0];
}

TEST(PluginManifest, WritingWhatWasReadGivesTheSameText) {
    const std::string text = argmax_manifest();
    const PluginManifest manifest(text, "argmax");
    EXPECT_EQ(write_plugin_manifest(manifest.descriptors()), text);
    const PluginLibrary& frontend = PluginLibrary::load(test::test_plugin_library("frozen_abi", "frozen_1_0"));
    const std::string frozen = write_plugin_manifest(frontend.descriptors());
    EXPECT_EQ(write_plugin_manifest(PluginManifest(frozen, "frozen").descriptors()), frozen);
}

}  // namespace
}  // namespace cadenza
