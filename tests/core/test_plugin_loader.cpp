// The loader: a good C plugin loads; every kind of bad library is a clear
// error naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "descriptor_check.h"
#include "error.h"
#include "install_layout.h"
#include "plugin_catalog.h"
#include "plugin_library.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

using test::test_plugin_dir;
using test::test_plugin_library;

// Expects loading `path` to fail with `code`, the file's path and `fragment` in the message.
void expect_load_error(const std::filesystem::path& path, cdz_status_code code, const std::string& fragment) {
    try {
        PluginLibrary::load(path);
        FAIL() << "loading " << path << " should fail";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(PluginLoader, LoadsThePlainCPluginAndItsSchema) {
    const auto& library = PluginLibrary::load(test_plugin_library("c_plugin", "argmax"));
    ASSERT_EQ(library.descriptors().size(), 1u);
    const cdz_plugin_descriptor& d = *library.descriptors()[0];
    EXPECT_STREQ(d.name, "example.argmax_acceptor");
    EXPECT_EQ(d.kind, CDZ_PLUGIN_KIND_ACCEPTOR);
    const auto specs = descriptor_parameter_specs(d);
    ASSERT_EQ(specs.size(), 3u);
    EXPECT_STREQ(specs[0].name, "min_probability");
    EXPECT_STREQ(specs[1].name, "mode");
    EXPECT_STREQ(specs[1].choices[1], "sample");
}

TEST(PluginLoader, LoadsEachLibraryOncePerProcess) {
    const auto path = test_plugin_library("c_plugin", "argmax");
    EXPECT_EQ(&PluginLibrary::load(path), &PluginLibrary::load(path));
}

TEST(PluginLoader, MissingFileIsAnErrorNamingIt) {
    expect_load_error(test_plugin_dir("broken") / "libdoes_not_exist.so", CDZ_STATUS_NOT_FOUND, "not found");
}

TEST(PluginLoader, FileThatIsNotALibraryIsAnErrorNamingIt) {
    const auto directory = test::fresh_directory("not-a-library");
    const auto path = test::write_file(directory, "libfake.so", "this is text, not ELF");
    expect_load_error(path, CDZ_STATUS_IO_ERROR, "cannot load");
}

TEST(PluginLoader, MissingEntrySymbolIsAnErrorNamingTheFile) {
    expect_load_error(test_plugin_library("broken", "no_entry"), CDZ_STATUS_NOT_FOUND, "cdz_plugin_entry");
}

// Finding 8 of the reliability issue: dlopen ran a foreign library's
// constructor (one that ends the process took this test program with it) and
// a data symbol called as the entry point crashed.
TEST(PluginLoader, ALibraryWithoutTheEntryPointIsRefusedWithoutRunningItsCode) {
    expect_load_error(test_plugin_library("broken", "exiting_constructor"), CDZ_STATUS_NOT_FOUND, "not loaded");
}

TEST(PluginLoader, AnEntryPointThatIsDataIsRefusedWithoutCallingIt) {
    expect_load_error(test_plugin_library("broken", "entry_is_data"), CDZ_STATUS_INVALID_ARGUMENT,
                      "is data, not a function");
}

TEST(PluginLoader, AnElfFileForAnotherClassOrMachineIsRefusedBeforeLoading) {
    const auto directory = test::fresh_directory("other-elf");
    std::string header(64, '\0');
    header.replace(0, 4, "\x7f" "ELF");
    header[4] = 1;  // ELFCLASS32
    header[5] = 1;
    expect_load_error(test::write_file(directory, "lib32.so", header), CDZ_STATUS_IO_ERROR, "not a 64-bit ELF");
    expect_load_error(test::write_file(directory, "libshort.so", "\x7f" "ELF"), CDZ_STATUS_IO_ERROR, "not a 64-bit ELF");
}

TEST(PluginLoader, AnotherMajorVersionIsRefused) {
    const std::string host = " but this host speaks " + std::to_string(CDZ_PLUGIN_ABI_MAJOR) + ".";
    expect_load_error(test_plugin_library("broken", "future_major"), CDZ_STATUS_ABI_MISMATCH,
                      "was built for plugin ABI " + std::to_string(CDZ_PLUGIN_ABI_MAJOR + 1) + "." +
                          std::to_string(CDZ_PLUGIN_ABI_MINOR) + host);
    // 0.x plugins, built before the 1.0 contract, are rebuilt, not loaded.
    expect_load_error(test_plugin_library("broken", "past_major"), CDZ_STATUS_ABI_MISMATCH,
                      "was built for plugin ABI " + std::to_string(CDZ_PLUGIN_ABI_MAJOR - 1) + "." +
                          std::to_string(CDZ_PLUGIN_ABI_MINOR) + host);
}

TEST(PluginLoader, ANewerMinorVersionIsRefused) {
    expect_load_error(test_plugin_library("broken", "newer_minor"), CDZ_STATUS_ABI_MISMATCH,
                      "plugin ABI " + std::to_string(CDZ_PLUGIN_ABI_MAJOR) + "." +
                          std::to_string(CDZ_PLUGIN_ABI_MINOR + 1));
}

TEST(PluginLoader, AFunctionTableShorterThanTheFirstVersionIsRefused) {
    expect_load_error(test_plugin_library("broken", "short_table"), CDZ_STATUS_ABI_MISMATCH,
                      "acceptor table smaller than plugin ABI 1.0's");
}

TEST(PluginLoader, TwoPluginsWithOneNameInALibraryAreRefused) {
    expect_load_error(test_plugin_library("broken", "duplicate_name"), CDZ_STATUS_INVALID_CONFIG,
                      "two plugins with one name 'test.broken'");
}

TEST(PluginLoader, AnEntryPointErrorIsPassedOn) {
    expect_load_error(test_plugin_library("broken", "entry_fails"), CDZ_STATUS_UNSUPPORTED, "refuses to load");
}

TEST(PluginLoader, ADefaultThatDoesNotFitItsTypeIsRefused) {
    expect_load_error(test_plugin_library("broken", "bad_default"), CDZ_STATUS_INVALID_ARGUMENT, "'beta'");
}

TEST(PluginCatalog, TwoPluginsWithOneNameInOneDirectoryAreAnErrorNamingBothFiles) {
    const auto directory = test::fresh_directory("duplicates");
    const auto first = test_plugin_library("c_plugin", "argmax");
    const auto second = test_plugin_library("duplicate", "duplicate_of_argmax");
    std::filesystem::copy_file(first, directory / first.filename());
    std::filesystem::copy_file(second, directory / second.filename());
    const auto catalog = PluginCatalog::scan({{directory, "test", true}});
    try {
        catalog.find("example.argmax_acceptor");
        FAIL() << "an ambiguous name must not resolve";
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find((directory / first.filename()).string()), std::string::npos) << message;
        EXPECT_NE(message.find((directory / second.filename()).string()), std::string::npos) << message;
    }
}

TEST(PluginCatalog, AnEarlierLocationShadowsALaterOne) {
    const auto catalog = PluginCatalog::scan({{test_plugin_dir("c_plugin"), "first", true},
                                              {test_plugin_dir("duplicate"), "second", true}});
    const CatalogEntry& entry = catalog.find("example.argmax_acceptor");
    EXPECT_EQ(entry.origin, "first");
    int shadowed = 0;
    for (const auto& candidate : catalog.entries()) shadowed += candidate.shadowed;
    EXPECT_EQ(shadowed, 1);
    EXPECT_TRUE(catalog.problems().empty());
}

TEST(PluginCatalog, BrokenLibrariesAreReportedWithoutHidingGoodOnes) {
    const auto catalog = PluginCatalog::scan({{test_plugin_dir("broken"), "broken", true},
                                              {test_plugin_dir("c_plugin"), "good", true}});
    // future_major, past_major, newer_minor, duplicate_name, entry_fails,
    // bad_default, short_table and entry_is_data; no_entry and
    // exiting_constructor are not plugins and are not loaded at all.
    EXPECT_EQ(catalog.problems().size(), 8u);
    EXPECT_EQ(catalog.skipped().size(), 2u);
    EXPECT_STREQ(catalog.find("example.argmax_acceptor").descriptor->name, "example.argmax_acceptor");
}

TEST(PluginCatalog, APluginNotFoundNamesTheLibrariesThatWereNotLoaded) {
    const auto catalog = PluginCatalog::scan({{test_plugin_dir("broken"), "broken", true}});
    try {
        catalog.find("example.argmax_acceptor");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("2 libraries"), std::string::npos) << e.what();
    }
}

