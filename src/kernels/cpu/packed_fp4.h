#pragma once
// MXFP4's and NVFP4's packed layouts (packed_layout.h has the legacy blocks'): the rows of a tile of
// L lanes (16, or fewer in the last tile) interleaved block by block, each block stored as
//   MXFP4 (32 values, 17 bytes per lane):  [L E8M0 exponents][codes of values 0..31]
//   NVFP4 (64 values, 36 bytes per lane):  [4 x L E4M3 scales: scale s of lane n at sL + n]
//                                          [codes of values 0..31][codes of values 32..63]
// where "codes of 32 values" is the Q4 chunk layout: 4 chunks of 4L bytes; chunk c, lane n, byte j
// holds the code of value 8c+j in its low nibble and of value 8c+4+j in its high nibble. So one
// 512-bit load, a mask or shift and one byte shuffle (code -> value + 12, unsigned) make a VNNI
// operand of four values for sixteen rows. A tile has exactly the bytes of its rows: matrices are
// repacked in place.
//
// The arithmetic every packed FP4 kernel performs, bit for bit, for a weight row and a token, over
// each 32-value activation block in order (kernels/ref/fp4.h for the codes' values v):
//   MXFP4: I = Σ v·a (exact);                acc = fma(float(I), d · a.d, acc)        d = e8m0_half(e)
//   NVFP4: I0, I1 = Σ v·a over its 16-value halves;
//          acc = fma(float(I0), d0 · a.d, acc); acc = fma(float(I1), d1 · a.d, acc)   d = ue4m3_half(scale)
#include <cstdint>

#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu::fp4_packed {

inline bool is_fp4(DType type) { return type == DType::MXFP4 || type == DType::NVFP4; }
inline int64_t block_values(DType type) { return type == DType::NVFP4 ? 64 : 32; }
inline int64_t header_per_lane(DType type) { return type == DType::NVFP4 ? 4 : 1; }
inline int64_t block_bytes(DType type) { return type == DType::NVFP4 ? 36 : 17; }

// One block of `lanes` rows: GGUF blocks -> the tile's block, and one lane back.
void pack_block(DType type, const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst);
void unpack_block(DType type, const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* gguf_block);

// The naive reference of the arithmetic above, and the AVX-512 VNNI kernel.
void dot_scalar(const PackedDotTask& task);
void dot_avx512vnni(const PackedDotTask& task);

}  // namespace ridge::cpu::fp4_packed
