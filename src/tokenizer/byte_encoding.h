#pragma once
// GPT-2 byte-level encoding: each byte is shown as a printable codepoint, so a BPE vocab of
// strings can cover arbitrary bytes. Printable Latin-1 bytes map to themselves; the other
// 68 bytes map, in order, to U+0100 upwards.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace ridge::byte_encoding {

// UTF-8 of the codepoint that stands for `byte`.
const std::string& byte_to_text(uint8_t byte);

// The byte a codepoint stands for, if it is one of the 256.
std::optional<uint8_t> codepoint_to_byte(uint32_t cpt);

}  // namespace ridge::byte_encoding
