// Phone alignments: the .phones file, the corpus timeline, festival's segment files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "phone_alignment.h"

namespace cadenza::speech_corpus {
namespace {

namespace fs = std::filesystem;

fs::path temporary(const std::string& name) {
    return fs::temp_directory_path() / ("cadenza-phones-" + std::to_string(::getpid()) + "-" + name);
}

TEST(PhoneAlignment, WritesAndReadsBackNextToTheWav) {
    EXPECT_EQ(phone_alignment_path("wav/flite.slt/u1.wav"), "wav/flite.slt/u1.phones");
    const std::string path = temporary("round-trip.phones").string();
    write_phone_alignment(path, {{"pau", 0.1}, {"hh", 0.15}, {"ow", 0.31234}});
    const auto read = read_phone_alignment(path);
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(read[1].phone, "hh");
    EXPECT_NEAR(read[2].end_seconds, 0.3123, 1e-9);  // four decimals
    EXPECT_FALSE(fs::exists(path + ".partial"));
    fs::remove(path);
}

TEST(PhoneAlignment, AMalformedLineIsAnErrorNamingFileAndLine) {
    const std::string path = temporary("bad.phones").string();
    std::ofstream(path) << "pau\t0.1\nhh 0.2\n";
    try {
        read_phone_alignment(path);
        FAIL() << "a line without a tab must be refused";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(path + ":2:"), std::string::npos) << e.what();
    }
    std::ofstream(path) << "pau\t0.1\nhh\t0.05\n";
    EXPECT_THROW(read_phone_alignment(path), std::runtime_error);  // backwards
    std::ofstream(path) << "pau\tsoon\n";
    EXPECT_THROW(read_phone_alignment(path), std::runtime_error);
    fs::remove(path);
    EXPECT_THROW(read_phone_alignment(path), std::runtime_error);
}

TEST(PhoneAlignment, MovesSynthesizerTimesOntoTheTrimmedWav) {
    // Played 1.25x faster, then 0.1 s trimmed off the front of a 0.7 s file.
    const auto moved = to_corpus_timeline({{"pau", 0.1}, {"a", 0.5}, {"pau", 1.0}}, 1.25, 0.1, 0.7);
    EXPECT_NEAR(moved[0].end_seconds, 0.0, 1e-12);  // 0.08 - 0.1, clamped
    EXPECT_NEAR(moved[1].end_seconds, 0.3, 1e-12);
    EXPECT_NEAR(moved[2].end_seconds, 0.7, 1e-12);
}

TEST(PhoneAlignment, ParsesFestivalsSegmentFiles) {
    const auto segments = parse_festival_segments("#\n0.1650 100 pau\n0.3100 100 s\n", "u.segs");
    ASSERT_EQ(segments.size(), 2u);
    EXPECT_EQ(segments[1].phone, "s");
    EXPECT_NEAR(segments[1].end_seconds, 0.31, 1e-12);
    EXPECT_THROW(parse_festival_segments("0.1 100 pau\n", "u.segs"), std::runtime_error);
    EXPECT_THROW(parse_festival_segments("#\n0.1 pau\n", "u.segs"), std::runtime_error);
}

}  // namespace
}  // namespace cadenza::speech_corpus
