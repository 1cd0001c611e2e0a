#pragma once
// Sets of tokens as a mask needs them: a set stored as whichever is smaller (a sorted list of members
// or a bitset), and the tokens of one parser position sorted three ways (see compiled_grammar.h).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ridge::grammar {

class TokenSet {
 public:
  TokenSet() = default;
  TokenSet(std::vector<int32_t> members, int32_t n_vocab);
  // The tokens whose bits are set in `words` ((n_vocab + 63) / 64 of them).
  static TokenSet of_bits(std::vector<uint64_t> words, int32_t n_vocab);
  void or_into(uint64_t* words) const;
  bool contains(int32_t token) const;
  size_t size() const { return count_; }
  size_t memory_bytes() const { return (list_.size() * 4) + bits_.size() * 8; }

 private:
  enum class Form : uint8_t { kMembers, kBits };
  Form form_ = Form::kMembers;
  size_t count_ = 0;
  int32_t n_vocab_ = 0;
  std::vector<int32_t> list_;
  std::vector<uint64_t> bits_;
};

// Dependent tokens come in whole trie subtrees (a walk finds them where a branch dies after the
// frames completed), so they are kept, and checked at run time, subtree by subtree.
struct DependentRun {
  int32_t node = 0;     // a node of the trie: every token at or below it
  uint16_t offset = 0;  // bytes of those tokens read before the frames completed (less than the node's depth)
  bool others = false;  // the node is in the trie of the tokens that are not plain text (plain_tokens.h)
};

struct PositionTokens {
  TokenSet accepted;
  std::vector<DependentRun> dependent;
  size_t memory_bytes() const { return accepted.memory_bytes() + dependent.size() * sizeof(DependentRun); }
};

}  // namespace ridge::grammar
