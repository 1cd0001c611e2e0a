// Portable integer dot kernels: the same arithmetic as the SIMD ones (int32 block sums, f32 scales),
// used on CPUs without AVX2 and as the reference the SIMD kernels are tested against.
#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "kernels/cpu/int8_group.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/fp4.h"
#include "kernels/ref/iq_grids.h"
#include "kernels/ref/k_scales.h"

namespace ridge::cpu {
namespace {

float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Unpacks one weight block into signed-or-unsigned int values, its scale and its offset coefficient.
void load_block(DType type, const uint8_t* p, int32_t* q, float& d, float& offset_min) {
  offset_min = 0.0f;
  if (type == DType::Q8_0) {
    d = load_f16(p);
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(p[2 + i]);
    return;
  }
  const uint8_t* nibbles = p + (type == DType::Q4_1 ? 4 : 2);
  d = load_f16(p);
  const int32_t zero = type == DType::Q4_1 ? 0 : 8;  // Q4_0 stores q + 8
  if (type == DType::Q4_1) offset_min = load_f16(p + 2);
  for (int i = 0; i < 16; ++i) {
    q[i] = (nibbles[i] & 0x0f) - zero;
    q[i + 16] = (nibbles[i] >> 4) - zero;
  }
}

}  // namespace

bool quant_dot_supported(DType type) {
  return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0 || type == DType::Q2_K || type == DType::Q4_K || type == DType::Q5_K ||
         type == DType::Q6_K || type == DType::MXFP4 || type == DType::NVFP4 || type == DType::IQ4_NL || type == DType::IQ4_XS || type == DType::TQ2_0 ||
         int8_group_type(type);
}

namespace {

// Q6_K super-block against its 8 activation blocks, continuing the row's chain `acc` in the
// arithmetic every Q6_K kernel performs: per 32-value group, the exact integer
// I = sc_lo * Σ_lo w·a + sc_hi * Σ_hi w·a over its two 16-value halves (|I| < 2^24, so float(I) is
// exact), then acc = fma(float(I), d * a.d, acc), group after group along the row.
float q6k_dot_superblock(const uint8_t* blk, const ActBlock* acts, float acc) {
  const uint8_t* ql = blk;
  const uint8_t* qh = blk + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192);
  const float d = load_f16(blk + 208);
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8) {
    for (int g = 0; g < 4; ++g) {
      const ActBlock& a = acts[half * 4 + g];
      int32_t part[2] = {0, 0};
      for (int l = 0; l < 32; ++l) {
        const int low = (g & 1 ? ql[l + 32] : ql[l]) >> (g & 2 ? 4 : 0) & 0x0f;
        const int high = (qh[l] >> (2 * g)) & 0x03;
        part[l / 16] += ((low | high << 4) - 32) * a.q[l];
      }
      acc = std::fma(float(part[0] * sc[2 * g] + part[1] * sc[2 * g + 1]), d * a.d, acc);
    }
  }
  return acc;
}

// Q4_K super-block (d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles: each 32
// bytes hold two sub-blocks, low nibbles first) against its 8 activation blocks, continuing the
// row's two chains, in the arithmetic every Q4_K / Q5_K kernel performs: per sub-block the exact
// integers I = sc * Σ q·a and M = m * Σ a (both below 2^24: exact as floats), then
// acc = fma(float(I), d * a.d, acc) and acc_min = fma(-float(M), dmin * a.d, acc_min); the row's
// result is acc + acc_min.
// Q5_K (176 bytes) is Q4_K with qh[32] before the nibbles: bit s of qh[l] is value l's fifth bit.
void q4k_dot_superblock(const uint8_t* blk, const ActBlock* acts, bool five_bits, float& acc, float& acc_min) {
  const float d = load_f16(blk), dmin = load_f16(blk + 2);
  const uint8_t* qh = blk + 16;
  const uint8_t* qs = blk + (five_bits ? 48 : 16);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    ref::unpack_scale_min_k4(blk + 4, s, sc, m);
    const ActBlock& a = acts[s];
    const uint8_t* q = qs + 32 * (s / 2);
    int32_t isum = 0;
    for (int l = 0; l < 32; ++l) {
      const int high = five_bits ? ((qh[l] >> s) & 1) << 4 : 0;
      isum += ((s & 1 ? q[l] >> 4 : q[l] & 0x0f) | high) * a.q[l];
    }
    acc = std::fma(float(isum * sc), d * a.d, acc);
    acc_min = std::fma(-float(m * a.sum), dmin * a.d, acc_min);
  }
}

