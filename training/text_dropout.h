// Text dropout, the training half of classifier-free guidance for a
// decoder-only TTS target (as in Koel-TTS): the text of a fraction of the
// training sequences is replaced by the null text, its <bos> and <eos> kept
// and every symbol between them turned into the frontend's <pad>
// (core/null_text.h, shared with synthesis), so that one model learns both
// p(codes | text) and p(codes | no text). At synthesis the engine runs both
// and extrapolates away from the second (the classifier_free_guidance logits
// processor of a pipeline's [logits]), which makes the output follow the
// text more than the history of codes.
// Training batches only; held-out evaluation sees the real text.
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "null_text.h"

namespace cadenza::training {

struct TextDropout {
    double rate = 0;          // fraction of the texts replaced, in [0, 1)
    int64_t text_offset = 0;  // the text's token ids: [text_offset, text_offset + text_count)
    int64_t text_count = 0;
    uint64_t seed = 0;
    int64_t pad_id = 0;  // the frontend's <pad>, a frontend id (layout.json's text_pad_id)

    bool enabled() const { return rate > 0; }
    int64_t null_symbol() const { return null_text_pad(text_offset, pad_id); }
};

// `inputs` ([B, T], the batch's inputs or a noisy copy of them) with the text
// of some sequences nulled. A text is a run of real text tokens; the draw is
// one per run and a pure function of (seed, the batch's tokens), so a resumed
// run repeats it bit for bit.
at::Tensor drop_text(const at::Tensor& inputs, const Batch& batch, const TextDropout& dropout);

}  // namespace cadenza::training
