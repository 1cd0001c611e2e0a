// Codepoint -> flags lookup over the generated range table.
#include <algorithm>

#include "tokenizer/unicode_data.h"

namespace ridge::unicode {

uint16_t codepoint_flags(uint32_t cpt) {
  if (cpt >= 0x110000) return 0;
  const CodepointRange* end = kCodepointRanges + kCodepointRangeCount;
  // The last range whose first codepoint is <= cpt.
  const CodepointRange* it = std::upper_bound(kCodepointRanges, end, cpt,
                                              [](uint32_t c, const CodepointRange& r) { return c < r.first; });
  return (it - 1)->flags;
}

}  // namespace ridge::unicode
