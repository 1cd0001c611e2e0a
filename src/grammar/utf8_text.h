#pragma once
// Strict UTF-8 for the text of patterns and grammars: a user's malformed byte is an error to report,
// not a character to guess (unlike the tokenizer's lenient decoder).
#include <cstdint>
#include <string>
#include <string_view>

namespace ridge::grammar::utf8_text {

// The value of one hex digit (escapes \xHH, \uHHHH in patterns and grammars), or -1.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the code point at `offset` and advances past it. Returns false (offset unchanged) for a
// malformed, overlong or truncated sequence, a surrogate or a value above U+10FFFF.
inline bool decode(std::string_view text, size_t& offset, uint32_t& cp) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(offset);
  size_t length;
  uint32_t min_value;
  if (lead < 0x80) {
    cp = lead;
    ++offset;
    return true;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, min_value = 0x80, cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min_value = 0x800, cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min_value = 0x10000, cp = lead & 0x07;
  } else {
    return false;
  }
  if (offset + length > text.size()) return false;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(offset + i) & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (byte(offset + i) & 0x3F);
  }
  if (cp < min_value || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  offset += length;
  return true;
}

inline void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline std::string encode(uint32_t cp) {
  std::string out;
  append(out, cp);
  return out;
}

// How a code point reads in an error message: itself when printable ASCII, U+XXXX otherwise.
inline std::string describe(uint32_t cp) {
  if (cp >= 0x21 && cp < 0x7F) return std::string(1, static_cast<char>(cp));
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "U+";
  for (int shift = cp > 0xFFFF ? 20 : 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
  return out;
}

}  // namespace ridge::grammar::utf8_text
