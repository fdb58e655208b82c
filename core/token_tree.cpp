#include "token_tree.h"

#include <algorithm>
#include <vector>

namespace cadenza {

int32_t token_tree_depth(const cdz_token_tree& tree) {
    std::vector<int32_t> depth(static_cast<size_t>(std::max(tree.node_count, 0)), 1);
    int32_t deepest = 0;
    for (int32_t i = 0; i < tree.node_count; ++i) {
        if (tree.parents[i] >= 0) depth[i] = depth[tree.parents[i]] + 1;
        deepest = std::max(deepest, depth[i]);
    }
    return deepest;
}

}  // namespace cadenza
