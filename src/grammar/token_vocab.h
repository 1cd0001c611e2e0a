#pragma once
// The vocabulary as the grammar engine sees it: each token's bytes, and a trie of them laid out in
// preorder (a node's subtree is the index range [node, subtree_end)), so walking it with a
// matcher is one pass over an array that skips rejected subtrees. Tokens that never match text
// (control tokens, empty pieces) are left out; end-of-generation tokens are allowed once the grammar
// accepts. Built once per tokenizer and shared by every grammar compiled for it.
#include <cstdint>
#include <string>
#include <vector>

namespace ridge::grammar {

class TokenVocab {
 public:
  struct TrieNode {
    uint8_t byte = 0;  // the byte this node adds to its parent's prefix (unused for the root)
    uint16_t depth = 0;
    int32_t subtree_end = 0;
    int32_t first_token = 0;  // into trie_tokens(): the tokens whose bytes end here
    int32_t n_tokens = 0;
  };

  // token_bytes by id ("" = never allowed by a grammar); stop_tokens: allowed when the grammar accepts.
  TokenVocab(std::vector<std::string> token_bytes, std::vector<int32_t> stop_tokens);

  int32_t n_vocab() const { return static_cast<int32_t>(bytes_.size()); }
  const std::string& bytes(int32_t id) const { return bytes_[id]; }
  const std::vector<int32_t>& stop_tokens() const { return stop_tokens_; }
  const std::vector<TrieNode>& trie() const { return trie_; }
  const std::vector<int32_t>& trie_tokens() const { return trie_tokens_; }
  // The child of the root starting with each byte (-1 if none).
  int32_t root_child(uint8_t byte) const { return root_child_[byte]; }
  int32_t n_words() const { return (n_vocab() + 63) / 64; }  // a token mask's length in 64-bit words
  uint64_t id() const { return id_; }
  int32_t max_token_bytes() const { return max_token_bytes_; }  // unique in the process: keys caches shared across grammars

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> stop_tokens_;
  std::vector<TrieNode> trie_;
  std::vector<int32_t> trie_tokens_;
  int32_t root_child_[256];
  uint64_t id_;
  int32_t max_token_bytes_ = 0;
};

}  // namespace ridge::grammar
