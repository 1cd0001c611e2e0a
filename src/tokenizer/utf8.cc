// UTF-8 decoding (lenient, llama.cpp-compatible), encoding, and stream completeness checks.
#include "tokenizer/utf8.h"

namespace ridge::utf8 {

namespace {

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Strict validity of a complete sequence starting at text[i]; returns its length or 0.
size_t strict_sequence_at(std::string_view text, size_t i) {
  const auto b0 = static_cast<uint8_t>(text[i]);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2, min = 0x80;
  else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, min = 0x800;
  else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if (i + n > text.size()) return 0;
  uint32_t cpt = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(text[i + k]);
    if (!is_continuation(b)) return 0;
    cpt = (cpt << 6) | (b & 0x3F);
  }
  if (cpt < min || cpt > 0x10FFFF || (cpt >= 0xD800 && cpt <= 0xDFFF)) return 0;
  return n;
}

// True when text[i..] is a strict-valid but truncated sequence (more bytes could complete it).
bool is_incomplete_prefix(std::string_view text, size_t i) {
  const auto b0 = static_cast<uint8_t>(text[i]);
  size_t n = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3;
  else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4;
  else return false;
  const size_t have = text.size() - i;
  if (have >= n) return false;
  for (size_t k = 1; k < have; ++k) {
    const auto b = static_cast<uint8_t>(text[i + k]);
    if (!is_continuation(b)) return false;
    // The second byte narrows the range for E0/ED/F0/F4 leads.
    if (k == 1 && ((b0 == 0xE0 && b < 0xA0) || (b0 == 0xED && b > 0x9F) || (b0 == 0xF0 && b < 0x90) ||
                   (b0 == 0xF4 && b > 0x8F)))
      return false;
  }
  return true;
}

}  // namespace

size_t sequence_length(uint8_t lead) {
  static constexpr uint8_t kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kByHighNibble[lead >> 4];
}

uint32_t decode_lenient(std::string_view text, size_t& offset) {
  const auto b0 = static_cast<uint8_t>(text[offset]);
  auto at = [&](size_t k) { return static_cast<uint8_t>(text[offset + k]); };
  auto continued = [&](size_t n) {
    if (offset + n - 1 >= text.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if (!is_continuation(at(k))) return false;
    return true;
  };
  uint32_t cpt = kReplacement;
  size_t n = 1;
  if (b0 < 0x80) {
    cpt = b0;
  } else if ((b0 & 0xE0) == 0xC0 && continued(2)) {
    cpt = ((b0 & 0x1Fu) << 6) | (at(1) & 0x3Fu), n = 2;
  } else if ((b0 & 0xF0) == 0xE0 && continued(3)) {
    cpt = ((b0 & 0x0Fu) << 12) | ((at(1) & 0x3Fu) << 6) | (at(2) & 0x3Fu), n = 3;
  } else if ((b0 & 0xF8) == 0xF0 && continued(4)) {
    cpt = ((b0 & 0x07u) << 18) | ((at(1) & 0x3Fu) << 12) | ((at(2) & 0x3Fu) << 6) | (at(3) & 0x3Fu), n = 4;
    // Beyond U+10FFFF cannot be re-encoded; treat the lead byte as invalid.
    if (cpt > 0x10FFFF) cpt = kReplacement, n = 1;
  }
  offset += n;
  return cpt;
}

std::vector<uint32_t> decode_all_lenient(std::string_view text) {
  std::vector<uint32_t> cpts;
  cpts.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) cpts.push_back(decode_lenient(text, offset));
  return cpts;
}

void append(std::string& out, uint32_t cpt) {
  if (cpt <= 0x7F) {
    out.push_back(static_cast<char>(cpt));
  } else if (cpt <= 0x7FF) {
    out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt <= 0xFFFF) {
    out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cpt >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  }
}

std::string encode(uint32_t cpt) {
  std::string out;
  append(out, cpt);
  return out;
}

size_t complete_prefix_length(std::string_view bytes) {
  // Only the last three bytes can start an unfinished sequence.
  const size_t from = bytes.size() > 3 ? bytes.size() - 3 : 0;
  for (size_t i = from; i < bytes.size(); ++i) {
    if (is_incomplete_prefix(bytes, i)) return i;
  }
  return bytes.size();
}

std::string sanitize(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = strict_sequence_at(bytes, i);
    if (n == 0) {
      append(out, kReplacement);
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace ridge::utf8
