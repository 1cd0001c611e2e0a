#pragma once
// How the states of one Pda read plain text (plain_tokens.h), memoised per state. Inside a JSON
// string every plain character leads to the same next state, whichever character it is; where that
// holds, a plain token's fate depends only on its first byte and its number of characters, which is
// what lets a mask sort plain tokens without walking them (token_sort.h).
//
// Not thread-safe, like the Pda it reads.
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "grammar/pda.h"
#include "grammar/plain_frames.h"

namespace ridge::grammar {

class PlainRuns {
 public:
  static constexpr int32_t kDead = -1;   // no stack reads the byte: rejected at it
  static constexpr int32_t kMixed = -2;  // the characters differ, or a frame completes inside one

  // cap: the longest run worth knowing (a token's most characters, less one).
  PlainRuns(Pda& pda, int32_t cap) : pda_(pda), cap_(cap), frames_(pda.grammar()) {}

  // The one state every plain character beginning with `lead` leads to from `s` (no frame
  // completing on the way), else kDead or kMixed.
  int32_t after_char(Pda::StateId s, uint8_t lead);
  // The one state every plain character not rejected at its first byte leads to: after_char's
  // answer for every lead not in dead_leads(s); kDead when every one is rejected.
  int32_t after_any_char(Pda::StateId s);
  const ByteSet& dead_leads(Pda::StateId s);

  // The characters read from s by after_any_char while the leads rejected stay the same.
  struct Run {
    int32_t length = 0;       // at most cap
    bool dead_after = false;  // the state after them rejects every plain character (when length < cap)
    ByteSet dead;             // the leads every state of the run rejects
  };
  Run run_from(Pda::StateId s);

 private:
  struct Info {
    std::array<int32_t, 256> lead;
    int32_t any = kMixed;
    ByteSet dead;  // the plain leads rejected
    Run run;
    bool run_known = false;
  };
  Info& info(Pda::StateId s);
  // info's lead outcomes where the stacks reading plain characters share one parent and end
  // exactly with each character or reject it: from the grammar (plain_frames.h) and the parent's
  // closure, without stepping through the characters. false: leads_by_steps must find them.
  bool leads_by_frames(Pda::StateId s, Info& out);
  void leads_by_steps(Pda::StateId s, Info& out);
  // After a byte of a character led to `next`, plain_text's automaton at `text_state`: the one state
  // every way of ending the character leads to, else kMixed.
  int32_t outcome(Pda::StateId next, int text_state);
  int32_t rest_of_char(Pda::StateId s, int text_state);

  Pda& pda_;
  int32_t cap_;
  PlainFrames frames_;
  std::unordered_map<Pda::StateId, std::unique_ptr<Info>> infos_;
  std::unordered_map<uint64_t, int32_t> rests_;
};

}  // namespace ridge::grammar
