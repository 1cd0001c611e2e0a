#pragma once
// The codeword search of the 8-value codebook i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M).
// Their quantizers round each value of an octet to a level 0, 1 or 2 (IQ2: magnitudes 8, 25, 43;
// IQ1: -1, 0, 1) and look the eight levels up in the type's grid. A key packs the levels two bits
// a value, value 0 lowest: the same key as ggml's kmap. Most keys are no codeword; for those the
// quantizer scores a short list of candidates instead: every codeword at one of the `nearest`
// smallest distances from the key (squared level differences), nearest first and by index among
// equals, as iq2xs_init_impl builds them. The order matters: the quantizers keep the first of
// equally good candidates.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.h"

namespace ridge::quant {

class Codebook {
 public:
  // IQ2_XXS (256 codewords), IQ2_XS (512), IQ2_S (1024), IQ1_S and IQ1_M (the same 2048); built on
  // first use (about 0.1 s for the largest) and kept. Throws Error for any other type.
  static const Codebook& of(DType type);

  // The key of eight levels, each 0..2.
  static uint16_t key(const int8_t* levels) {
    unsigned k = 0;
    for (int i = 0; i < 8; ++i) k |= unsigned(levels[i]) << (2 * i);
    return uint16_t(k);
  }

  int size() const { return int(levels_.size()); }
  // Levels of codeword c.
  const std::array<int8_t, 8>& levels(int c) const { return levels_[size_t(c)]; }
  // The codeword whose levels make `key`, or -1.
  int find(uint16_t key) const { return key < kKeys ? codeword_[key] : -1; }
  // The candidates for a key that is no codeword (see above); empty for a codeword's key.
  std::span<const uint16_t> candidates(uint16_t key) const {
    return {candidates_.data() + first_[key], candidates_.data() + first_[key + 1]};
  }

  // Codewords given as grid words (iq_grids.h: a value a byte) and the byte of each level.
  Codebook(std::span<const uint64_t> grid, std::array<uint8_t, 3> level_bytes, int nearest);

 private:
  static constexpr int kKeys = 0xaaab;  // every key of levels 0..2: up to 0b10'10'10'10'10'10'10'10

  std::vector<std::array<int8_t, 8>> levels_;
  std::vector<int32_t> codeword_;    // [kKeys]
  std::vector<uint32_t> first_;      // [kKeys + 1]: a key's candidates are [first_[key], first_[key + 1])
  std::vector<uint16_t> candidates_;
};

}  // namespace ridge::quant
