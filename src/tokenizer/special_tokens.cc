// Special-token partitioning over a list of fragments.
#include "tokenizer/special_tokens.h"

#include <cctype>

namespace ridge {

namespace {

bool is_c_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Cut every occurrence of token `id` out of one raw fragment.
void split_fragment(const Vocab& vocab, std::string_view text, int32_t id, const Fragment& raw,
                    std::vector<Fragment>& out) {
  const std::string& needle = vocab.text[id];
  const uint32_t attr = vocab.attr[id];
  size_t begin = raw.offset, end = raw.offset + raw.length;
  while (begin < end) {
    const size_t match = text.substr(0, end).find(needle, begin);
    if (match == std::string_view::npos) break;
    size_t left_end = match;
    if (attr & kAttrLstrip)
      while (left_end > begin && is_c_space(text[left_end - 1])) --left_end;
    if (left_end > begin) out.push_back({-1, begin, left_end - begin});
    out.push_back({id, 0, 0});
    begin = match + needle.size();
    if (attr & kAttrRstrip)
      while (begin < end && is_c_space(text[begin])) ++begin;
  }
  if (begin < end) out.push_back({-1, begin, end - begin});
}

}  // namespace

std::vector<Fragment> partition_special(const Vocab& vocab, std::string_view text, bool parse_special) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({-1, 0, text.size()});
  for (int32_t id : vocab.special_longest_first) {
    if (!parse_special && (vocab.attr[id] & (kAttrControl | kAttrUnknown))) continue;
    std::vector<Fragment> next;
    next.reserve(fragments.size() + 2);
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
      } else {
        split_fragment(vocab, text, id, f, next);
      }
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace ridge
