// The null text of classifier-free guidance, as training's text dropout
// (training/text_dropout.h) writes it and the guidance's null-text session
// (classifier_free_guidance.h) reads it: in each run of text tokens the first
// and last symbols (<bos>, <eos>) are kept and the ones between become the
// frontend's <pad> (cdz_frontend_info.pad_id; the corpus's layout.json
// records it as text_pad_id). One definition, so that training and synthesis
// agree. Header-only and free of LibTorch.
#pragma once

#include <cstddef>

namespace cadenza {

// Calls on_run(begin, end) for each maximal run [begin, end) of the positions
// 0..count-1 where is_text(position) holds, in order.
template <typename IsText, typename OnRun>
void for_each_text_run(size_t count, IsText is_text, OnRun on_run) {
    size_t position = 0;
    while (position < count) {
        if (!is_text(position)) {
            ++position;
            continue;
        }
        size_t end = position;
        while (end < count && is_text(end)) ++end;
        on_run(position, end);
        position = end;
    }
}

// The null text's filler as a token id: the frontend's <pad> id placed in
// the text range as every text id is.
template <typename Id>
Id null_text_pad(Id text_token_offset, Id frontend_pad_id) {
    return text_token_offset + frontend_pad_id;
}

// Turns the text run ids[begin, end) into the null text.
template <typename Id>
void null_text_run(Id* ids, size_t begin, size_t end, Id pad) {
    for (size_t k = begin + 1; k + 1 < end; ++k) ids[k] = pad;
}

}  // namespace cadenza
