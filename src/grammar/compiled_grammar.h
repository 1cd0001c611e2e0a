#pragma once
// A grammar made ready to mask tokens of one vocabulary. For the top frames of a stack -- a
// position that reads a byte, and with it the frames below while they are lexical rules (a string's
// characters, the loop over them, the string: see FlatGrammar::lexical) -- the tokens are sorted
// once by walking the vocabulary trie from those frames alone, what lies below them unknown:
//   accepted  -- the token's bytes stay inside the position's rule (or end exactly as it completes):
//                allowed whatever the stack below is;
//   dependent -- the rule completes after the token's first k bytes and bytes remain: whether the
//                rest fits depends on the caller, so only these are checked at run time, from the
//                real stack (k is stored with the token);
//   rejected  -- everything else.
// Frames of non-lexical rules are sorted at compile time; stacks of lexical frames on first use, and
// kept in a cache shared by every grammar of the vocabulary (keyed by the rules they reach, spelled
// canonically), so a string rule met in one schema is never walked again for another.
// Thread-safe; shared by every request using the grammar.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/flat_grammar.h"
#include "grammar/pda.h"
#include "grammar/token_vocab.h"

namespace ridge::grammar {

// A set of tokens stored as whichever is smaller: a sorted list of members or a bitset.
class TokenSet {
 public:
  TokenSet() = default;
  TokenSet(std::vector<int32_t> members, int32_t n_vocab);
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

struct PositionTokens {
  TokenSet accepted;
  std::vector<int32_t> dependent_tokens;
  std::vector<uint16_t> dependent_offsets;  // bytes of the token read before the rule completes
};

struct CompileLimits {
  std::chrono::milliseconds timeout{10000};  // a compile that takes longer is a GrammarError
};

class CompiledGrammar {
 public:
  CompiledGrammar(const Grammar& grammar, std::shared_ptr<const TokenVocab> vocab, const CompileLimits& limits = {});

  const std::shared_ptr<const FlatGrammar>& flat() const { return flat_; }
  const TokenVocab& vocab() const { return *vocab_; }
  const std::shared_ptr<const TokenVocab>& vocab_ptr() const { return vocab_; }
  // The tokens of the frames `chain`: positions, innermost first (see above).
  std::shared_ptr<const PositionTokens> tokens_for(const std::vector<int32_t>& chain) const;
  double compile_seconds() const { return compile_seconds_; }
  size_t memory_bytes() const;

 private:
  std::shared_ptr<const FlatGrammar> flat_;
  std::shared_ptr<const TokenVocab> vocab_;
  std::vector<std::shared_ptr<const PositionTokens>> positions_;  // non-lexical byte positions, alone
  mutable std::mutex mutex_;  // guards chains_
  mutable std::unordered_map<std::string, std::shared_ptr<const PositionTokens>> chains_;
  mutable std::unordered_map<std::string, std::string> spelled_;  // canonical spellings of frame runs
  // One matcher for every first-use walk, so walks share its memoised transitions (a string of at
  // most n characters is n chains, each starting where the previous one's first character leads).
  mutable std::mutex walk_mutex_;
  mutable std::unique_ptr<Pda> walk_pda_;
  double compile_seconds_ = 0;
};

}  // namespace ridge::grammar
