// The encoder pass against a naive double-precision BERT written here from the definition, on a
// small random model; each text's states alone and packed beside others, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "random_weights.h"

#include "core/error.h"
#include "embed/encoder_forward.h"
#include "kernels/cpu/encoder_attention.h"
#include "kernels/cpu/gelu_erf.h"
#include "kernels/cpu/layer_norm.h"
#include "kernels/ref/norm.h"
#include "kernels/cpu/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/encoder_attention.h"

namespace ridge {
namespace {

struct TinyBert : testing::RandomWeights {
  EncoderModel model;

  explicit TinyBert(int64_t n_embd = 48, int64_t n_head = 4, int64_t n_ff = 80, int64_t n_layer = 2) {
    std::mt19937 rng(7);
    buffers.reserve(64);
    EncoderSpec& s = model.spec;
    s.n_vocab = 50, s.n_embd = n_embd, s.n_head = n_head, s.n_ff = n_ff, s.n_layer = n_layer, s.n_positions = 40;
    s.n_token_types = 2, s.norm_eps = 1e-12f;
    EncoderWeights& w = model.weights;
    w.token_embd = tensor(s.n_vocab, n_embd, rng, 0.5f);
    w.position_embd = tensor(s.n_positions, n_embd, rng, 0.3f);
    w.token_types = tensor(2, n_embd, rng, 0.3f);
    w.embd_norm = tensor(1, n_embd, rng, 0.1f, 1.0f);
    w.embd_norm_b = tensor(1, n_embd, rng, 0.1f);
    w.layers.resize(size_t(n_layer));
    for (EncoderLayerWeights& l : w.layers) {
      const float ws = 1.0f / std::sqrt(float(n_embd));
      l.wq = tensor(n_embd, n_embd, rng, ws), l.bq = tensor(1, n_embd, rng, 0.1f);
      l.wk = tensor(n_embd, n_embd, rng, ws), l.bk = tensor(1, n_embd, rng, 0.1f);
      l.wv = tensor(n_embd, n_embd, rng, ws), l.bv = tensor(1, n_embd, rng, 0.1f);
      l.wo = tensor(n_embd, n_embd, rng, ws), l.bo = tensor(1, n_embd, rng, 0.1f);
      l.attn_norm = tensor(1, n_embd, rng, 0.1f, 1.0f), l.attn_norm_b = tensor(1, n_embd, rng, 0.1f);
      l.w_up = tensor(n_ff, n_embd, rng, ws), l.b_up = tensor(1, n_ff, rng, 0.1f);
      l.w_down = tensor(n_embd, n_ff, rng, 1.0f / std::sqrt(float(n_ff))), l.b_down = tensor(1, n_embd, rng, 0.1f);
      l.ffn_norm = tensor(1, n_embd, rng, 0.1f, 1.0f), l.ffn_norm_b = tensor(1, n_embd, rng, 0.1f);
    }
  }
};

using Rows = std::vector<std::vector<double>>;

const float* f(const WeightRef& w) { return static_cast<const float*>(w.data); }

Rows linear(const Rows& x, const WeightRef& w, const WeightRef& b) {
  Rows y(x.size(), std::vector<double>(size_t(w.rows)));
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = f(b)[r];
      for (int64_t c = 0; c < w.cols; ++c) acc += double(f(w)[r * w.cols + c]) * x[t][size_t(c)];
      y[t][size_t(r)] = acc;
    }
  return y;
}

void norm(Rows& x, const WeightRef& w, const WeightRef& b, double eps) {
  for (auto& row : x) {
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= double(row.size());
    for (double v : row) var += (v - mean) * (v - mean);
    var /= double(row.size());
    for (size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) / std::sqrt(var + eps) * f(w)[i] + f(b)[i];
  }
}

// BERT from its definition, one text.
Rows naive_bert(const EncoderModel& m, const std::vector<int32_t>& ids, const std::vector<int32_t>& types) {
  const EncoderSpec& s = m.spec;
  const EncoderWeights& w = m.weights;
  Rows x(ids.size(), std::vector<double>(size_t(s.n_embd)));
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t d = 0; d < s.n_embd; ++d)
      x[t][size_t(d)] = double(f(w.token_embd)[ids[t] * s.n_embd + d]) + f(w.position_embd)[int64_t(t) * s.n_embd + d] +
                        f(w.token_types)[types[t] * s.n_embd + d];
  norm(x, w.embd_norm, w.embd_norm_b, s.norm_eps);
  const int64_t hd = s.head_dim();
  for (const EncoderLayerWeights& l : w.layers) {
    const Rows q = linear(x, l.wq, l.bq), k = linear(x, l.wk, l.bk), v = linear(x, l.wv, l.bv);
    Rows a(x.size(), std::vector<double>(size_t(s.n_embd)));
    for (int64_t h = 0; h < s.n_head; ++h)
      for (size_t i = 0; i < x.size(); ++i) {
        std::vector<double> p(x.size());
        double max = -1e300, sum = 0;
        for (size_t j = 0; j < x.size(); ++j) {
          double dot = 0;
          for (int64_t c = 0; c < hd; ++c) dot += q[i][size_t(h * hd + c)] * k[j][size_t(h * hd + c)];
          p[j] = dot / std::sqrt(double(hd));
          max = std::max(max, p[j]);
        }
        for (double& e : p) sum += (e = std::exp(e - max));
        for (int64_t c = 0; c < hd; ++c) {
          double acc = 0;
          for (size_t j = 0; j < x.size(); ++j) acc += p[j] / sum * v[j][size_t(h * hd + c)];
          a[i][size_t(h * hd + c)] = acc;
        }
      }
    Rows o = linear(a, l.wo, l.bo);
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t d = 0; d < x[t].size(); ++d) o[t][d] += x[t][d];
    norm(o, l.attn_norm, l.attn_norm_b, s.norm_eps);
    x = o;
    Rows u = linear(x, l.w_up, l.b_up);
    for (auto& row : u)
      for (double& e : row) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
    Rows y = linear(u, l.w_down, l.b_down);
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t d = 0; d < x[t].size(); ++d) y[t][d] += x[t][d];
    norm(y, l.ffn_norm, l.ffn_norm_b, s.norm_eps);
    x = y;
  }
  return x;
}

