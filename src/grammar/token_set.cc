#include "grammar/token_set.h"

#include <algorithm>

namespace ridge::grammar {

namespace {

// The build targets no particular CPU, so __builtin_popcountll is a library call: count in registers.
size_t count_bits(uint64_t w) {
  w = w - ((w >> 1) & 0x5555555555555555ULL);
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<size_t>((w * 0x0101010101010101ULL) >> 56);
}

}  // namespace

TokenSet::TokenSet(std::vector<int32_t> members, int32_t n_vocab) : count_(members.size()), n_vocab_(n_vocab) {
  const size_t words = (static_cast<size_t>(n_vocab) + 63) / 64;
  if (members.size() * 4 <= words * 8) {
    form_ = Form::kMembers;
    std::sort(members.begin(), members.end());
    list_ = std::move(members);
  } else {
    form_ = Form::kBits;
    bits_.assign(words, 0);
    for (int32_t t : members) bits_[t >> 6] |= uint64_t{1} << (t & 63);
  }
}

TokenSet TokenSet::of_bits(std::vector<uint64_t> words, int32_t n_vocab) {
  TokenSet set;
  set.n_vocab_ = n_vocab;
  for (uint64_t w : words)
    if (w) set.count_ += count_bits(w);
  if (set.count_ * 4 <= words.size() * 8) {
    set.list_.reserve(set.count_);
    for (size_t i = 0; i < words.size(); ++i)
      for (uint64_t w = words[i]; w; w &= w - 1)
        set.list_.push_back(static_cast<int32_t>(i * 64 + static_cast<size_t>(__builtin_ctzll(w))));
  } else {
    set.form_ = Form::kBits;
    set.bits_ = std::move(words);
  }
  return set;
}

void TokenSet::or_into(uint64_t* words) const {
  switch (form_) {
    case Form::kMembers:
      for (int32_t t : list_) words[t >> 6] |= uint64_t{1} << (t & 63);
      break;
    case Form::kBits:
      for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
      break;
  }
}

bool TokenSet::contains(int32_t token) const {
  switch (form_) {
    case Form::kMembers: return std::binary_search(list_.begin(), list_.end(), token);
    case Form::kBits: return (bits_[token >> 6] >> (token & 63)) & 1;
  }
  return false;
}

}  // namespace ridge::grammar
