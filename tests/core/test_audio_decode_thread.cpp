// The thread that decodes streamed audio beside the decoding loop: chunks in
// order, an error stops it and reaches the caller, stopping drops the rest.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "audio_decode_thread.h"

namespace cadenza {
namespace {

// Each code becomes one sample of its value.
std::vector<float> samples_of(const std::vector<int32_t>& codes) { return std::vector<float>(codes.begin(), codes.end()); }

TEST(AudioDecodeThread, ChunksAreDecodedInTheirOrderAndFinishWaitsForTheLast) {
    std::atomic<int> lasts{0};
    AudioDecodeThread thread([&](const std::vector<int32_t>& codes, bool last) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        lasts += last ? 1 : 0;
        return samples_of(codes);
    });
    std::vector<float> audio;
    size_t pieces = 0;
    auto collect = [&](const std::vector<std::vector<float>>& ready) {
        for (const auto& piece : ready) {
            EXPECT_EQ(piece.size(), 3u);  // one piece per chunk, never merged
            audio.insert(audio.end(), piece.begin(), piece.end());
            ++pieces;
        }
    };
    for (int32_t chunk = 0; chunk < 40; ++chunk) {
        thread.submit({3 * chunk, 3 * chunk + 1, 3 * chunk + 2}, chunk == 39);
        collect(thread.take_ready());
    }
    collect(thread.finish());
    std::vector<float> expected(120);
    std::iota(expected.begin(), expected.end(), 0.0f);
    EXPECT_EQ(audio, expected);
    EXPECT_EQ(pieces, 40u);
    EXPECT_EQ(lasts, 1);
    EXPECT_TRUE(thread.take_ready().empty());
    EXPECT_GT(thread.decode_seconds(), 0.0);
}

TEST(AudioDecodeThread, AnErrorReachesTheCallerAndNothingAfterItIsDecoded) {
    std::atomic<int> calls{0};
    AudioDecodeThread thread([&](const std::vector<int32_t>& codes, bool) {
        ++calls;
        if (codes.front() == 2) throw std::runtime_error("codec: chunk 2 is broken");
        return samples_of(codes);
    });
    for (int32_t chunk = 0; chunk < 6; ++chunk) thread.submit({chunk}, chunk == 5);
    try {
        thread.finish();
        FAIL() << "finish returned after a chunk failed";
    } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "codec: chunk 2 is broken");
    }
    EXPECT_EQ(calls, 3);
    EXPECT_THROW(thread.take_ready(), std::runtime_error);
}

TEST(AudioDecodeThread, StoppingWaitsForTheChunkBeingDecodedAndDropsTheRest) {
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::promise<void> first_started;
    std::atomic<int> calls{0};
    std::thread releaser;
    {
        AudioDecodeThread thread([&](const std::vector<int32_t>& codes, bool) {
            if (++calls == 1) {
                first_started.set_value();
                released.wait();
            }
            return samples_of(codes);
        });
        for (int32_t chunk = 0; chunk < 5; ++chunk) thread.submit({chunk}, chunk == 4);
        first_started.get_future().wait();
        // Long enough for the destructor below to have dropped the queue.
        releaser = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            release.set_value();
        });
    }  // the destructor joins only after the first chunk returns
    releaser.join();
    EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace cadenza
