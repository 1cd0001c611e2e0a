#include "model/synth/random_weights.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/quantize.h"

namespace ridge::synth {
namespace {

// splitmix64: fast, good enough for weights, and seekable by construction.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// Sum of four 16-bit uniforms, centred and scaled to unit variance.
float unit_normal(SplitMix& rng) {
  const uint64_t r = rng.next();
  const double sum = double(r & 0xffff) + double((r >> 16) & 0xffff) + double((r >> 32) & 0xffff) + double(r >> 48);
  constexpr double kMean = 2 * 65535.0;
  constexpr double kStd = 37837.2;  // sqrt(4 * (65536^2 - 1) / 12)
  return float((sum - kMean) / kStd);
}

void store_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Q4_K (144 bytes per 256): d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles; Q5_K
// (176 bytes) adds 32 bytes of fifth bits before the nibbles. Every sub-block gets scale 32 and min
// 32, so x = 32 d (q - mid) when dmin = mid d, mid the middle of the 4- or 5-bit range.
void random_q45_k(SplitMix& rng, float stddev, int64_t n_blocks, bool five_bits, uint8_t* out) {
  const float mid = five_bits ? 15.5f : 7.5f;
  const float q_std = five_bits ? 9.23f : 4.61f;  // standard deviation of a uniform 0..31 or 0..15
  const int64_t block_bytes = five_bits ? 176 : 144;
  const float d = stddev / (32 * q_std);
  for (int64_t b = 0; b < n_blocks; ++b, out += block_bytes) {
    store_f16(out, d);
    store_f16(out + 2, mid * d);
    // Scales 0-3 and mins 0-3 in the low 6 bits of bytes 0-7; the high bits of scales/mins 4-7
    // in bits 6-7 of those bytes (32 = 0b10'0000: high part 2, low nibble 0).
    for (int j = 0; j < 8; ++j) out[4 + j] = uint8_t(32 | (2 << 6));
    for (int j = 8; j < 12; ++j) out[4 + j] = 0;
    for (int64_t j = 16; j < block_bytes; j += 8) {
      const uint64_t r = rng.next();
      std::memcpy(out + j, &r, 8);
    }
  }
}

// Q6_K (210 bytes per 256): ql[128], qh[64], 16 int8 scales, d. x = d * scale * (q - 32).
void random_q6_k(SplitMix& rng, float stddev, int64_t n_blocks, uint8_t* out) {
  constexpr float kSixBitStd = 18.47f;  // standard deviation of a uniform 0..63
  constexpr int kScale = 16;
  for (int64_t b = 0; b < n_blocks; ++b, out += 210) {
    for (int j = 0; j < 192; j += 8) {
      const uint64_t r = rng.next();
      std::memcpy(out + j, &r, 8);
    }
    for (int j = 0; j < 16; ++j) out[192 + j] = uint8_t(kScale);
    store_f16(out + 208, stddev / (kScale * kSixBitStd));
  }
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t index) {
  SplitMix rng{seed ^ (index * 0xd1b54a32d192ed03ull)};
  rng.next();
  return rng.next();
}

bool can_make_random(DType type) {
  return ref::can_quantize(type) || type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K;
}

void random_row(DType type, int64_t cols, float stddev, uint64_t seed, uint64_t row, void* dst) {
  SplitMix rng{mix_seed(seed, row)};
  auto* out = static_cast<uint8_t*>(dst);
  if (type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K) {
    if (cols % 256 != 0) fail("{} rows need a multiple of 256 columns, not {}", dtype_name(type), cols);
    if (type != DType::Q6_K) return random_q45_k(rng, stddev, cols / 256, type == DType::Q5_K, out);
    return random_q6_k(rng, stddev, cols / 256, out);
  }
  if (!ref::can_quantize(type)) fail("ridge cannot make random {} weights", dtype_name(type));
  thread_local std::vector<float> values;
  values.resize(size_t(cols));
  for (float& v : values) v = stddev * unit_normal(rng);
  ref::quantize_row(type, values.data(), out, cols);
}

}  // namespace ridge::synth
