// The sentences of `cadenza bench --suite speech`: utterances of one split of
// a speech corpus, each with the voice prompt `cadenza corpus tts` chose for it
// (SPLIT_prompts.tsv: id, prompt_id, prompt_begin_frame, prompt_frames).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::cli {

struct SpeechSentenceSource {
    std::string manifest;      // the corpus manifest.tsv
    std::string prompts_file;  // SPLIT_prompts.tsv of `cadenza corpus tts`
    std::string split = "test";
    size_t limit = 0;          // the first `limit` in prompts-file order; 0: all
};

struct SpeechSentence {
    std::string id;
    std::string text;        // the manifest's text: what WER is measured against
    std::string voice;
    std::string audio_path;  // the original recording
    std::string prompt_id;
    std::string prompt_path;
    int64_t prompt_begin_frame = 0;
    int64_t prompt_frames = 0;
    std::string where;          // "prompts.tsv:LINE", for messages
    std::vector<float> voice_prompt;  // filled by cut_voice_prompts
};

struct SpeechSentenceSet {
    std::vector<SpeechSentence> sentences;
    size_t skipped_without_prompt = 0;  // prompt_frames == 0
    size_t other_splits = 0;            // prompts-file rows of utterances in another split
    int prompt_sample_rate = 0;         // of every voice_prompt, once cut
};

// Reads the manifest and the prompts file and checks that every audio file
// exists. Throws cadenza::Error naming the file and line of any problem: a
// malformed row, an id or prompt id not in the manifest, a missing recording.
SpeechSentenceSet read_speech_sentences(const SpeechSentenceSource& source);

// Cuts each voice prompt from its utterance's audio: frames
// [begin, begin + frames) of a codec at `frame_rate`, i.e. samples
// [begin * hop, (begin + frames) * hop) with hop = sample_rate / frame_rate,
// after resampling the recording to `sample_rate` when it differs.
void cut_voice_prompts(SpeechSentenceSet& set, int sample_rate, double frame_rate);

}  // namespace cadenza::cli
