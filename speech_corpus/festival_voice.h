#pragma once
// festival's voices, through `festival -b` subprocesses. One process speaks a
// whole batch (festival takes a few tenths of a second to start): it runs a
// Scheme script that writes one WAV file per request.
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

// Which of `candidates` (festival's voice names, "kal_diphone") festival has
// installed; empty when festival is not on PATH.
std::vector<std::string> detect_festival_voices(const std::vector<std::string>& candidates);

struct FestivalRequest {
    std::string text;               // plain words and , . ? ! (no quotes needed)
    double duration_stretch = 1.0;  // > 1 is slower
    std::string output_path;        // a WAV file at the voice's own sample rate
    std::string segments_path;      // festival's segment file (utt.save.segs); empty: none
};

// Speaks every request with `voice`, using `work_directory` for the script
// and festival's messages. Returns one string per request: empty when its
// file was written, else why not. A request that makes festival crash is
// failed alone; the rest of its batch is spoken by a new process.
std::vector<std::string> synthesize_with_festival(const std::string& voice, const std::vector<FestivalRequest>& requests,
                                                  const std::string& work_directory);

}  // namespace cadenza::speech_corpus