// The 4-bit table types (MXFP4, NVFP4, IQ4_NL) in the arithmetic of every kernel
// (quant_dot_simd.h): eight lanes, lane l holding
// the exact integer Σ w·a over values 4l..4l+3 of each 32-value block, fused into its own chain
// acc[l] = fma(float(sum), d_l * a.d, acc[l]) with d_l the scale of the lane's values; the row's
// result is the lanes' sum in the tree of an AVX2 horizontal add.
float table4_dot_row(DType type, const uint8_t* row, const ActBlock* acts, int64_t n_blocks) {
  float acc[8] = {};
  for (int64_t b = 0; b < n_blocks; ++b) {
    int32_t code[32];  // the block's values in order, as integers
    float lane_d[8];
    if (type == DType::MXFP4) {
      const uint8_t* blk = row + b * 17;
      for (int j = 0; j < 16; ++j) code[j] = ref::kFp4Values[blk[1 + j] & 0x0f], code[j + 16] = ref::kFp4Values[blk[1 + j] >> 4];
      for (float& d : lane_d) d = ref::e8m0_half(blk[0]);
    } else if (type == DType::IQ4_NL) {
      const uint8_t* blk = row + b * 18;
      const uint8_t* qs = blk + 2;
      for (int j = 0; j < 16; ++j) code[j] = ref::kIq4nlValues[qs[j] & 0x0f], code[j + 16] = ref::kIq4nlValues[qs[j] >> 4];
      for (float& l : lane_d) l = f16_to_f32(uint16_t(blk[0] | blk[1] << 8));
    } else {  // the 16-value groups 2h and 2h + 1 of a 64-value block
      const uint8_t* blk = row + (b / 2) * 36;
      const int h = int(b & 1);
      for (int g = 0; g < 2; ++g) {
        const uint8_t* qs = blk + 4 + 8 * (2 * h + g);
        for (int j = 0; j < 8; ++j) code[16 * g + j] = ref::kFp4Values[qs[j] & 0x0f], code[16 * g + j + 8] = ref::kFp4Values[qs[j] >> 4];
      }
      for (int l = 0; l < 8; ++l) lane_d[l] = ref::ue4m3_half(blk[2 * h + l / 4]);
    }
    for (int l = 0; l < 8; ++l) {
      int32_t sum = 0;
      for (int i = 4 * l; i < 4 * l + 4; ++i) sum += code[i] * acts[b].q[i];
      acc[l] = std::fma(float(sum), lane_d[l] * acts[b].d, acc[l]);
    }
  }
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// The 32-value int8 group types (int8_group.h: Q3_K, TQ1_0, the codebook i-quants) in the arithmetic
// of every kernel: per group I = m0 * Σ_lo q·a + m1 * Σ_hi q·a, exact, then acc = fma(float(I), D * a.d, acc).
float int8_group_dot_row(DType type, const uint8_t* row, const ActBlock* acts, int64_t n_blocks) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n_blocks; ++b) {
    int8_t q[32];
    int32_t m[2];
    const float d = int8_group(type, row, b, q, m);
    int32_t half[2] = {0, 0};
    for (int j = 0; j < 32; ++j) half[j / 16] += int32_t(q[j]) * acts[b].q[j];
    acc = std::fma(float(m[0] * half[0] + m[1] * half[1]), d * acts[b].d, acc);
  }
  return acc;
}

