#pragma once
// Where each phone of an utterance ends, as its synthesizer placed it: the
// corpus writes one `.phones` file next to each WAV ("phone<TAB>end seconds"
// per line, on the WAV's own timeline). A TTS target can then be trained with
// the phones marked in its audio stream (`cadenza corpus tts --phone-markers`).
// The phone set is the CMU one that flite and festival's US English voices share.
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

struct PhoneSegment {
    std::string phone;
    double end_seconds = 0.0;
};

// "wav/x/y.wav" -> "wav/x/y.phones".
std::string phone_alignment_path(const std::string& wav_path);

// Writes atomically (a temporary file renamed into place).
void write_phone_alignment(const std::string& path, const std::vector<PhoneSegment>& segments);

// Throws std::runtime_error naming the file and line of a malformed entry
// (a missing tab, a time that is not a number or goes backwards).
std::vector<PhoneSegment> read_phone_alignment(const std::string& path);

// Moves the synthesizer's segment ends onto the corpus WAV's timeline: the
// playback-speed change divides times by `playback_speed`, trimming removes
// `trim_begin_seconds`; ends are clamped to [0, duration_seconds].
std::vector<PhoneSegment> to_corpus_timeline(const std::vector<PhoneSegment>& synthesized, double playback_speed,
                                             double trim_begin_seconds, double duration_seconds);

// Parses festival's `utt.save.segs` output ("#" then "end 100 name" lines).
std::vector<PhoneSegment> parse_festival_segments(const std::string& text, const std::string& where);

}  // namespace cadenza::speech_corpus
