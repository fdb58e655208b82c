#pragma once
// Corpus sentences with stable ids and train/dev/test splits. Both come from
// a hash of the normalized text alone, so adding fortune files adds sentences
// without moving any existing one to another split or id.
#include <cstdint>
#include <string>
#include <vector>

#include "text_normalizer.h"

namespace cadenza::speech_corpus {

struct CorpusSentence {
    std::string id;      // "s" and 12 hex digits of the hash
    std::string split;   // train, dev or test
    std::string text;    // normalized transcript
    std::string spoken;  // what the synthesizer reads
    uint64_t hash = 0;
};

// 64-bit FNV-1a of the normalized text, then a SplitMix64 finalizer.
uint64_t sentence_hash(const std::string& text);

// About 5% test, 3% dev, the rest train.
std::string split_of_hash(uint64_t hash);

// Ids and splits for every sentence, ordered by hash (a stable shuffle). Of
// two different texts whose ids collide, the later in hash order is dropped.
std::vector<CorpusSentence> assign_splits(const std::vector<NormalizedSentence>& sentences);

// At most `per_split` sentences of each split, the first in hash order.
std::vector<CorpusSentence> limit_per_split(const std::vector<CorpusSentence>& sentences, int per_split);

// `sentences.tsv`: a header `id split text`, then one sentence a line, written atomically.
void write_sentences_tsv(const std::string& path, const std::vector<CorpusSentence>& sentences);

}  // namespace cadenza::speech_corpus
