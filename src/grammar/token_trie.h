#pragma once
// A trie of token spellings laid out in preorder (a node's subtree is the index range
// [node, subtree_end), its tokens a contiguous run of `tokens`), so walking it with a matcher is one
// pass over an array that skips rejected subtrees.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ridge::grammar {

struct TokenTrie {
  struct Node {
    uint8_t byte = 0;  // the byte this node adds to its parent's prefix (unused for the root)
    uint16_t depth = 0;
    int32_t subtree_end = 0;
    int32_t first_token = 0;  // into tokens: the tokens whose bytes end here
    int32_t n_tokens = 0;
  };
  std::vector<Node> nodes;  // [0] is the root
  std::vector<int32_t> tokens;
  std::array<int32_t, 256> root_child;  // the child of the root starting with each byte (-1 if none)

  // The trie of the tokens `ids` (indices into `bytes`, none of them empty).
  static TokenTrie of(const std::vector<std::string>& bytes, std::vector<int32_t> ids);
};

}  // namespace ridge::grammar
