#pragma once
// Q6_K's packed layout (packed_layout.h has the legacy blocks'): the rows of a tile of L lanes (16,
// or fewer in the last tile) interleaved super-block by super-block, each super-block stored as
//   [L f16 d]
//   [16 x L int8 scales]              scale k (values 16k..16k+15) of lane n at 2L + kL + n
//   [8 groups x 24L bytes of values]  group G holds values 32G..32G+31:
//       4 x 4L bytes of low nibbles:  pair j, lane n, byte i: value 32G+8j+i in the low nibble,
//                                     value 32G+8j+4+i in the high nibble
//       2 x 4L bytes of high bits:    part h, lane n, byte i: bits 2k and 2k+1 hold the high two
//                                     bits of value 32G+16h+4k+i
// So one 512-bit load and two or three instructions make "chunk" c of a group (its values 4c..4c+3,
// as unsigned 6-bit numbers) for sixteen rows, ready for a dword-broadcast VNNI dot, with no
// transpose: the wide K-quant kernels' tile, made once at load. A tile has exactly the bytes of its
// rows (210 per row and super-block), so a matrix is repacked in place.
//
// The arithmetic is quant_dot_scalar.cc's for Q6_K, bit for bit: per group the exact integer
// I = sc_lo * Σ_lo (q - 32)·a + sc_hi * Σ_hi (q - 32)·a, then acc = fma(float(I), d · a.d, acc).
#include <cstdint>

#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu::q6k_packed {

inline constexpr int64_t kValues = 256;      // per super-block
inline constexpr int64_t kSuperBytes = 210;  // per row and super-block
inline constexpr int64_t kHeaderPerLane = 18;  // d and 16 scales
inline constexpr int64_t kGroupPerLane = 24;   // 32 values of 6 bits

// One super-block of `lanes` rows: GGUF blocks -> the tile's super-block, and one lane back.
void pack_super(const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst);
void unpack_super(const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* gguf_block);

// The naive reference: each row unpacked to GGUF and dotted by quant_dot_scalar.
void dot_scalar(const PackedDotTask& task);
void dot_avx512vnni(const PackedDotTask& task);

}  // namespace ridge::cpu::q6k_packed
