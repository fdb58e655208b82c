// Decodes a synthesis's code chunks on a thread of its own, in the order they
// are given, while the decoding loop goes on with the next tokens. The
// synthesis thread hands over chunks between steps and collects the audio
// that is ready, so that audio callbacks still run on the caller's thread
// (cadenza.h's thread rules) and the chunking, which the codec's output
// depends on, stays a function of the tokens alone, never of timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cadenza {

class AudioDecodeThread {
public:
    // Turns one chunk of codes into the audio it makes final; `last` is true
    // for the stream's final chunk. Runs on the decode thread only.
    using DecodeChunk = std::function<std::vector<float>(const std::vector<int32_t>& codes, bool last)>;

    explicit AudioDecodeThread(DecodeChunk decode);
    // Drops the chunks not yet decoded and joins the thread.
    ~AudioDecodeThread();
    AudioDecodeThread(const AudioDecodeThread&) = delete;
    AudioDecodeThread& operator=(const AudioDecodeThread&) = delete;

    void submit(std::vector<int32_t> codes, bool last);
    // The chunks decoded since the last call, in order, one audio piece per
    // chunk (maybe none). A chunk's decoding error is rethrown here, and
    // nothing after it is decoded.
    std::vector<std::vector<float>> take_ready();
    // Waits until at least one chunk is decoded (or none is left to decode);
    // returns what take_ready would.
    std::vector<std::vector<float>> wait_ready();
    // Waits until every submitted chunk is decoded; returns what take_ready would.
    std::vector<std::vector<float>> finish();
    // Time the thread spent decoding; it overlaps the caller's.
    double decode_seconds() const;

private:
    struct Chunk {
        std::vector<int32_t> codes;
        bool last;
    };
    void run();
    std::vector<std::vector<float>> take_locked();

    DecodeChunk decode_;
    mutable std::mutex mutex_;
    std::condition_variable work_;  // a chunk arrived, or stop
    std::condition_variable idle_;  // a chunk was decoded, or failed
    std::deque<Chunk> pending_;
    std::vector<std::vector<float>> ready_;
    std::exception_ptr error_;
    bool busy_ = false;
    bool stop_ = false;
    double decode_seconds_ = 0.0;
    std::thread thread_;  // last: starts once the members above exist
};

}  // namespace cadenza
