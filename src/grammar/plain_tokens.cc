#include "grammar/plain_tokens.h"

#include <algorithm>
#include <array>

namespace ridge::grammar {

namespace plain_text {

namespace {

std::vector<std::vector<Step>> make_steps() {
  std::vector<std::vector<Step>> steps(kStates);
  auto add = [&](int from, std::initializer_list<std::pair<int, int>> ranges, int to) {
    ByteSet bytes;
    for (auto [lo, hi] : ranges) bytes.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
    steps[from].push_back(Step{bytes, to});
  };
  // 0: between characters; 1: one byte left; 3: two left; the others: a lead with a narrower next byte.
  add(0, {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7F}}, 0);
  add(0, {{0xC2, 0xDF}}, 1);
  add(0, {{0xE0, 0xE0}}, 2);
  add(0, {{0xE1, 0xE1}, {0xE3, 0xEC}, {0xEE, 0xEF}}, 3);
  add(0, {{0xE2, 0xE2}}, 4);
  add(0, {{0xED, 0xED}}, 5);
  add(0, {{0xF0, 0xF0}}, 6);
  add(0, {{0xF1, 0xF3}}, 7);
  add(0, {{0xF4, 0xF4}}, 8);
  add(1, {{0x80, 0xBF}}, 0);
  add(2, {{0xA0, 0xBF}}, 1);                // no overlong forms
  add(3, {{0x80, 0xBF}}, 1);
  add(4, {{0x80, 0x80}}, 9);
  add(4, {{0x81, 0xBF}}, 1);
  add(9, {{0x80, 0xA7}, {0xAA, 0xBF}}, 0);  // not U+2028, U+2029
  add(5, {{0x80, 0x9F}}, 1);                // no surrogates
  add(6, {{0x90, 0xBF}}, 3);
  add(7, {{0x80, 0xBF}}, 3);
  add(8, {{0x80, 0x8F}}, 3);                // nothing above U+10FFFF
  return steps;
}

const std::vector<std::vector<Step>>& all_steps() {
  static const std::vector<std::vector<Step>> steps = make_steps();
  return steps;
}

}  // namespace

const std::vector<Step>& steps(int state) { return all_steps()[state]; }

const ByteSet& leads() {
  static const ByteSet bytes = [] {
    ByteSet out;
    for (const Step& step : all_steps()[0]) out |= step.bytes;
    return out;
  }();
  return bytes;
}

int next(int state, uint8_t byte) {
  for (const Step& step : all_steps()[state])
    if (step.bytes.has(byte)) return step.next;
  return -1;
}

}  // namespace plain_text

namespace {

// The slots of a plain token, or 0.
int32_t plain_slots(const std::string& s) {
  int32_t slots = 0;
  int state = 0;
  for (char c : s) {
    if (state == 0) ++slots;
    state = plain_text::next(state, static_cast<uint8_t>(c));
    if (state < 0) return 0;
  }
  return slots;  // a state inside a character: cut short
}

}  // namespace

PlainTokens::PlainTokens(const std::vector<std::string>& bytes)
    : n_words_((bytes.size() + 63) / 64), slots_(bytes.size(), 0), by_first_(256) {
  std::vector<int32_t> others;
  for (int32_t id = 0; id < static_cast<int32_t>(bytes.size()); ++id) {
    if (bytes[id].empty()) continue;
    const int32_t slots = plain_slots(bytes[id]);
    if (slots == 0 || slots > kMaxSlots) {
      others.push_back(id);
      continue;
    }
    slots_[id] = static_cast<uint8_t>(slots);
    by_first_[static_cast<uint8_t>(bytes[id][0])].push_back(id);
    max_slots_ = std::max(max_slots_, slots);
    ++count_;
  }
  up_to_.assign(static_cast<size_t>(max_slots_) * n_words_, 0);
  for (int32_t id = 0; id < static_cast<int32_t>(bytes.size()); ++id)
    if (slots_[id]) up_to_[(slots_[id] - 1) * n_words_ + (id >> 6)] |= uint64_t{1} << (id & 63);
  for (int32_t k = 1; k < max_slots_; ++k)
    for (size_t w = 0; w < n_words_; ++w) up_to_[k * n_words_ + w] |= up_to_[(k - 1) * n_words_ + w];
  int32_t rows = 0;
  for (int b = 0; b < 256; ++b)
    if (plain_text::leads().has(static_cast<uint8_t>(b))) lead_row_[b] = rows++;
  non_ascii_row_ = rows++;
  containing_.assign(static_cast<size_t>(rows) * n_words_, 0);
  for (int32_t id = 0; id < static_cast<int32_t>(bytes.size()); ++id) {
    if (!slots_[id]) continue;
    int state = 0;
    for (size_t i = 0; i < bytes[id].size(); ++i) {
      const auto c = static_cast<uint8_t>(bytes[id][i]);
      if (state == 0 && i > 0) {
        containing_[lead_row_[c] * n_words_ + (id >> 6)] |= uint64_t{1} << (id & 63);
        if (c >= 0x80) containing_[non_ascii_row_ * n_words_ + (id >> 6)] |= uint64_t{1} << (id & 63);
      }
      state = plain_text::next(state, c);
    }
  }
  others_ = TokenTrie::of(bytes, std::move(others));
}

const uint64_t* PlainTokens::up_to(int32_t slots) const {
  if (max_slots_ == 0) return nullptr;
  return up_to_.data() + (std::clamp(slots, 1, max_slots_) - 1) * n_words_;
}

}  // namespace ridge::grammar