std::vector<int32_t> random_ids(std::mt19937& rng, int64_t n, int32_t hi) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = int32_t(rng() % uint32_t(hi));
  return ids;
}

TEST(EncoderForward, MatchesNaiveBertOnEveryText) {
  TinyBert bert;
  EncoderForward forward(bert.model, 2);
  std::mt19937 rng(3);
  EncoderBatch batch;
  std::vector<std::vector<int32_t>> ids, types;
  for (int64_t len : {1, 7, 17, 40, 2}) {
    ids.push_back(random_ids(rng, len, 50));
    types.push_back(random_ids(rng, len, 2));
    batch.add(ids.back(), &types.back());
  }
  std::vector<float> hidden;
  forward.forward(batch, hidden);
  for (size_t i = 0; i < ids.size(); ++i) {
    const Rows want = naive_bert(bert.model, ids[i], types[i]);
    for (size_t t = 0; t < want.size(); ++t)
      for (size_t d = 0; d < want[t].size(); ++d)
        ASSERT_NEAR(hidden[size_t(batch.begin[i] + int64_t(t)) * 48 + d], want[t][d], 2e-4) << "text " << i << " token " << t;
  }
}

TEST(EncoderForward, ATextsStatesDoNotDependOnItsBatch) {
  TinyBert bert;
  EncoderForward forward(bert.model, 2);
  std::mt19937 rng(5);
  const std::vector<int32_t> text = random_ids(rng, 23, 50);
  EncoderBatch alone;
  alone.add(text);
  std::vector<float> a, b;
  forward.forward(alone, a);
  EncoderBatch packed;
  packed.add(random_ids(rng, 31, 50));
  packed.add(text);
  packed.add(random_ids(rng, 3, 50));
  forward.forward(packed, b);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[size_t(packed.begin[1]) * 48 + i]) << i;
}

