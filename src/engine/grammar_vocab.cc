#include "engine/grammar_vocab.h"

#include "tokenizer/vocab.h"

namespace ridge {

std::shared_ptr<const grammar::TokenVocab> grammar_vocab(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  std::vector<std::string> bytes(tokenizer.n_vocab());
  std::vector<int32_t> stops;
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    if (tokenizer.is_end_of_generation(id)) stops.push_back(id);
    if (vocab.attr[id] & (kAttrControl | kAttrUnknown | kAttrUnused)) continue;
    bytes[id] = tokenizer.token_to_piece(id);
  }
  if (stops.empty() && tokenizer.eos_id() >= 0) stops.push_back(tokenizer.eos_id());
  return std::make_shared<const grammar::TokenVocab>(std::move(bytes), std::move(stops));
}

}  // namespace ridge
