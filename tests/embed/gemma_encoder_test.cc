// The bidirectional Gemma encoder against a naive double-precision Gemma written here from
// transformers' definition, on small random models of awkward shapes (GQA, head_dim != n_embd /
// n_head, sliding and full layers, windows shorter than the texts); each text alone and packed
// beside others, bit for bit; bad ids and lengths refused.
#include "embed/gemma_encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "random_weights.h"

#include "core/error.h"
#include "embed/encoder_recode.h"

namespace ridge {
namespace {

struct TinyGemma : testing::RandomWeights {
  GemmaEncoderModel model;

  // Norm weights are held as 1 + w (gemma_model.h): random around 1.
  TinyGemma(int64_t n_embd, int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t n_ff, int64_t window,
            int64_t n_positions = 160) {
    std::mt19937 rng(7);
    buffers.reserve(128);
    GemmaEncoderSpec& s = model.spec;
    s.n_vocab = 50, s.n_embd = n_embd, s.n_head = n_head, s.n_head_kv = n_head_kv, s.head_dim = head_dim;
    s.n_layer = 3, s.n_ff = n_ff, s.n_positions = n_positions, s.sliding_window = window;
    s.sliding = {true, false, true};
    s.rope_theta = 1e6f, s.rope_theta_local = 1e4f, s.norm_eps = 1e-6f,
    s.attention_scale = 1.0f / std::sqrt(float(head_dim));
    GemmaWeights& w = model.weights;
    w.token_embd = tensor(s.n_vocab, n_embd, rng, 0.5f);
    w.output_norm = tensor(1, n_embd, rng, 0.2f, 1.0f);
    w.layers.resize(size_t(s.n_layer));
    const float ws = 1.0f / std::sqrt(float(n_embd));
    for (GemmaLayerWeights& l : w.layers) {
      l.attn_norm = tensor(1, n_embd, rng, 0.2f, 1.0f);
      l.wq = tensor(s.q_dim(), n_embd, rng, ws), l.wk = tensor(s.kv_dim(), n_embd, rng, ws),
      l.wv = tensor(s.kv_dim(), n_embd, rng, ws);
      l.q_norm = tensor(1, head_dim, rng, 0.2f, 1.0f), l.k_norm = tensor(1, head_dim, rng, 0.2f, 1.0f);
      l.wo = tensor(n_embd, s.q_dim(), rng, 1.0f / std::sqrt(float(s.q_dim())));
      l.post_attn_norm = tensor(1, n_embd, rng, 0.2f, 1.0f);
      l.ffn_norm = tensor(1, n_embd, rng, 0.2f, 1.0f);
      l.w_gate = tensor(n_ff, n_embd, rng, ws), l.w_up = tensor(n_ff, n_embd, rng, ws);
      l.w_down = tensor(n_embd, n_ff, rng, 1.0f / std::sqrt(float(n_ff)));
      l.post_ffn_norm = tensor(1, n_embd, rng, 0.2f, 1.0f);
    }
  }
};

using Rows = std::vector<std::vector<double>>;
const float* f(const WeightRef& w) { return static_cast<const float*>(w.data); }

Rows linear(const Rows& x, const WeightRef& w) {
  Rows y(x.size(), std::vector<double>(size_t(w.rows)));
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      double acc = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) acc += double(f(w)[r * w.cols + c]) * x[t][size_t(c)];
      y[t][size_t(r)] = acc;
    }
  return y;
}

// RMSNorm of each group of `width` values (a row, or a head of one).
void rms(Rows& x, const WeightRef& w, int64_t width, double eps) {
  for (auto& row : x)
    for (size_t g = 0; g < row.size(); g += size_t(width)) {
      double ss = 0.0;
      for (int64_t i = 0; i < width; ++i) ss += row[g + size_t(i)] * row[g + size_t(i)];
      const double scale = 1.0 / std::sqrt(ss / double(width) + eps);
      for (int64_t i = 0; i < width; ++i) row[g + size_t(i)] *= scale * f(w)[i];
    }
}

void rope(Rows& x, int64_t head_dim, double base) {
  const int64_t half = head_dim / 2;
  for (size_t p = 0; p < x.size(); ++p)
    for (size_t h = 0; h < x[p].size(); h += size_t(head_dim))
      for (int64_t i = 0; i < half; ++i) {
        const double angle = double(p) * std::pow(base, -2.0 * double(i) / double(head_dim));
        double& a = x[p][h + size_t(i)];
        double& b = x[p][h + size_t(i + half)];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(angle) - b0 * std::sin(angle);
        b = b0 * std::cos(angle) + a0 * std::sin(angle);
      }
}

