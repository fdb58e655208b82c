// A plugin library's manifest: the descriptors its entry point returns,
// minus the function tables, as TOML text in the library's ELF section
// `.cadenza_plugins`. The build writes it after linking (cadenza_add_plugin,
// `cadenza plugins manifest`), so that the host can list a library's plugins
// and validate a pipeline against their schemas without loading it (and
// whatever it links, e.g. LibTorch). A library without the section is loaded
// to be described; a manifest that disagrees with what the loaded library
// returns is an error (docs/abi.md).
#pragma once

#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza {

inline constexpr const char* plugin_manifest_section = ".cadenza_plugins";

// The manifest of these descriptors.
std::string write_plugin_manifest(const std::vector<const cdz_plugin_descriptor*>& descriptors);

// Descriptors read back from a manifest: every field but the function table
// (vtable is NULL). They own their strings.
class PluginManifest {
public:
    // Parses `text`; throws cadenza::Error naming `library` when it is
    // malformed or its descriptors fail the host's checks.
    PluginManifest(const std::string& text, const std::string& library);
    PluginManifest(const PluginManifest&) = delete;
    PluginManifest& operator=(const PluginManifest&) = delete;

    const std::vector<const cdz_plugin_descriptor*>& descriptors() const { return pointers_; }

private:
    struct Described {
        cdz_plugin_descriptor descriptor{};
        std::vector<cdz_param_spec> params;
        std::deque<std::vector<const char*>> choices;  // each NULL-terminated; elements never move
    };
    const char* keep(const std::string& text);

    std::deque<std::string> strings_;
    std::deque<Described> described_;
    std::vector<const cdz_plugin_descriptor*> pointers_;
};

// The manifest in `library`'s ELF section, or nothing when it has none.
// Throws cadenza::Error naming the file when it is malformed.
std::unique_ptr<PluginManifest> read_plugin_manifest(const std::filesystem::path& library);

// Why `described` (from a manifest) does not describe `loaded` (from the
// entry point), or nothing when it does.
std::optional<std::string> manifest_disagreement(const cdz_plugin_descriptor& described,
                                                 const cdz_plugin_descriptor& loaded);

}  // namespace cadenza
