#include "quant/iq3_codebook.h"

#include <algorithm>
#include <climits>

#include "core/error.h"
#include "kernels/ref/iq_grids.h"

namespace ridge::quant {

Iq3Codebook::Iq3Codebook(const uint32_t* grid, int size, int level_step, int distances) : levels_(size_t(size)) {
  // The dequantizer's grid holds each level's magnitude as a byte; the level is its rank, which
  // for both grids is the byte divided by `level_step`.
  entry_.fill(-1);
  for (int e = 0; e < size; ++e) {
    for (int i = 0; i < 4; ++i) levels_[size_t(e)][size_t(i)] = int8_t(ref::grid_byte(grid[e], i) / level_step);
    entry_[size_t(iq3_key(levels_[size_t(e)].data()))] = int16_t(e);
  }
  // Squared distances in values (2l + 1), as ggml measures them: ties between distances decide
  // which entries make the list, and the list's order (by distance, then entry) decides ties in
  // the weighted search.
  std::vector<int> d2(static_cast<size_t>(size));
  for (int key = 0; key < kKeys; ++key) {
    first_[size_t(key)] = uint32_t(near_.size());
    if (entry_[size_t(key)] >= 0) continue;
    for (int e = 0; e < size; ++e) {
      int s = 0;
      for (int i = 0; i < 4; ++i) {
        const int diff = 2 * (levels_[size_t(e)][size_t(i)] - ((key >> (3 * i)) & 7));
        s += diff * diff;
      }
      d2[size_t(e)] = s;
    }
    int below = -1;  // the distances taken so far are those <= below
    for (int n = 0; n < distances; ++n) {
      int next = INT_MAX;
      for (int s : d2)
        if (s > below) next = std::min(next, s);
      if (next == INT_MAX) break;
      for (int e = 0; e < size; ++e)
        if (d2[size_t(e)] == next) near_.push_back(uint16_t(e));
      below = next;
    }
  }
  first_[kKeys] = uint32_t(near_.size());
}

const Iq3Codebook& Iq3Codebook::of(DType type) {
  if (type == DType::IQ3_XXS) {
    static const Iq3Codebook xxs(ref::kIq3xxsGrid, 256, 8, 2);
    return xxs;
  }
  if (type == DType::IQ3_S) {
    static const Iq3Codebook s(ref::kIq3sGrid, 512, 2, 3);
    return s;
  }
  fail("{} has no IQ3 codebook", dtype_name(type));
}

std::span<const uint16_t> Iq3Codebook::neighbours(int key) const {
  return {near_.data() + first_[size_t(key)], near_.data() + first_[size_t(key) + 1]};
}

}  // namespace ridge::quant
