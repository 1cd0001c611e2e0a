#include "quant/codebook_search.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/ref/iq_grids.h"

namespace ridge::quant {

Codebook::Codebook(std::span<const uint64_t> grid, std::array<uint8_t, 3> level_bytes, int nearest)
    : codeword_(kKeys, -1), first_(kKeys + 1, 0) {
  levels_.reserve(grid.size());
  for (uint64_t word : grid) {
    std::array<int8_t, 8> l{};
    for (int i = 0; i < 8; ++i) {
      const auto at = std::find(level_bytes.begin(), level_bytes.end(), uint8_t(word >> (8 * i)));
      if (at == level_bytes.end()) fail("codebook: grid word {:#x} has a value that is no level", word);
      l[size_t(i)] = int8_t(at - level_bytes.begin());
    }
    codeword_[key(l.data())] = int32_t(levels_.size());
    levels_.push_back(l);
  }
  // Distances in level units: ggml measures them between 2l + 1, four times these, the same order.
  constexpr int kMaxDistance = 8 * 4;
  std::vector<uint8_t> distance(levels_.size());
  std::vector<std::pair<uint8_t, uint16_t>> near;  // (distance, codeword)
  for (int k = 0; k < kKeys; ++k) {
    first_[size_t(k)] = uint32_t(candidates_.size());
    int8_t l[8];
    bool valid = true;
    for (int i = 0; i < 8; ++i) {
      l[i] = int8_t((k >> (2 * i)) & 3);
      valid = valid && l[i] < 3;
    }
    if (!valid || codeword_[size_t(k)] >= 0) continue;  // no quantizer asks for these
    bool present[kMaxDistance + 1] = {};
    for (size_t c = 0; c < levels_.size(); ++c) {
      int d2 = 0;
      for (int i = 0; i < 8; ++i) d2 += (levels_[c][size_t(i)] - l[i]) * (levels_[c][size_t(i)] - l[i]);
      distance[c] = uint8_t(d2);
      present[d2] = true;
    }
    int limit = 0, seen = 0;  // the `nearest`-th smallest distance any codeword has
    for (int d = 0; d <= kMaxDistance && seen < nearest; ++d)
      if (present[d]) limit = d, ++seen;
    near.clear();
    for (size_t c = 0; c < levels_.size(); ++c)
      if (distance[c] <= limit) near.emplace_back(distance[c], uint16_t(c));
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [d2, c] : near) candidates_.push_back(c);
  }
  first_[kKeys] = uint32_t(candidates_.size());
}

const Codebook& Codebook::of(DType type) {
  // The candidate lists' lengths are ggml's: the two nearest distances for IQ2_XXS and IQ2_XS,
  // the nearest only for IQ2_S's larger grid, three for IQ1's.
  constexpr std::array<uint8_t, 3> kMagnitudes = {8, 25, 43};
  constexpr std::array<uint8_t, 3> kTernary = {0xff, 0, 1};
  switch (type) {
    case DType::IQ2_XXS: {
      static const Codebook book(ref::kIq2xxsGrid, kMagnitudes, 2);
      return book;
    }
    case DType::IQ2_XS: {
      static const Codebook book(ref::kIq2xsGrid, kMagnitudes, 2);
      return book;
    }
    case DType::IQ2_S: {
      static const Codebook book(ref::kIq2sGrid, kMagnitudes, 1);
      return book;
    }
    case DType::IQ1_S:
    case DType::IQ1_M: {
      static const Codebook book(ref::kIq1sGrid, kTernary, 3);
      return book;
    }
    default:
      fail("{} has no 8-value codebook", dtype_name(type));
  }
}

}  // namespace ridge::quant
