#include "template/text.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace ridge::tmpl {

std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t n = utf8::sequence_length(uint8_t(s[i]));
    if (i + n > s.size()) n = 1;
    for (size_t k = 1; k < n; ++k)
      if ((uint8_t(s[i + k]) & 0xC0) != 0x80) n = 1;
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_space_char(std::string_view ch) {
  if (ch.size() == 1) return ch[0] == ' ' || (ch[0] >= '\t' && ch[0] <= '\r') || (ch[0] >= 0x1c && ch[0] <= 0x1f);
  static const std::vector<std::string_view> kSpaces = {
      "\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
      "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89",
      "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  return std::find(kSpaces.begin(), kSpaces.end(), ch) != kSpaces.end();
}

std::string strip(std::string_view s, const std::string* chars, bool left, bool right) {
  const auto chs = utf8_chars(s);
  const auto set = chars ? utf8_chars(*chars) : std::vector<std::string>{};
  auto strippable = [&](const std::string& c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_space_char(c);
  };
  size_t begin = 0, end = chs.size();
  if (left)
    while (begin < end && strippable(chs[begin])) ++begin;
  if (right)
    while (end > begin && strippable(chs[end - 1])) --end;
  std::string out;
  for (size_t i = begin; i < end; ++i) out += chs[i];
  return out;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = char(c - 32);
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c + 32);
  return out;
}

std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || long(out.size()) < maxsplit) {
      const size_t at = s.find(*sep, start);
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(start, at - start));
      start = at + sep->size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  const auto chs = utf8_chars(s);
  size_t i = 0;
  while (i < chs.size()) {
    while (i < chs.size() && is_space_char(chs[i])) ++i;
    if (i == chs.size()) break;
    std::string word;
    if (maxsplit >= 0 && long(out.size()) == maxsplit) {
      for (; i < chs.size(); ++i) word += chs[i];
      out.push_back(strip(word, nullptr, false, true));
      break;
    }
    while (i < chs.size() && !is_space_char(chs[i])) word += chs[i++];
    out.push_back(std::move(word));
  }
  return out;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to, long count) {
  std::string out;
  if (from.empty()) {  // Python inserts `to` between characters
    const auto chs = utf8_chars(s);
    long done = 0;
    for (const auto& c : chs) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out += c;
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  size_t start = 0;
  long done = 0;
  while (count < 0 || done < count) {
    const size_t at = s.find(from, start);
    if (at == std::string_view::npos) break;
    out += s.substr(start, at - start);
    out += to;
    start = at + from.size();
    ++done;
  }
  out += s.substr(start);
  return out;
}

}  // namespace ridge::tmpl
