#pragma once
// A kernel-friendly layout for Q4_0, Q4_1 and Q8_0 matrices (Q4_K, Q5_K: packed_q4k.h; Q6_K:
// packed_q6k.h; FP4: packed_fp4.h), made once at load: rows are interleaved sixteen at a time,
// block by block, in the layout of a VNNI / AMX "B" operand, so one 512-bit register holds four
// consecutive values of one block for sixteen rows, a dword-broadcast activation dots all sixteen
// rows at once, and every lane ends a block with that row's exact integer block sum (no
// horizontal reductions, and AMX tiles read the same bytes).
//
// A tile of L rows (16, or fewer in the last tile) stores, for each 32-value block in order:
//   [L f16 scales][L f16 minimums (Q4_1)][quants]
// Q4 quants: 4 chunks of 4L bytes; chunk c, lane n, byte j holds value 8c+j of row n in its low
// nibble and value 8c+4+j in its high nibble. Q8_0 quants: 8 chunks of 4L bytes; chunk c, lane n,
// byte j holds value 4c+j of row n plus 128 (unsigned, for the u8 x s8 dot instructions).
// A tile has exactly the bytes of its rows, so a matrix is repacked in place.
//
// The arithmetic every packed kernel performs, bit for bit, for a weight row r and a token t:
//   acc = 0; for each block b in order:
//     I   = Σ w_q · a_q                      (exact int32; w_q = q - 8 for Q4_0, q for Q4_1 and Q8_0)
//     acc = fma(float(I), d_w · d_a, acc)
//     acc = fma(m_w, s_a, acc)               (Q4_1 only: the minimum times the activation's scaled sum)
// so a token's result never depends on how many tokens or rows a kernel handles at once.
#include <cstdint>

#include "core/dtype.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

inline constexpr int64_t kTileRows = 16;

bool packable(DType type);  // Q4_0, Q4_1, Q8_0, the K-quants Q4_K, Q5_K, Q6_K, MXFP4, NVFP4 (packed_fp4.h)
// Whether the loader packs a matrix of this type on this ISA: AVX-512 reads every packable type
// packed, AVX2 and AVX-VNNI all but FP4 (packed_dot_256.h), which stays in its GGUF rows there;
// scalar CPUs nothing.
inline bool packed_on(Isa isa, DType type) {
  if (isa == Isa::Scalar) return false;
  return packable(type) && (isa == Isa::Avx512Vnni || (type != DType::MXFP4 && type != DType::NVFP4));
}

// Byte sizes of one block of a packable type: its scale (+ minimum) header, all of it, and one
// block of a full tile of sixteen rows.
template <DType T>
struct PackedGeometry {
  static constexpr int64_t header = T == DType::Q4_1 ? 4 : 2;
  static constexpr int64_t block_bytes = header + (T == DType::Q8_0 ? 32 : 16);
  static constexpr int64_t tile_block_bytes = kTileRows * block_bytes;
};

// In place: every tile of `rows` rows of `cols` values is interleaved as above.
void pack_rows(DType type, void* data, int64_t rows, int64_t cols);
// Row `row` of a packed matrix back to its GGUF blocks (the device upload; tests).
void unpack_row(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, uint8_t* gguf_row);
// Row `row` of a packed matrix to f32 (the embedding lookup of a packed tied matrix).
void dequantize_packed_row(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, float* out);
// Values [begin, begin + n) of that row (both multiples of the type's block) back to GGUF blocks.
void unpack_row_range(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, int64_t begin, int64_t n,
                      uint8_t* gguf_blocks);

// y[t * y_stride + r] = dot(packed weight row r, token t) for r in [row_begin, row_end), where
// row_begin is a multiple of kTileRows and row_end is one too or the matrix's last row.
// The AMX "A" operand's order of a batch's activations, made once per matmul input and shared by
// every thread: tile j holds tokens 16j..16j+15 (zeros past the last), and for each block b its 16
// rows of 32 quants (512 bytes, at q + (j * n_blocks + b) * 512) and its 16 scales d then 16 Σ
// terms s (at scales + (j * n_blocks + b) * 32).
struct TiledActs {
  const int8_t* q = nullptr;
  const float* scales = nullptr;
};
inline constexpr int64_t kTileTokens = 16;
inline constexpr int64_t kTiledBlockBytes = kTileTokens * kActBlock;
inline constexpr int64_t kTiledBlockScales = 2 * kTileTokens;
// Tokens [16j, 16j + 16) of acts (n_tokens, n_blocks) as tile j of the layout above.
void tile_activations(const ActBlock* acts, int64_t n_tokens, int64_t n_blocks, int64_t j, int8_t* q, float* scales);

// The walk the packed VNNI kernels share: chunks of `chunk` tokens (their activations stay in L2 while
// the tiles stream by), every tile of the task's rows, and the chunk's tokens in the fewest balanced
// passes of at most `max_pass` (13 tokens are 7 + 6, not 12 + 1). pass(first_row, lanes, t0, n, first_pass).
template <class Pass>
void for_each_balanced_pass(int64_t row_begin, int64_t row_end, int64_t rows, int64_t n_tokens, int64_t chunk,
                            int64_t max_pass, Pass&& pass);

struct PackedDotTask {
  DType type;
  const uint8_t* w;  // the packed matrix
  int64_t rows;      // of the whole matrix
  int64_t n_blocks;  // 32-value blocks per row
  int64_t row_begin, row_end;
  const ActBlock* acts;  // (n_tokens, n_blocks)
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
  TiledActs tiled = {};  // the same activations tiled, for packed_dot_amx (which tiles them itself without)
};
// The naive reference of the arithmetic above (tests; other CPUs reading a packed matrix).
void packed_dot_scalar(const PackedDotTask& task);
void packed_dot_avx512vnni(const PackedDotTask& task);
// Eight rows per 256-bit register, a full tile as two halves (packed_dot_256.h); bit-identical to
// the reference. AVX2 (vpmaddubsw) and AVX-VNNI (vpdpbusd) CPUs.
void packed_dot_avx2(const PackedDotTask& task);
void packed_dot_avxvnni(const PackedDotTask& task);
// AMX tiles (every token, in tiles of 16; a partial last tile of rows goes to the VNNI kernel).
// Bit-identical to both.
void packed_dot_amx(const PackedDotTask& task);
bool amx_usable();  // the CPU has AMX-INT8 and the kernel granted this process the tile state

template <class Pass>
void for_each_balanced_pass(int64_t row_begin, int64_t row_end, int64_t rows, int64_t n_tokens, int64_t chunk,
                            int64_t max_pass, Pass&& pass) {
  for (int64_t c0 = 0; c0 < n_tokens; c0 += chunk) {
    const int64_t c_n = n_tokens - c0 < chunk ? n_tokens - c0 : chunk;
    const int64_t passes = (c_n + max_pass - 1) / max_pass;
    for (int64_t first = row_begin; first < row_end; first += kTileRows) {
      const int64_t lanes = rows - first < kTileRows ? rows - first : kTileRows;
      for (int64_t p = 0, t = c0; p < passes; ++p) {
        const int64_t nt = (c_n - (t - c0) + (passes - p) - 1) / (passes - p);
        pass(first, lanes, t, nt, p == 0);
        t += nt;
      }
    }
  }
}

}  // namespace ridge::cpu