// Q2_K (scales[16]: a 4-bit scale and a 4-bit minimum per 16 values; qs[64]: 2-bit values, group g
// at bit pair g % 4 of bytes 32 (g / 4)..+31; f16 d, dmin) in the arithmetic every Q2_K kernel
// performs: per 32-value group the exact integers I = sc_lo Σ_lo q·a + sc_hi Σ_hi q·a and
// M = m_lo Σ_lo a + m_hi Σ_hi a, then acc = fma(float(I), d · a.d, acc) and
// acc_min = fma(-float(M), dmin · a.d, acc_min); the row's result acc + acc_min.
float q2k_dot_row(const uint8_t* row, const ActBlock* acts, int64_t n_blocks) {
  float acc = 0.0f, acc_min = 0.0f;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = row + (b / 8) * 84;
    const int g = int(b % 8);
    const ActBlock& a = acts[b];
    int32_t x[2] = {0, 0}, sum[2] = {0, 0};
    for (int l = 0; l < 32; ++l) {
      x[l / 16] += ((blk[16 + 32 * (g / 4) + l] >> (2 * (g % 4))) & 3) * a.q[l];
      sum[l / 16] += a.q[l];
    }
    const int s0 = blk[2 * g], s1 = blk[2 * g + 1];
    const int32_t i = (s0 & 15) * x[0] + (s1 & 15) * x[1], m = (s0 >> 4) * sum[0] + (s1 >> 4) * sum[1];
    acc = std::fma(float(i), load_f16(blk + 80) * a.d, acc);
    acc_min = std::fma(-float(m), load_f16(blk + 82) * a.d, acc_min);
  }
  return acc + acc_min;
}

}  // namespace

void quant_dot_scalar(const QuantDotTask& task) {
  if (task.type == DType::Q2_K) {
    for (int64_t r = task.row_begin; r < task.row_end; ++r)
      for (int64_t t = 0; t < task.n_tokens; ++t)
        task.y[t * task.y_stride + r] = q2k_dot_row(task.w + r * task.row_bytes, task.acts + t * task.n_blocks, task.n_blocks);
    return;
  }
  if (int8_group_type(task.type)) {
    for (int64_t r = task.row_begin; r < task.row_end; ++r)
      for (int64_t t = 0; t < task.n_tokens; ++t)
        task.y[t * task.y_stride + r] = int8_group_dot_row(task.type, task.w + r * task.row_bytes, task.acts + t * task.n_blocks, task.n_blocks);
    return;
  }
  if (task.type == DType::MXFP4 || task.type == DType::NVFP4 || task.type == DType::IQ4_NL) {
    for (int64_t r = task.row_begin; r < task.row_end; ++r)
      for (int64_t t = 0; t < task.n_tokens; ++t)
        task.y[t * task.y_stride + r] = table4_dot_row(task.type, task.w + r * task.row_bytes, task.acts + t * task.n_blocks, task.n_blocks);
    return;
  }
  if (task.type == DType::Q6_K || task.type == DType::Q4_K || task.type == DType::Q5_K) {
    const bool q6 = task.type == DType::Q6_K, q5 = task.type == DType::Q5_K;
    const int64_t super_bytes = dtype_info(task.type).block_bytes;
    for (int64_t r = task.row_begin; r < task.row_end; ++r)
      for (int64_t t = 0; t < task.n_tokens; ++t) {
        float sum = 0.0f, sum_min = 0.0f;
        for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
          const uint8_t* blk = task.w + r * task.row_bytes + b * super_bytes;
          const ActBlock* acts = task.acts + t * task.n_blocks + b * 8;
          if (q6) {
            sum = q6k_dot_superblock(blk, acts, sum);
          } else {
            q4k_dot_superblock(blk, acts, q5, sum, sum_min);
          }
        }
        task.y[t * task.y_stride + r] = sum + sum_min;
      }
    return;
  }
  const int64_t block_bytes = dtype_info(task.type).block_bytes;
  int32_t q[32];
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    const uint8_t* row = task.w + r * task.row_bytes;
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      const ActBlock* acts = task.acts + t * task.n_blocks;
      float sum = 0.0f;
      for (int64_t b = 0; b < task.n_blocks; ++b) {
        float d, offset_min;
        load_block(task.type, row + b * block_bytes, q, d, offset_min);
        int32_t isum = 0;
        for (int i = 0; i < 32; ++i) isum += q[i] * acts[b].q[i];
        sum += float(isum) * (d * acts[b].d) + offset_min * acts[b].s;
      }
      task.y[t * task.y_stride + r] = sum;
    }
  }
}

float dot_f32_scalar(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace ridge::cpu
