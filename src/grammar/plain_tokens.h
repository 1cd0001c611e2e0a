#pragma once
// The vocabulary's tokens of plain JSON-string text, sorted once per vocabulary. A token is plain
// when its bytes are characters a JSON string holds unescaped (U+0020 and up but '"' and '\\', valid
// UTF-8; U+2028 and U+2029 are left out too, as a pattern's '.' refuses them), the last one possibly
// cut short (byte-level vocabularies split characters). Most of a vocabulary is plain, and inside a
// string a plain token is accepted or rejected only by its first byte and how many characters
// ("slots") it spans, so masks sort plain tokens with these precomputed sets instead of walking
// the trie (see token_sort.h); the other tokens get a trie of their own.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token_trie.h"

namespace ridge::grammar {

// Plain text as a byte automaton: state 0 lies between characters, the others inside one.
namespace plain_text {
constexpr int kStates = 10;
struct Step {
  ByteSet bytes;
  int next;
};
const std::vector<Step>& steps(int state);  // the bytes that may come in `state`, and where they lead
int next(int state, uint8_t byte);          // -1: the byte cannot come there
const ByteSet& leads();                     // the bytes a plain character may begin with
}  // namespace plain_text

class PlainTokens {
 public:
  static constexpr int32_t kMaxSlots = 250;  // longer plain runs are left to the trie of the others

  PlainTokens() = default;
  explicit PlainTokens(const std::vector<std::string>& bytes);

  int32_t max_slots() const { return max_slots_; }
  size_t count() const { return count_; }
  uint8_t slots(int32_t token) const { return slots_[token]; }  // 0: not plain
  // Plain tokens whose first byte is `byte`, ascending.
  const std::vector<int32_t>& starting_with(uint8_t byte) const { return by_first_[byte]; }
  // Plain tokens of at most `slots` slots (clamped to 1..max_slots()), as a mask of n_words words.
  const uint64_t* up_to(int32_t slots) const;
  // Plain tokens with a character after the first that begins with `lead` (a plain lead), and
  // those with one beyond ASCII, as masks: a string that rejects some characters rejects these.
  const uint64_t* containing(uint8_t lead) const { return containing_.data() + lead_row_[lead] * n_words_; }
  const uint64_t* containing_non_ascii() const { return containing_.data() + non_ascii_row_ * n_words_; }
  const TokenTrie& others() const { return others_; }  // every non-empty token that is not plain

 private:
  int32_t max_slots_ = 0;
  size_t count_ = 0;
  size_t n_words_ = 0;
  std::vector<uint8_t> slots_;
  std::vector<std::vector<int32_t>> by_first_;
  std::vector<uint64_t> up_to_;  // max_slots_ masks, the k-th holding tokens of at most k + 1 slots
  std::vector<uint64_t> containing_;  // a mask per plain lead, then the one of non-ASCII leads
  std::array<int32_t, 256> lead_row_{};
  int32_t non_ascii_row_ = 0;
  TokenTrie others_;
};

}  // namespace ridge::grammar
