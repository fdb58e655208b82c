#include "tiny_training.h"

namespace cadenza::training {

llama::LlamaConfig tiny_config(int64_t layers) {
    llama::LlamaConfig c;
    c.vocab_size = 32;
    c.hidden_size = 32;
    c.intermediate_size = 64;
    c.num_hidden_layers = layers;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    c.max_position_embeddings = 64;
    c.tie_word_embeddings = true;
    return c;
}

TokenSequence tiny_speech_sequence(int32_t first_code) {
    TokenSequence sequence;
    for (int32_t t = 1; t < 7; ++t) sequence.tokens.push_back(t);
    sequence.tokens.push_back(110);
    for (int32_t c = 0; c < 20; ++c) sequence.tokens.push_back(10 + (first_code + 7 * c) % 100);
    sequence.tokens.push_back(110);
    sequence.prompt_length = static_cast<int64_t>(sequence.tokens.size());
    for (int32_t c = 0; c < 200; ++c) sequence.tokens.push_back(10 + (first_code + 3 * c) % 100);
    sequence.tokens.push_back(111);
    return sequence;
}

TrainOptions tiny_options(int64_t steps) {
    TrainOptions o;
    o.steps = steps;
    o.batch = 8;
    o.seq_len = 32;
    o.lr = 3e-3;
    o.warmup = 5;
    o.weight_decay = 0.01;
    o.seed = 1;
    o.holdout = 0.1;
    o.progress = false;
    return o;
}

}  // namespace cadenza::training
