// Element-wise passes, f16 dot products and attention in the reference's order (ggml_mirror.h).
// Written one lane at a time: each lane of the reference's vector code is an independent chain of
// roundings, which std::fma and plain float operations reproduce exactly.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "kernels/mirror/ggml_mirror.h"

namespace ridge::mirror {
namespace {

float from_bits(uint32_t b) { return f32_from_bits(b); }

// ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)).
float sum_lanes(const float* v) { return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7])); }

// Four 8-lane accumulators: (a0 + a2) + (a1 + a3) lane by lane, then the halves added and the four
// results summed pairwise with horizontal adds: (t0 + t1) + (t2 + t3).
float sum_four_accumulators(const float (*acc)[8]) {
  float a[8];
  for (int l = 0; l < 8; ++l) a[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  const float t0 = a[0] + a[4], t1 = a[1] + a[5], t2 = a[2] + a[6], t3 = a[3] + a[7];
  return (t0 + t1) + (t2 + t3);
}

}  // namespace

// 2^(x / ln 2) split as 2^n * e^b with |b| <= ln2 / 2, e^b from a degree-5 polynomial; scale
// factors split in two where 2^n alone would overflow or underflow (|n| > 126).
float exp_approx(float x) {
  const float shift = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shift);
  const float n = z - shift;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const uint32_t e = f32_to_bits(z) << 23;
  const float k = from_bits(e + f32_to_bits(1.0f));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, 0x1.ffffecp-1f * b);
  if (!(std::fabs(n) > 126.0f)) return std::fma(j, k, k);
  const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
  const float s1 = from_bits(g + 0x7f000000u);
  const float s2 = from_bits(e - g);
  if (std::fabs(n) > 192.0f) return s1 * s1;
  return std::fma(s2, j, s2) * s1;
}

float silu(float x) { return x / (1.0f + exp_approx(0.0f - x)); }

void rms_norm_mul(const float* x, const float* w, int64_t n, float eps, float* y) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);
  const auto mean = float(sum / double(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void rope_normal(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dim, int32_t position, float base) {
  float cos_sin[2 * 256];
  const int64_t pairs = std::min<int64_t>(rope_dim / 2, 256);
  const float step = std::pow(base, -2.0f / float(rope_dim));
  float theta = float(position);
  for (int64_t i = 0; i < pairs; ++i) {
    sincosf(theta, &cos_sin[2 * i + 1], &cos_sin[2 * i]);
    theta *= step;
  }
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < pairs; ++i) {
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      const float x0 = v[2 * i], x1 = v[2 * i + 1];
      // The reference's compiled rotation fuses both products of x0, rounding those of x1.
      v[2 * i] = std::fma(x0, c, -(x1 * s));
      v[2 * i + 1] = std::fma(x0, s, x1 * c);
    }
  }
}

float dot_f16(const float* x, int64_t x_stride, const float* y, int64_t n, DotOrder order) {
  if (order == DotOrder::Tiled) {
    float acc[8] = {};
    for (int64_t i = 0; i < n; ++i) acc[i % 8] = std::fma(x[i * x_stride], y[i], acc[i % 8]);
    return sum_lanes(acc);
  }
  float acc[4][8] = {};
  for (int64_t i = 0; i < n; ++i) {
    float& a = acc[(i / 8) % 4][i % 8];
    a = std::fma(x[i * x_stride], y[i], a);
  }
  return sum_four_accumulators(acc);
}

void attend_head(const float* q, const float* keys_t, const float* values, int64_t n_pos, int64_t head_dim, float scale,
                 DotOrder order, float* scratch, float* out) {
  float* q16 = scratch;
  float* p = scratch + head_dim;
  for (int64_t d = 0; d < head_dim; ++d) q16[d] = round_to_f16(q[d]);
  float top = -INFINITY;
  for (int64_t i = 0; i < n_pos; ++i) {
    p[i] = dot_f16(keys_t + i, n_pos, q16, head_dim, order) * scale;
    top = std::max(top, p[i]);
  }
  // exp in groups of eight positions (the cache is padded with masked, zero-weight slots), each
  // group summed in float, the groups in double.
  const int64_t padded = (n_pos + 7) / 8 * 8;
  double sum = 0.0;
  for (int64_t g = 0; g < padded; g += 8) {
    for (int64_t i = g; i < g + 8; ++i) p[i] = i < n_pos ? exp_approx(p[i] - top) : 0.0f;
    sum += double(sum_lanes(p + g));
  }
  const auto inv = float(1.0 / sum);
  for (int64_t i = 0; i < n_pos; ++i) p[i] = round_to_f16(p[i] * inv);
  for (int64_t d = 0; d < head_dim; ++d) out[d] = dot_f16(values + d, head_dim, p, n_pos, order);
}

}  // namespace ridge::mirror
