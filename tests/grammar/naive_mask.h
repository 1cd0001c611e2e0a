#pragma once
// The naive token mask the fast one is checked against: every token's bytes stepped from the
// state the text leads to, a stop token allowed where the text is complete.
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/pda.h"

namespace ridge::grammar {

inline std::vector<uint64_t> naive_mask(const CompiledGrammar& g, const std::string& text, bool terminated = false) {
  const TokenVocab& vocab = g.vocab();
  std::vector<uint64_t> words(vocab.n_words(), 0);
  if (terminated) return words;
  Pda pda(g.flat());
  const Pda::StateId s = pda.step(pda.initial(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
  for (int32_t t = 0; t < vocab.n_vocab(); ++t) {
    const std::string& b = vocab.bytes(t);
    bool ok = !b.empty() && pda.step(s, reinterpret_cast<const uint8_t*>(b.data()), b.size()) != Pda::kDead;
    for (int32_t stop : vocab.stop_tokens()) ok = ok || (t == stop && pda.accepting(s));
    if (ok) words[t >> 6] |= uint64_t{1} << (t & 63);
  }
  return words;
}

}  // namespace ridge::grammar
