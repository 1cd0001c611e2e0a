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
#include "grammar/plain_runs.h"
#include "grammar/token_set.h"
#include "grammar/token_vocab.h"

namespace ridge::grammar {

struct CompileLimits {
  std::chrono::milliseconds timeout{10000};  // a compile that takes longer is a GrammarError
  // Sort plain tokens by character count where a JSON string allows it (token_sort.h); false walks
  // every token through the trie (the same masks, slower: tests compare the two).
  bool sort_plain_text = true;
  // Stacks of lexical frames whose walk may visit more trie nodes than this (some milliseconds)
  // are looked up in the cache shared by grammars first (0: every one; tests).
  size_t share_walks_above = 200000;
};

class CompiledGrammar {
 public:
  CompiledGrammar(const Grammar& grammar, std::shared_ptr<const TokenVocab> vocab, const CompileLimits& limits = {});

  const std::shared_ptr<const FlatGrammar>& flat() const { return flat_; }
  const TokenVocab& vocab() const { return *vocab_; }
  const std::shared_ptr<const TokenVocab>& vocab_ptr() const { return vocab_; }
  // The tokens of the stacks whose tops are the positions `tops`, all over the frames `below`
  // (positions, innermost first; see above). Tops over the same frames are sorted together: one
  // sort for the alternatives of a character instead of one per alternative.
  std::shared_ptr<const PositionTokens> tokens_for(const std::vector<int32_t>& tops,
                                                   const std::vector<int32_t>& below) const;
  double compile_seconds() const { return compile_seconds_; }
  size_t memory_bytes() const;

 private:
  // The key of the cache shared by grammars: the tops and the frames below, spelled canonically.
  std::string shared_chain_key(const std::string& tops_key, const std::vector<int32_t>& tops,
                               const std::string& below_key, const std::vector<int32_t>& below) const;

  std::shared_ptr<const FlatGrammar> flat_;
  std::shared_ptr<const TokenVocab> vocab_;
  std::vector<std::shared_ptr<const PositionTokens>> positions_;  // non-lexical byte positions, alone
  mutable std::mutex mutex_;  // guards chains_
  mutable std::unordered_map<std::string, std::shared_ptr<const PositionTokens>> chains_;
  mutable std::unordered_map<std::string, std::string> spelled_;  // canonical spellings of tops and of frames below
  // One matcher for every first-use walk, so walks share its memoised transitions (a string of at
  // most n characters is n chains, each starting where the previous one's first character leads).
  mutable std::mutex walk_mutex_;
  mutable std::unique_ptr<Pda> walk_pda_;
  mutable std::unique_ptr<PlainRuns> walk_runs_;  // over walk_pda_; null when sort_plain_text is off
  CompileLimits limits_;
  double compile_seconds_ = 0;
};

}  // namespace ridge::grammar
