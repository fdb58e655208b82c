// The working memory of LlamaModel::forward_tree, kept by whoever makes
// many passes (a backbone or draft session) so that a pass allocates and
// zero-fills nothing but its output tensors: the buffers only grow, to the
// largest pass so far (the prompt's prefill).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cadenza::llama {

struct TreePassScratch {
    // The tree: each node's position, and which pending nodes it sees ([n, n]).
    std::vector<int64_t> positions;
    std::vector<uint8_t> visible;
    // The CPU pass's rows (cpu_tree_pass.h).
    std::vector<float> x, projected, q, k, v, grouped, scores, attended, gate, up, activated;
    // A pass split by columns (pass_helpers.h): each part's normed rows.
    std::vector<float> normed_by_part;

    // `buffer` with room for at least `count` values, its contents stale.
    template <class T>
    static T* room(std::vector<T>& buffer, size_t count) {
        if (buffer.size() < count) buffer.resize(count);
        return buffer.data();
    }
};

}  // namespace cadenza::llama
