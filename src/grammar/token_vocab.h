#pragma once
// The vocabulary as the grammar engine sees it: each token's bytes, their trie (token_trie.h), and
// the plain-text sort of them (plain_tokens.h). Tokens that never match text (control tokens, empty
// pieces) are left out; end-of-generation tokens are allowed once the grammar accepts. Built once
// per tokenizer and shared by every grammar compiled for it.
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/plain_tokens.h"
#include "grammar/token_trie.h"

namespace ridge::grammar {

class TokenVocab {
 public:
  using TrieNode = TokenTrie::Node;

  // token_bytes by id ("" = never allowed by a grammar); stop_tokens: allowed when the grammar accepts.
  TokenVocab(std::vector<std::string> token_bytes, std::vector<int32_t> stop_tokens);

  int32_t n_vocab() const { return static_cast<int32_t>(bytes_.size()); }
  const std::string& bytes(int32_t id) const { return bytes_[id]; }
  const std::vector<int32_t>& stop_tokens() const { return stop_tokens_; }
  const TokenTrie& token_trie() const { return trie_; }
  const std::vector<TrieNode>& trie() const { return trie_.nodes; }
  const std::vector<int32_t>& trie_tokens() const { return trie_.tokens; }
  // The child of the root starting with each byte (-1 if none).
  int32_t root_child(uint8_t byte) const { return trie_.root_child[byte]; }
  const PlainTokens& plain() const { return plain_; }
  int32_t n_words() const { return (n_vocab() + 63) / 64; }  // a token mask's length in 64-bit words
  uint64_t id() const { return id_; }  // unique in the process: keys caches shared across grammars
  int32_t max_token_bytes() const { return max_token_bytes_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> stop_tokens_;
  TokenTrie trie_;
  PlainTokens plain_;
  uint64_t id_;
  int32_t max_token_bytes_ = 0;
};

}  // namespace ridge::grammar
