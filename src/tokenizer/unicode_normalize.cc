// Lookups over the generated normalisation tables, and NFD with its canonical reordering.
#include "tokenizer/unicode_normalize.h"

#include <algorithm>

namespace ridge::unicode {

using namespace tables;

namespace {

// The last entry whose first code point is <= cpt, or nullptr.
template <typename T>
const T* last_at_or_before(const T* table, size_t count, uint32_t cpt) {
  const T* it = std::upper_bound(table, table + count, cpt, [](uint32_t c, const T& e) { return c < e.first; });
  return it == table ? nullptr : it - 1;
}

bool in_spans(const CodepointSpan* table, size_t count, uint32_t cpt) {
  const CodepointSpan* span = last_at_or_before(table, count, cpt);
  return span && cpt <= span->last;
}

// Hangul syllables decompose by arithmetic (Unicode 3.12): lead, vowel, optional trailing consonant.
constexpr uint32_t kSyllableBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr uint32_t kVowelCount = 21, kTrailCount = 28, kSyllableCount = 19 * kVowelCount * kTrailCount;

}  // namespace

bool is_bert_control(uint32_t cpt) { return in_spans(kBertControl, kBertControlCount, cpt); }
bool is_bert_whitespace(uint32_t cpt) { return in_spans(kBertWhitespace, kBertWhitespaceCount, cpt); }
bool is_bert_punctuation(uint32_t cpt) { return in_spans(kBertPunctuation, kBertPunctuationCount, cpt); }
bool is_nonspacing_mark(uint32_t cpt) { return in_spans(kNonspacingMark, kNonspacingMarkCount, cpt); }
bool is_combining_mark(uint32_t cpt) { return in_spans(kCombiningMark, kCombiningMarkCount, cpt); }

// tokenizers' list, which starts its fifth range at U+2B920 where BERT's Python has U+2B820.
bool is_cjk_ideograph(uint32_t cpt) {
  return (cpt >= 0x4E00 && cpt <= 0x9FFF) || (cpt >= 0x3400 && cpt <= 0x4DBF) || (cpt >= 0x20000 && cpt <= 0x2A6DF) ||
         (cpt >= 0x2A700 && cpt <= 0x2B73F) || (cpt >= 0x2B740 && cpt <= 0x2B81F) ||
         (cpt >= 0x2B920 && cpt <= 0x2CEAF) || (cpt >= 0xF900 && cpt <= 0xFAFF) || (cpt >= 0x2F800 && cpt <= 0x2FA1F);
}

uint8_t combining_class(uint32_t cpt) {
  const CombiningClassRun* run = last_at_or_before(kCombiningClass, kCombiningClassCount, cpt);
  return run && cpt <= run->last ? run->ccc : 0;
}

Lowercase to_lowercase(uint32_t cpt) {
  const auto long_it = std::lower_bound(kLongLowercase, kLongLowercase + kLongLowercaseCount, cpt,
                                        [](const LongLowercase& e, uint32_t c) { return e.cpt < c; });
  if (long_it != kLongLowercase + kLongLowercaseCount && long_it->cpt == cpt) {
    Lowercase out{{long_it->lower[0], long_it->lower[1], long_it->lower[2]}, 1};
    while (out.size < 3 && out.cpt[out.size] != 0) ++out.size;
    return out;
  }
  const CaseRun* run = last_at_or_before(kLowercaseRuns, kLowercaseRunsCount, cpt);
  if (run) {
    const uint32_t offset = cpt - run->first;
    if (offset % run->stride == 0 && offset / run->stride < run->count)
      return {{static_cast<uint32_t>(static_cast<int64_t>(cpt) + run->delta), 0, 0}, 1};
  }
  return {{cpt, 0, 0}, 1};
}

void append_decomposition(uint32_t cpt, std::vector<uint32_t>& out) {
  if (cpt >= kSyllableBase && cpt < kSyllableBase + kSyllableCount) {
    const uint32_t index = cpt - kSyllableBase;
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + index % (kVowelCount * kTrailCount) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  const auto it = std::lower_bound(kDecompositions, kDecompositions + kDecompositionsCount, cpt,
                                   [](const Decomposition& d, uint32_t c) { return d.cpt < c; });
  if (it == kDecompositions + kDecompositionsCount || it->cpt != cpt) {
    out.push_back(cpt);
    return;
  }
  out.insert(out.end(), kDecompositionData + it->offset, kDecompositionData + it->offset + it->length);
}

void to_nfd(std::vector<uint32_t>& cpts) {
  std::vector<uint32_t> out;
  out.reserve(cpts.size() + cpts.size() / 4);
  for (uint32_t cpt : cpts) append_decomposition(cpt, out);
  // Canonical ordering: a stable sort by class of each maximal run of non-starters.
  for (size_t i = 0; i < out.size();) {
    if (combining_class(out[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < out.size() && combining_class(out[end]) != 0) ++end;
    if (end - i > 1) {
      std::stable_sort(out.begin() + i, out.begin() + end,
                       [](uint32_t a, uint32_t b) { return combining_class(a) < combining_class(b); });
    }
    i = end;
  }
  cpts.swap(out);
}

}  // namespace ridge::unicode
