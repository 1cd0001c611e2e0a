// The GPT-2 byte <-> codepoint tables, built once.
#include "tokenizer/byte_encoding.h"

#include "tokenizer/utf8.h"

namespace ridge::byte_encoding {

namespace {

bool maps_to_itself(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Tables {
  std::array<uint32_t, 256> codepoint_of{};
  std::array<std::string, 256> text_of;
  std::array<int16_t, 256 + 68> byte_of{};  // by codepoint; -1 where none
  Tables() {
    byte_of.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      codepoint_of[b] = maps_to_itself(b) ? static_cast<uint32_t>(b) : next++;
      text_of[b] = utf8::encode(codepoint_of[b]);
      byte_of[codepoint_of[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& byte_to_text(uint8_t byte) { return tables().text_of[byte]; }

std::optional<uint8_t> codepoint_to_byte(uint32_t cpt) {
  const auto& byte_of = tables().byte_of;
  if (cpt >= byte_of.size() || byte_of[cpt] < 0) return std::nullopt;
  return static_cast<uint8_t>(byte_of[cpt]);
}

}  // namespace ridge::byte_encoding
