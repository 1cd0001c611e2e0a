#pragma once
// Unicode general-category flags per codepoint: what \p{L}, \p{N}, \p{P}, \s ... mean to the
// pre-tokenizers. The table is generated (tools/gen_unicode_data.py) at the Unicode version
// llama.cpp uses, so both split text identically.
#include <cstddef>
#include <cstdint>

namespace ridge::unicode {

enum CodepointFlag : uint16_t {
  kUndefined = 0x001,    // unassigned (Cn)
  kNumber = 0x002,       // \p{N}
  kLetter = 0x004,       // \p{L}
  kSeparator = 0x008,    // \p{Z}
  kMark = 0x010,         // \p{M}
  kPunctuation = 0x020,  // \p{P}
  kSymbol = 0x040,       // \p{S}
  kControl = 0x080,      // \p{C}
  kCategoryMask = 0x0FF,
  kWhitespace = 0x100,   // \s (White_Space)
};

struct CodepointRange {
  uint32_t first;
  uint16_t flags;
};

extern const char* const kUnicodeVersion;
extern const CodepointRange kCodepointRanges[];
extern const size_t kCodepointRangeCount;

// Flags of one codepoint; 0 (no flag at all) for values past U+10FFFF.
uint16_t codepoint_flags(uint32_t cpt);

inline bool is_letter(uint32_t cpt) { return codepoint_flags(cpt) & kLetter; }
inline bool is_number(uint32_t cpt) { return codepoint_flags(cpt) & kNumber; }
inline bool is_whitespace(uint32_t cpt) { return codepoint_flags(cpt) & kWhitespace; }

}  // namespace ridge::unicode