TEST(PluginCatalog, WithTheNamesItNeedsTheSearchStopsWhereAllAreFound) {
    const std::vector<PluginLocation> path{{test_plugin_dir("c_plugin"), "first", true},
                                           {test_plugin_dir("broken"), "second", true}};
    const auto needed = PluginCatalog::scan(path, {"example.argmax_acceptor"});
    EXPECT_TRUE(needed.problems().empty());  // the broken libraries after it were never opened
    EXPECT_EQ(needed.find("example.argmax_acceptor").origin, "first");
    const auto missing = PluginCatalog::scan(path, {"example.argmax_acceptor", "no.such_plugin"});
    EXPECT_EQ(missing.problems().size(), 8u);  // not all found: every place is searched
}

TEST(PluginCatalog, ALibraryNamedAfterANeededPluginIsOpenedAlone) {
    const auto directory = test::fresh_directory("named_after_plugin");
    for (const auto& item : std::filesystem::directory_iterator(test_plugin_dir("broken")))
        std::filesystem::copy_file(item.path(), directory / item.path().filename());
    std::filesystem::copy_file(test_plugin_library("c_plugin", "argmax"), directory / "libexample_argmax_acceptor.so");
    const auto named = PluginCatalog::scan({{directory, "test", true}}, {"example.argmax_acceptor"});
    EXPECT_TRUE(named.problems().empty());  // the broken libraries beside it stayed closed
    EXPECT_EQ(named.entries().size(), 1u);
    EXPECT_EQ(named.find("example.argmax_acceptor").library.filename(), "libexample_argmax_acceptor.so");
    const auto unnamed = PluginCatalog::scan({{directory, "test", true}}, {"example.argmax_acceptor", "no.such_plugin"});
    EXPECT_EQ(unnamed.problems().size(), 8u);  // a name no file names: the whole place is opened
}

