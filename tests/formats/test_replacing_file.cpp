// How every writer replaces its output: regular files atomically, devices,
// FIFOs and symbolic links written through, directories refused.
#include "replacing_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "wav_file.h"

namespace cadenza::file_output {
namespace {

namespace fs = std::filesystem;

fs::path fresh_directory(const std::string& name) {
    const fs::path directory = fs::temp_directory_path() / ("cadenza-replacing-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(directory);
    fs::create_directories(directory);
    return directory;
}

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(ReplacingFile& file, const std::string& text) {
    std::ofstream(file.write_path(), std::ios::binary) << text;
}

TEST(ReplacingFile, ARegularFileIsReplacedOnlyOnCommitAndLeavesNothingBehind) {
    const fs::path directory = fresh_directory("regular");
    const fs::path path = directory / "out.txt";
    std::ofstream(path) << "old";
    {
        ReplacingFile file(path);
        EXPECT_NE(file.write_path(), path);
        write(file, "new");
        EXPECT_EQ(read(path), "old");
    }  // not committed: the old file stays, the temporary goes
    EXPECT_EQ(read(path), "old");
    {
        ReplacingFile file(path);
        write(file, "new");
        file.commit();
    }
    EXPECT_EQ(read(path), "new");
    EXPECT_EQ(std::distance(fs::directory_iterator(directory), fs::directory_iterator()), 1);
    fs::remove_all(directory);
}

TEST(ReplacingFile, DevicesFifosAndLinksAreWrittenThroughNotReplaced) {
    const fs::path directory = fresh_directory("through");
    {
        ReplacingFile file("/dev/null");
        EXPECT_EQ(file.write_path(), fs::path("/dev/null"));
        write(file, "discarded");
        file.commit();
    }
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    const fs::path fifo = directory / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    {
        ReplacingFile file(fifo);
        EXPECT_EQ(file.write_path(), fifo);
        file.commit();
    }
    EXPECT_TRUE(fs::is_fifo(fifo));
    const fs::path target = directory / "target.txt", link = directory / "link.txt";
    std::ofstream(target) << "old";
    fs::create_symlink(target, link);
    {
        ReplacingFile file(link);
        write(file, "new");
        file.commit();
    }
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read(target), "new");
    fs::remove_all(directory);
}

TEST(ReplacingFile, ADirectoryIsAnErrorNamingIt) {
    const fs::path directory = fresh_directory("directory");
    try {
        ReplacingFile file(directory);
        FAIL() << "a directory was accepted";
    } catch (const OutputFileError& error) {
        EXPECT_NE(std::string(error.what()).find(directory.string()), std::string::npos) << error.what();
    }
    fs::remove_all(directory);
}

TEST(ReplacingFile, AudioWrittenToDevNullLeavesItADevice) {
    // `cadenza synth -o /dev/null` as root replaced /dev/null with a file.
    audio::Waveform wave;
    wave.sample_rate = 16000;
    wave.samples.assign(1600, 0.25f);
    audio::write_waveform("/dev/null", wave);
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace cadenza::file_output