// Gemma3TextModel with bidirectional attention, from its definition, one text.
Rows naive_gemma(const GemmaEncoderModel& m, const std::vector<int32_t>& ids) {
  const GemmaEncoderSpec& s = m.spec;
  const auto n = ids.size();
  Rows x(n, std::vector<double>(size_t(s.n_embd)));
  const double scale = float(std::sqrt(double(s.n_embd)));  // a tensor of the table's type (f32)
  for (size_t t = 0; t < n; ++t)
    for (int64_t d = 0; d < s.n_embd; ++d) x[t][size_t(d)] = f(m.weights.token_embd)[ids[t] * s.n_embd + d] * scale;
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const GemmaLayerWeights& w = m.weights.layers[size_t(l)];
    const bool sliding = s.sliding[size_t(l)];
    Rows h = x;
    rms(h, w.attn_norm, s.n_embd, s.norm_eps);
    Rows q = linear(h, w.wq), k = linear(h, w.wk), v = linear(h, w.wv);
    rms(q, w.q_norm, s.head_dim, s.norm_eps);
    rms(k, w.k_norm, s.head_dim, s.norm_eps);
    rope(q, s.head_dim, sliding ? s.rope_theta_local : s.rope_theta);
    rope(k, s.head_dim, sliding ? s.rope_theta_local : s.rope_theta);
    Rows a(n, std::vector<double>(size_t(s.q_dim())));
    for (int64_t hd = 0; hd < s.n_head; ++hd) {
      const size_t qo = size_t(hd * s.head_dim), ko = size_t(hd / (s.n_head / s.n_head_kv) * s.head_dim);
      for (size_t i = 0; i < n; ++i) {
        std::vector<double> p(n, 0.0);
        double max = -1e300, sum = 0.0;
        const auto sees = [&](size_t j) { return !sliding || std::llabs(int64_t(i) - int64_t(j)) < s.sliding_window; };
        for (size_t j = 0; j < n; ++j) {
          if (!sees(j)) continue;
          double dot = 0.0;
          for (int64_t c = 0; c < s.head_dim; ++c) dot += q[i][qo + size_t(c)] * k[j][ko + size_t(c)];
          max = std::max(max, p[j] = dot * s.attention_scale);
        }
        for (size_t j = 0; j < n; ++j) sum += p[j] = sees(j) ? std::exp(p[j] - max) : 0.0;
        for (int64_t c = 0; c < s.head_dim; ++c) {
          double acc = 0.0;
          for (size_t j = 0; j < n; ++j) acc += p[j] / sum * v[j][ko + size_t(c)];
          a[i][qo + size_t(c)] = acc;
        }
      }
    }
    Rows o = linear(a, w.wo);
    rms(o, w.post_attn_norm, s.n_embd, s.norm_eps);
    for (size_t t = 0; t < n; ++t)
      for (int64_t d = 0; d < s.n_embd; ++d) x[t][size_t(d)] += o[t][size_t(d)];
    h = x;
    rms(h, w.ffn_norm, s.n_embd, s.norm_eps);
    Rows g = linear(h, w.w_gate);
    const Rows u = linear(h, w.w_up);
    for (size_t t = 0; t < n; ++t)
      for (size_t i = 0; i < g[t].size(); ++i) {
        const double e = g[t][i];
        g[t][i] = 0.5 * e * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (e + 0.044715 * e * e * e))) * u[t][i];
      }
    Rows y = linear(g, w.w_down);
    rms(y, w.post_ffn_norm, s.n_embd, s.norm_eps);
    for (size_t t = 0; t < n; ++t)
      for (int64_t d = 0; d < s.n_embd; ++d) x[t][size_t(d)] += y[t][size_t(d)];
  }
  rms(x, m.weights.output_norm, s.n_embd, s.norm_eps);
  return x;
}

std::vector<int32_t> random_ids(std::mt19937& rng, int64_t n) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = int32_t(rng() % 50u);
  return ids;
}

