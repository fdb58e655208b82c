#include "test_fixtures.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace cadenza::test {

std::filesystem::path source_dir() { return CADENZA_SOURCE_DIR; }

std::filesystem::path test_plugin_dir(const std::string& name) { return std::filesystem::path(TEST_PLUGIN_DIR) / name; }

std::filesystem::path test_plugin_library(const std::string& directory, const std::string& part) {
    for (const auto& entry : std::filesystem::directory_iterator(test_plugin_dir(directory)))
        if (entry.path().filename().string().find(part) != std::string::npos) return entry.path();
    throw std::runtime_error("no test plugin matching " + part + " in " + directory);
}

std::filesystem::path fresh_directory(const std::string& name) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("cadenza-test-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    return path;
}

std::filesystem::path write_file(const std::filesystem::path& directory, const std::string& name,
                                 const std::string& text) {
    const auto path = directory / name;
    std::ofstream(path) << text;
    return path;
}

}  // namespace cadenza::test