TEST(PluginCatalog, APipelinesNamesOpenOnlyTheirOwnLibrariesAmongCadenzasPlugins) {
    const auto catalog = PluginCatalog::scan(plugin_search_path(), {"frontend.chars", "acceptor.exact"});
    std::vector<std::string> loaded;
    for (const auto& entry : catalog.entries()) loaded.push_back(entry.descriptor->name);
    std::sort(loaded.begin(), loaded.end());
    EXPECT_EQ(loaded, (std::vector<std::string>{"acceptor.exact", "frontend.chars"}));
}

TEST(PluginCatalog, AnUnknownNameSuggestsTheClosestAndListsThePath) {
    const auto catalog = PluginCatalog::scan({{test_plugin_dir("c_plugin"), "good", true}});
    try {
        catalog.find("example.argmax_aceptor");
        FAIL();
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_EQ(e.code(), CDZ_STATUS_NOT_FOUND);
        EXPECT_NE(message.find("did you mean 'example.argmax_acceptor'"), std::string::npos) << message;
        EXPECT_NE(message.find(test_plugin_dir("c_plugin").string()), std::string::npos) << message;
    }
}

TEST(PluginCatalog, AMissingExplicitLocationIsAProblem) {
    const auto catalog = PluginCatalog::scan({{"/nonexistent/plugins", "test", true}});
    ASSERT_EQ(catalog.problems().size(), 1u);
    EXPECT_NE(catalog.problems()[0].find("/nonexistent/plugins"), std::string::npos);
}

TEST(PluginCatalog, SearchPathOrderIsCallerEnvironmentOwnPlugins) {
    ::setenv("CADENZA_PLUGIN_PATH", "/from/env/a:/from/env/b", 1);
    const auto path = plugin_search_path({{"/from/caller", "caller", true}});
    ::unsetenv("CADENZA_PLUGIN_PATH");
    ASSERT_EQ(path.size(), 4u);
    EXPECT_EQ(path[0].path, "/from/caller");
    EXPECT_EQ(path[1].path, "/from/env/a");
    EXPECT_EQ(path[2].path, "/from/env/b");
    EXPECT_EQ(path[3].origin, "cadenza's own plugins");
}

TEST(PluginCatalog, OwnPluginsAreFoundRelativeToTheProgramNotABuildPath) {
    // This test program is linked with the core and sits in bin/ beside the
    // CLI: its own plugins are ../lib/cadenza/plugins from there.
    const auto own = own_plugin_directory();
    const auto program = std::filesystem::read_symlink("/proc/self/exe");
    EXPECT_EQ(own, (program.parent_path() / ".." / "lib" / "cadenza" / "plugins").lexically_normal());
    EXPECT_TRUE(std::filesystem::is_directory(own)) << own;
}

TEST(InstallLayout, AShippedPipelineIsFoundByItsBareName) {
    const auto shipped = own_pipeline_directory();
    const auto program = std::filesystem::read_symlink("/proc/self/exe");
    EXPECT_EQ(shipped, (program.parent_path() / ".." / "share" / "cadenza" / "pipelines").lexically_normal());
    EXPECT_EQ(resolve_pipeline_path("default"), shipped / "default.toml");
    EXPECT_EQ(resolve_pipeline_path("default.toml"), shipped / "default.toml");
    EXPECT_TRUE(std::filesystem::is_regular_file(resolve_pipeline_path("default")));
    // Paths with a directory, and names of no shipped pipeline, stay as they are.
    EXPECT_EQ(resolve_pipeline_path("some/dir/default"), "some/dir/default");
    EXPECT_EQ(resolve_pipeline_path("no-such-pipeline"), "no-such-pipeline");
}

}  // namespace
}  // namespace cadenza