void expect_matches_naive(const TinyGemma& g, std::initializer_list<int64_t> lengths, double tolerance) {
  GemmaEncoder encoder(g.model, 2);
  std::mt19937 rng(3);
  EncoderBatch batch;
  std::vector<std::vector<int32_t>> texts;
  for (int64_t len : lengths) batch.add(texts.emplace_back(random_ids(rng, len)));
  std::vector<float> hidden;
  encoder.forward(batch, hidden);
  const int64_t n_embd = g.model.spec.n_embd;
  ASSERT_EQ(hidden.size(), batch.tokens.size() * size_t(n_embd));
  for (size_t i = 0; i < texts.size(); ++i) {
    const Rows want = naive_gemma(g.model, texts[i]);
    for (size_t t = 0; t < want.size(); ++t)
      for (size_t d = 0; d < want[t].size(); ++d)
        ASSERT_NEAR(hidden[size_t(batch.begin[i] + int64_t(t)) * size_t(n_embd) + d], want[t][d], tolerance)
            << "text " << i << " token " << t << " dim " << d;
  }
}

TEST(GemmaEncoder, MatchesNaiveGemmaOnAwkwardShapes) {
  // 3 query heads on 1 KV head of head_dim 10 over n_embd 24; a window of 5 (each side 4).
  expect_matches_naive(TinyGemma(24, 3, 1, 10, 40, 5), {1, 7, 17, 70, 3}, 2e-4);
  // 4 heads on 2 KV heads, wider heads than n_embd / n_head; a window longer than the texts.
  expect_matches_naive(TinyGemma(32, 4, 2, 16, 48, 300), {2, 40, 9}, 2e-4);
}

TEST(GemmaEncoder, ATextsStatesDoNotDependOnItsBatch) {
  TinyGemma g(24, 3, 1, 10, 40, 9);
  GemmaEncoder encoder(g.model, 2);
  std::mt19937 rng(5);
  const std::vector<int32_t> text = random_ids(rng, 150);  // several query chunks of 64
  EncoderBatch alone;
  alone.add(text);
  std::vector<float> a, b;
  encoder.forward(alone, a);
  EncoderBatch packed;
  packed.add(random_ids(rng, 31));
  packed.add(text);
  packed.add(random_ids(rng, 3));
  encoder.forward(packed, b);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[size_t(packed.begin[1]) * 24 + i]) << i;
  GemmaEncoder one_thread(g.model, 1);  // nor on the thread count
  one_thread.forward(alone, b);
  ASSERT_EQ(a, b);
}

TEST(GemmaEncoder, RecodedMatricesStayClose) {
  for (DType to : {DType::BF16, DType::Q8_0}) {
    TinyGemma g(64, 2, 1, 32, 96, 5);
    GemmaEncoder f32(g.model, 2);
    std::mt19937 rng(9);
    EncoderBatch batch;
    batch.add(random_ids(rng, 20));
    std::vector<float> want, got;
    f32.forward(batch, want);
    std::vector<WeightRef*> matrices;
    for (GemmaLayerWeights& l : g.model.weights.layers)
      for (WeightRef* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) matrices.push_back(w);
    g.model.storage = recode_matrices(matrices, to, g.model.storage);
    EXPECT_EQ(g.model.weights.layers[0].wq.type, to);
    GemmaEncoder recoded(g.model, 2);
    recoded.forward(batch, got);
    for (size_t t = 0; t < 20; ++t) {
      double dot = 0, na = 0, nb = 0;
      for (size_t d = 0; d < 64; ++d) {
        const double x = want[t * 64 + d], y = got[t * 64 + d];
        dot += x * y, na += x * x, nb += y * y;
      }
      EXPECT_GT(dot / std::sqrt(na * nb), 0.999) << dtype_name(to) << " token " << t;
    }
  }
}

TEST(GemmaEncoder, RefusesBadIdsTypesAndLengths) {
  TinyGemma g(24, 3, 1, 10, 40, 5, 40);
  GemmaEncoder encoder(g.model, 1);
  std::vector<float> hidden;
  EncoderBatch bad_id;
  bad_id.add({1, 50});
  EXPECT_THROW(encoder.forward(bad_id, hidden), Error);
  EncoderBatch negative;
  negative.add({-1});
  EXPECT_THROW(encoder.forward(negative, hidden), Error);
  EncoderBatch typed;
  const std::vector<int32_t> types{0, 1};
  typed.add({1, 2}, &types);
  EXPECT_THROW(encoder.forward(typed, hidden), Error);
  EncoderBatch too_long;
  too_long.add(std::vector<int32_t>(41, 1));
  EXPECT_THROW(encoder.forward(too_long, hidden), Error);
  EncoderBatch empty;
  encoder.forward(empty, hidden);
  EXPECT_TRUE(hidden.empty());
}

}  // namespace
}  // namespace ridge
