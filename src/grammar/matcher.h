#pragma once
// One request's place in its grammar: the tokens allowed next (as a bitset over the vocabulary),
// accepting a token, rolling tokens back (speculative decoding), and the bytes the grammar forces
// next (jump-forward). Each matcher owns its Pda, so requests sharing a CompiledGrammar never share
// mutable state; a matcher itself is used by one thread at a time.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/pda.h"

namespace ridge::grammar {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  const CompiledGrammar& grammar() const { return *grammar_; }
  // words: vocab().n_words() 64-bit words; bit t set when token t may come next.
  void fill_mask(uint64_t* words);
  std::vector<uint64_t> mask();

  // false (and nothing changes) when the grammar does not allow the token here.
  bool accept_token(int32_t token);
  // Bytes appended outside the vocabulary walk (forced text); false and nothing changes if refused.
  bool accept_bytes(std::string_view bytes);
  // Undo the last n accept_token/accept_bytes calls (n <= n_accepted()).
  void rollback(int32_t n);
  int32_t n_accepted() const { return static_cast<int32_t>(history_.size()) - 1; }

  bool accepting() const;   // the output so far is a complete sentence (a stop token may come)
  bool terminated() const;  // a stop token was accepted: nothing may follow
  bool can_continue() const;  // some byte may still follow
  // The bytes every continuation starts with, up to `max` (the grammar leaves no choice there).
  std::string forced_bytes(size_t max = 256);

 private:
  static constexpr Pda::StateId kTerminated = -3;
  std::shared_ptr<const CompiledGrammar> grammar_;
  Pda pda_;
  std::vector<Pda::StateId> history_;  // [0]: nothing read; then the state after each accepted item
  // The sorted tokens of some stacks' top frames, and the node below those frames.
  struct TopFrames {
    std::shared_ptr<const PositionTokens> tokens;
    int32_t below = 0;
  };
  // By state: its stacks' top frames, stacks whose lexical tops share the frames below grouped.
  const std::vector<TopFrames>& top_frames(Pda::StateId s);
  std::unordered_map<Pda::StateId, std::vector<TopFrames>> top_frames_;
  std::vector<const PositionTokens*> seen_;
};

}  // namespace ridge::grammar
