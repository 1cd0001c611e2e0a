#include "grammar/token_trie.h"

#include <algorithm>

namespace ridge::grammar {

TokenTrie TokenTrie::of(const std::vector<std::string>& bytes, std::vector<int32_t> ids) {
  TokenTrie trie;
  trie.root_child.fill(-1);
  std::sort(ids.begin(), ids.end(),
            [&](int32_t a, int32_t b) { return bytes[a] != bytes[b] ? bytes[a] < bytes[b] : a < b; });
  trie.nodes.push_back(Node{});
  std::vector<int32_t> path{0};  // path[d]: the node at depth d on the current branch
  const std::string* previous = nullptr;
  for (int32_t id : ids) {
    const std::string& s = bytes[id];
    size_t common = 0;
    if (previous)
      while (common < previous->size() && common < s.size() && (*previous)[common] == s[common]) ++common;
    while (path.size() > common + 1) {
      trie.nodes[path.back()].subtree_end = static_cast<int32_t>(trie.nodes.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      Node node;
      node.byte = static_cast<uint8_t>(s[d]);
      node.depth = static_cast<uint16_t>(std::min<size_t>(d + 1, 65535));
      node.first_token = static_cast<int32_t>(trie.tokens.size());
      if (d == 0) trie.root_child[node.byte] = static_cast<int32_t>(trie.nodes.size());
      path.push_back(static_cast<int32_t>(trie.nodes.size()));
      trie.nodes.push_back(node);
    }
    Node& leaf = trie.nodes[path.back()];
    if (leaf.n_tokens == 0) leaf.first_token = static_cast<int32_t>(trie.tokens.size());
    trie.tokens.push_back(id);
    ++leaf.n_tokens;
    previous = &s;
  }
  while (!path.empty()) {
    trie.nodes[path.back()].subtree_end = static_cast<int32_t>(trie.nodes.size());
    path.pop_back();
  }
  return trie;
}

}  // namespace ridge::grammar
