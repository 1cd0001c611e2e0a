#include "grammar/recognize.h"

#include "grammar/pda.h"

namespace ridge::grammar {

bool grammar_accepts(const Grammar& grammar, std::string_view text) {
  Pda pda(std::make_shared<const FlatGrammar>(FlatGrammar::from(grammar)));
  Pda::StateId s = pda.initial();
  s = pda.step(s, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  return s >= 0 && pda.accepting(s);
}

}  // namespace ridge::grammar
