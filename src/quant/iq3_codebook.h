#pragma once
// The IQ3 grids as the quantizer searches them (ggml's iq3xs_init_impl tables). A group of four
// values is four 3-bit levels l (value 2l + 1), so any group has a 12-bit key, three bits a value,
// first value lowest. Of the 4096 keys only the grid's 256 (IQ3_XXS) or 512 (IQ3_S) entries can be
// stored; a key off the grid is replaced by the best of the entries nearest it, searched in a fixed
// order so that ties resolve as in ggml.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.h"

namespace ridge::quant {

class Iq3Codebook {
 public:
  static constexpr int kKeys = 4096;

  // IQ3_XXS or IQ3_S; built once, on first use, from the grids in kernels/ref/iq_grids.cc.
  static const Iq3Codebook& of(DType type);

  int size() const { return int(levels_.size()); }
  // The entry stored for `key`, or -1 when the key is off the grid.
  int entry(int key) const { return entry_[size_t(key)]; }
  // Entry `e`'s four levels, first value first.
  const std::array<int8_t, 4>& levels(int e) const { return levels_[size_t(e)]; }
  // For a key off the grid: the entries at the nearest (IQ3_XXS: two, IQ3_S: three) squared
  // distances from it, nearest first, by entry number within a distance.
  std::span<const uint16_t> neighbours(int key) const;

 private:
  Iq3Codebook(const uint32_t* grid, int size, int level_step, int distances);

  std::vector<std::array<int8_t, 4>> levels_;
  std::array<int16_t, kKeys> entry_{};
  std::array<uint32_t, kKeys + 1> first_{};  // neighbours of key k: near_[first_[k], first_[k + 1])
  std::vector<uint16_t> near_;
};

// Four levels' key.
inline int iq3_key(const int8_t* l) { return l[0] | l[1] << 3 | l[2] << 6 | l[3] << 9; }

}  // namespace ridge::quant