TEST(EncoderForward, RefusesBadIdsTypesAndLengths) {
  TinyBert bert;
  EncoderForward forward(bert.model, 1);
  std::vector<float> hidden;
  EncoderBatch bad_id;
  bad_id.add({1, 50});
  EXPECT_THROW(forward.forward(bad_id, hidden), Error);
  EncoderBatch bad_type;
  const std::vector<int32_t> types{0, 2};
  bad_type.add({1, 2}, &types);
  EXPECT_THROW(forward.forward(bad_type, hidden), Error);
  EncoderBatch too_long;
  too_long.add(std::vector<int32_t>(41, 1));
  EXPECT_THROW(forward.forward(too_long, hidden), Error);
}

TEST(EncoderAttention, MatchesReferenceOverAwkwardShapes) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t n : {1, 2, 5, 16, 33, 100})
    for (auto [n_head, head_dim] : {std::pair<int64_t, int64_t>{1, 8}, {3, 17}, {4, 64}, {2, 40}, {1, 256}}) {
      const int64_t stride = n_head * head_dim + 5;  // rows wider than the heads
      std::vector<float> q(size_t(n * stride)), k(q.size()), v(q.size()), got(q.size(), 0.0f), want(q.size(), 0.0f);
      for (auto* buf : {&q, &k, &v})
        for (float& x : *buf) x = normal(rng);
      const float scale = 1.0f / std::sqrt(float(head_dim));
      ref::encoder_attention(q.data(), k.data(), v.data(), want.data(), stride, n, n_head, head_dim, scale);
      for (bool avx512 : {false, true}) {
        if (avx512 && cpu::best_supported_isa() != cpu::Isa::Avx512Vnni) continue;
        std::vector<float> scratch(size_t(avx512 ? cpu::encoder_attention_scratch_floats_avx512(n, head_dim)
                                                 : cpu::encoder_attention_scratch_floats_scalar(n, head_dim)));
        std::fill(got.begin(), got.end(), 0.0f);
        for (int64_t h = 0; h < n_head; ++h) {
          const cpu::EncoderAttention a{q.data(), k.data(), v.data(), got.data(), stride, n, head_dim, scale};
          avx512 ? cpu::encoder_attention_head_avx512(a, h, scratch.data()) : cpu::encoder_attention_head_scalar(a, h, scratch.data());
        }
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5) << "n " << n << " heads " << n_head << " avx512 " << avx512;
      }
    }
}

// Grouped KV heads (K/V rows of their own stride), bidirectional windows, and query ranges: each
// version against the reference, and a query's bits the same whichever range computed it, from keys
// the call transposed or the caller did.
TEST(EncoderAttention, GroupsWindowsAndRangesMatchTheReference) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  struct Shape {
    int64_t n, n_head, n_group, head_dim, window;
  };
  for (const Shape& sh : {Shape{1, 3, 3, 16, 1}, Shape{7, 2, 2, 8, 1}, Shape{40, 3, 3, 17, 4}, Shape{70, 4, 2, 32, 17},
                          Shape{100, 3, 1, 20, 0}, Shape{150, 3, 3, 256, 33}, Shape{130, 6, 3, 24, 64},
                          Shape{33, 2, 1, 40, 200}}) {
    const int64_t n_kv = sh.n_head / sh.n_group;
    const int64_t stride = sh.n_head * sh.head_dim + 3, kv_stride = n_kv * sh.head_dim + 7;
    std::vector<float> q(size_t(sh.n * stride)), k(size_t(sh.n * kv_stride)), v(k.size()), want(q.size(), 0.0f);
    for (auto* buf : {&q, &k, &v})
      for (float& x : *buf) x = normal(rng);
    const float scale = 1.0f / 16.0f;
    ref::encoder_attention(q.data(), k.data(), v.data(), want.data(), stride, sh.n, sh.n_head, sh.head_dim, scale, kv_stride,
                           sh.n_group, sh.window);
    for (bool avx512 : {false, true}) {
      if (avx512 && cpu::best_supported_isa() != cpu::Isa::Avx512Vnni) continue;
      const auto rows = avx512 ? cpu::encoder_attention_rows_avx512 : cpu::encoder_attention_rows_scalar;
      std::vector<float> scratch(size_t(avx512 ? cpu::encoder_attention_scratch_floats_avx512(sh.n, sh.head_dim)
                                               : cpu::encoder_attention_scratch_floats_scalar(sh.n, sh.head_dim)));
      std::vector<float> whole(q.size(), 0.0f), pieces(q.size(), 0.0f);
      for (int64_t h = 0; h < sh.n_head; ++h) {
        cpu::EncoderAttention a{q.data(), k.data(), v.data(), whole.data(), stride, sh.n, sh.head_dim, scale, kv_stride,
                                sh.n_group, sh.window};
        rows(a, h, 0, sh.n, scratch.data());  // transposing the keys itself
        std::vector<float> kt(size_t(sh.head_dim * cpu::encoder_attention_kt_width(sh.n)), NAN);
        cpu::encoder_attention_transpose_keys(a, h / sh.n_group, kt.data());
        a.kt = kt.data();
        a.out = pieces.data();
        for (int64_t b = 0; b < sh.n;) {  // ranges of awkward sizes
          const int64_t e = std::min(sh.n, b + 1 + int64_t(rng() % 23));
          rows(a, h, b, e, scratch.data());
          b = e;
        }
      }
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(whole[i], want[i], 2e-5) << "n " << sh.n << " window " << sh.window << " avx512 " << avx512;
        ASSERT_EQ(whole[i], pieces[i]) << "n " << sh.n << " window " << sh.window << " avx512 " << avx512;
      }
    }
  }
}

