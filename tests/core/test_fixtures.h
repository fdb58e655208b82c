// Paths and temporary files shared by the core tests.
#pragma once

#include <filesystem>
#include <string>

namespace cadenza::test {

std::filesystem::path source_dir();
// A directory of test plugin libraries: "c_plugin", "broken", "duplicate", "doubles".
std::filesystem::path test_plugin_dir(const std::string& name);
// The single test library in `directory` whose file name contains `part`.
std::filesystem::path test_plugin_library(const std::string& directory, const std::string& part);
// A fresh, empty directory under the system temporary directory.
std::filesystem::path fresh_directory(const std::string& name);
// Writes `text` into `directory/name` and returns the path.
std::filesystem::path write_file(const std::filesystem::path& directory, const std::string& name,
                                 const std::string& text);

}  // namespace cadenza::test
