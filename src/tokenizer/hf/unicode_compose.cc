// Canonical composition (Unicode's algorithm: a character joins the last starter unless a
// character of the same or higher class sits between them) and compatibility decomposition.
#include "tokenizer/hf/unicode_compose.h"

#include <algorithm>

#include "tokenizer/unicode_normalize.h"

namespace ridge::unicode {

using namespace tables;

namespace {

constexpr uint32_t kSyllableBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr uint32_t kLeadCount = 19, kVowelCount = 21, kTrailCount = 28;
constexpr uint32_t kSyllableCount = kLeadCount * kVowelCount * kTrailCount;

// The primary composite of a pair, or 0.
uint32_t composite_of(uint32_t first, uint32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase && second < kVowelBase + kVowelCount)
    return kSyllableBase + ((first - kLeadBase) * kVowelCount + (second - kVowelBase)) * kTrailCount;
  if (first >= kSyllableBase && first < kSyllableBase + kSyllableCount && (first - kSyllableBase) % kTrailCount == 0 &&
      second > kTrailBase && second < kTrailBase + kTrailCount)
    return first + (second - kTrailBase);
  const auto it = std::lower_bound(kComposePairs, kComposePairs + kComposePairsCount, std::pair{first, second},
                                   [](const ComposePair& p, const std::pair<uint32_t, uint32_t>& key) {
                                     return p.first != key.first ? p.first < key.first : p.second < key.second;
                                   });
  return it != kComposePairs + kComposePairsCount && it->first == first && it->second == second ? it->composite : 0;
}

}  // namespace

void to_nfkd(std::vector<uint32_t>& cpts) {
  std::vector<uint32_t> out;
  out.reserve(cpts.size());
  for (uint32_t cpt : cpts) {
    const auto it = std::lower_bound(kCompatDecompositions, kCompatDecompositions + kCompatDecompositionsCount, cpt,
                                     [](const CompatDecomposition& e, uint32_t c) { return e.cpt < c; });
    if (it != kCompatDecompositions + kCompatDecompositionsCount && it->cpt == cpt) {
      out.insert(out.end(), kCompatData + it->offset, kCompatData + it->offset + it->length);
    } else {
      out.push_back(cpt);
    }
  }
  to_nfd(out);  // the compatibility forms are fully decomposed already; this decomposes the rest and reorders
  cpts = std::move(out);
}

bool is_other_number(uint32_t cpt) {
  const auto* end = kOtherNumberRanges + kOtherNumberRangesCount;
  const auto* it = std::upper_bound(kOtherNumberRanges, end, cpt, [](uint32_t c, const uint32_t (&r)[2]) { return c < r[0]; });
  return it != kOtherNumberRanges && cpt <= (it - 1)[0][1];
}

LetterCategory letter_category(uint32_t cpt) {
  const auto* end = kLetterRanges + kLetterRangesCount;
  const auto* it = std::upper_bound(kLetterRanges, end, cpt, [](uint32_t c, const LetterRange& r) { return c < r.first; });
  return it != kLetterRanges && cpt <= (it - 1)->last ? LetterCategory((it - 1)->category) : kNotLetter;
}

void compose(std::vector<uint32_t>& cpts) {
  if (cpts.empty()) return;
  size_t starter = SIZE_MAX;  // index in the output of the last starter
  int last_class = -1;        // class of the last character kept after the starter (-1: none)
  size_t out = 0;
  for (size_t i = 0; i < cpts.size(); ++i) {
    const uint32_t cpt = cpts[i];
    const int cls = combining_class(cpt);
    if (starter != SIZE_MAX) {
      const bool blocked = last_class != -1 && (last_class == 0 || last_class >= cls);
      if (!blocked) {
        if (const uint32_t composite = composite_of(cpts[starter], cpt)) {
          cpts[starter] = composite;
          continue;
        }
      }
    }
    if (cls == 0) {
      starter = out;
      last_class = -1;
    } else {
      last_class = cls;
    }
    cpts[out++] = cpt;
  }
  cpts.resize(out);
}

}  // namespace ridge::unicode