TEST(GeluErf, EveryVersionMatchesTheReference) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.0037f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 40.0f, -40.0f}) x.push_back(v);
  std::vector<float> want = x;
  ref::gelu_erf(want.data(), int64_t(want.size()));
  for (bool avx512 : {false, true}) {
    if (avx512 && cpu::best_supported_isa() != cpu::Isa::Avx512Vnni) continue;
    for (int64_t n : {int64_t(x.size()), int64_t(1), int64_t(15), int64_t(17)}) {  // whole vectors and tails
      std::vector<float> got(x.begin(), x.begin() + n);
      avx512 ? cpu::gelu_erf_avx512(got.data(), n) : cpu::gelu_erf_scalar(got.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[size_t(i)], want[size_t(i)], 4e-7f * std::max(1.0f, std::fabs(x[size_t(i)]))) << x[size_t(i)];
    }
  }
  // The scalar and vector versions give the same bits.
  if (cpu::best_supported_isa() == cpu::Isa::Avx512Vnni) {
    std::vector<float> a = x, b = x;
    cpu::gelu_erf_scalar(a.data(), int64_t(a.size()));
    cpu::gelu_erf_avx512(b.data(), int64_t(b.size()));
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << x[i];
  }
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(EncoderLayerNorm, EveryVersionMatchesTheReference) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  for (int64_t n : {1, 15, 16, 17, 384, 1000}) {
    const int64_t rows = 3;
    std::vector<float> x(static_cast<size_t>(rows * n)), y(x.size()), yb(static_cast<size_t>(n)), w(yb.size()), b(yb.size());
    for (auto* v : {&x, &y, &yb, &w, &b})
      for (float& e : *v) e = normal(rng);
    std::vector<float> want = x;
    for (size_t i = 0; i < want.size(); ++i) want[i] += y[i] + yb[i % size_t(n)];
    ref::layer_norm(want.data(), w.data(), b.data(), rows, n, 1e-12f, want.data());
    for (bool avx512 : {false, true}) {
      if (avx512 && cpu::best_supported_isa() != cpu::Isa::Avx512Vnni) continue;
      std::vector<float> got = x, biased = y;
      avx512 ? cpu::add_layer_norm_avx512(got.data(), y.data(), yb.data(), w.data(), b.data(), rows, n, 1e-12f)
             : cpu::add_layer_norm_scalar(got.data(), y.data(), yb.data(), w.data(), b.data(), rows, n, 1e-12f);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, std::fabs(want[i]))) << n;
      avx512 ? cpu::add_bias_rows_avx512(biased.data(), yb.data(), rows, n) : cpu::add_bias_rows_scalar(biased.data(), yb.data(), rows, n);
      for (size_t i = 0; i < biased.size(); ++i) ASSERT_EQ(biased[i], y[i] + yb[i % size_t(n)]);
    }
  }
}

}  // namespace
}  // namespace ridge
