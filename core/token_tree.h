// What the engine reads of a drafter's token tree.
#pragma once

#include <cstdint>

#include "cadenza/plugin.h"

namespace cadenza {

// Levels of the tree: 0 when empty, the node count for a chain. Parents
// precede their children (the loop checks it before anything reads this).
int32_t token_tree_depth(const cdz_token_tree& tree);

}  // namespace cadenza
