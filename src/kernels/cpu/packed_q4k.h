#pragma once
// Q4_K's and Q5_K's packed layout (packed_layout.h has the legacy blocks', packed_q6k.h Q6_K's): the
// rows of a tile of L lanes (16, or fewer in the last tile) interleaved super-block by super-block,
// each super-block stored as
//   [L f16 d][L f16 dmin]
//   [12 x L scale bytes]               GGUF's 6-bit scales and minimums as they are: byte k of lane n
//                                      at 4L + kL + n
//   [8 groups]                         group G holds sub-block G (values 32G..32G+31):
//       4 x 4L bytes of nibbles:       pair j, lane n, byte i: value 32G+8j+i in the low nibble,
//                                      value 32G+8j+4+i in the high nibble
//       Q5_K: 4L bytes of fifth bits:  lane n, byte i: bit c holds the fifth bit of value 32G+4c+i
// So one 512-bit load and one or two instructions make "chunk" c of a group (its values 4c..4c+3,
// unsigned) for sixteen rows, ready for a dword-broadcast VNNI dot. A tile has exactly the bytes of
// its rows (144 per row and super-block for Q4_K, 176 for Q5_K): a matrix is repacked in place, and
// decode reads no more bytes than the file holds (the old Q4_K -> Q4_1 re-encoding read 11% more).
//
// The arithmetic is quant_dot_scalar.cc's for Q4_K / Q5_K, bit for bit: per sub-block the exact
// integers I = sc · Σ q·a and M = m · Σ a, then acc = fma(float(I), d · a.d, acc) and
// acc_min = fma(-float(M), dmin · a.d, acc_min); the row's result is acc + acc_min.
#include <cstdint>

#include "core/dtype.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu::q4k_packed {

inline constexpr int64_t kValues = 256;         // per super-block
inline constexpr int64_t kHeaderPerLane = 16;   // d, dmin and 12 scale bytes
inline constexpr int64_t kNibblesPerLane = 16;  // per group: 32 values of 4 bits

inline bool is_q4k(DType type) { return type == DType::Q4_K || type == DType::Q5_K; }
inline int64_t group_bytes(DType type) { return kNibblesPerLane + (type == DType::Q5_K ? 4 : 0); }  // per lane
inline int64_t super_bytes(DType type) { return kHeaderPerLane + 8 * group_bytes(type); }  // 144 or 176

// One super-block of `lanes` rows: GGUF blocks -> the tile's super-block, and one lane back.
void pack_super(DType type, const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst);
void unpack_super(DType type, const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* gguf_block);

// The naive reference: each row unpacked to GGUF and dotted by quant_dot_scalar.
void dot_scalar(const PackedDotTask& task);
void dot_avx512vnni(const PackedDotTask& task);

}  // namespace ridge::cpu::q4k_packed
