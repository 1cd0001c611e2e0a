#include "grammar/token_vocab.h"

#include <algorithm>
#include <atomic>
#include <numeric>


namespace ridge::grammar {

TokenVocab::TokenVocab(std::vector<std::string> token_bytes, std::vector<int32_t> stop_tokens)
    : bytes_(std::move(token_bytes)), stop_tokens_(std::move(stop_tokens)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  std::fill(std::begin(root_child_), std::end(root_child_), -1);
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n_vocab(); ++id)
    if (!bytes_[id].empty()) {
      order.push_back(id);
      max_token_bytes_ = std::max(max_token_bytes_, static_cast<int32_t>(bytes_[id].size()));
    }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return bytes_[a] != bytes_[b] ? bytes_[a] < bytes_[b] : a < b;
  });
  trie_.push_back(TrieNode{});
  std::vector<int32_t> path{0};  // path[d]: the node at depth d on the current branch
  const std::string* previous = nullptr;
  for (int32_t id : order) {
    const std::string& s = bytes_[id];
    size_t common = 0;
    if (previous)
      while (common < previous->size() && common < s.size() && (*previous)[common] == s[common]) ++common;
    while (path.size() > common + 1) {
      trie_[path.back()].subtree_end = static_cast<int32_t>(trie_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      TrieNode node;
      node.byte = static_cast<uint8_t>(s[d]);
      node.depth = static_cast<uint16_t>(std::min<size_t>(d + 1, 65535));
      node.first_token = static_cast<int32_t>(trie_tokens_.size());
      if (d == 0) root_child_[node.byte] = static_cast<int32_t>(trie_.size());
      path.push_back(static_cast<int32_t>(trie_.size()));
      trie_.push_back(node);
    }
    TrieNode& leaf = trie_[path.back()];
    if (leaf.n_tokens == 0) leaf.first_token = static_cast<int32_t>(trie_tokens_.size());
    trie_tokens_.push_back(id);
    ++leaf.n_tokens;
    previous = &s;
  }
  while (!path.empty()) {
    trie_[path.back()].subtree_end = static_cast<int32_t>(trie_.size());
    path.pop_back();
  }
}

}  // namespace ridge::grammar
