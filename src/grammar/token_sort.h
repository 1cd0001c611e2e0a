#pragma once
// Sorting every token of a vocabulary from one parser state: accepted, dependent or rejected (see
// compiled_grammar.h). Tokens are walked through the vocabulary trie from the state, skipping the
// subtrees it rejects; with `plain` given, plain tokens (plain_tokens.h) whose first byte leads to
// one state whatever the character are sorted by their character count instead, and only the other
// tokens are walked -- inside a JSON string, a few thousand tokens instead of the whole vocabulary.
// Both ways give the same sort.
#include "grammar/pda.h"
#include "grammar/plain_runs.h"
#include "grammar/token_set.h"
#include "grammar/token_vocab.h"

namespace ridge::grammar {

// One sort in two steps: the plain tokens first, then the walk, so that a caller sees how much
// walking is left before doing it (and may look for the answer in a cache instead). `start` is a
// state over the sentinel; `plain`, when given, reads the same Pda.
class TokenSort {
 public:
  TokenSort(Pda& pda, PlainRuns* plain, Pda::StateId start, const TokenVocab& vocab);
  size_t walk_bound() const { return walk_bound_; }  // the trie nodes the walk may visit, at most
  PositionTokens finish();

 private:
  Pda& pda_;
  Pda::StateId start_;
  const TokenVocab& vocab_;
  ByteSet first_, full_;  // the first bytes read; those whose every token is walked
  size_t walk_bound_ = 0;
  std::vector<uint64_t> accepted_;  // a mask over the vocabulary
};

// Sets in `words` the tokens of `run` whose bytes after the completion point `cont` (the state the
// completed frames return to) reads.
void allow_dependent(Pda& pda, Pda::StateId cont, const DependentRun& run, const TokenVocab& vocab, uint64_t* words);

inline PositionTokens sort_tokens(Pda& pda, PlainRuns* plain, Pda::StateId start, const TokenVocab& vocab) {
  return TokenSort(pda, plain, start, vocab).finish();
}

}  // namespace ridge::grammar
