#include "quant/awq.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "quant/block_quantize.h"
#include "quant/importance_matrix.h"

namespace ridge::quant {
namespace {

constexpr int kGrid = 20;             // α = 0, 0.05, ..., 0.95 (AWQ's grid)
constexpr int64_t kSampleRows = 96;   // rows of each matrix the search rounds

struct Member {
  const gguf::TensorInfo* t;
  DType type;
};

std::vector<float> row_f32(const gguf::TensorInfo& t, int64_t r) {
  std::vector<float> out(static_cast<size_t>(t.shape[0]));
  ref::dequantize_row(t.type, t.data + r * dtype_row_bytes(t.type, t.shape[0]), out.data(), t.shape[0]);
  return out;
}

// Σ over sampled rows of Σ_c m2_c (Q(w s)_c / s_c - w_c)², quantizing with the importance of the
// scaled input (m2 / s²), as the artifact will be.
double group_error(const std::vector<Member>& members, const std::vector<float>& m2, const std::vector<float>& s,
                   const std::vector<std::vector<std::vector<float>>>& rows, bool weighted) {
  const auto n = int64_t(m2.size());
  std::vector<float> importance(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) importance[size_t(c)] = m2[size_t(c)] / (s[size_t(c)] * s[size_t(c)]);
  double err = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    std::vector<float> scaled(static_cast<size_t>(n)), back(static_cast<size_t>(n));
    std::vector<uint8_t> bytes(size_t(dtype_row_bytes(members[m].type, n)));
    for (const auto& w : rows[m]) {
      for (int64_t c = 0; c < n; ++c) scaled[size_t(c)] = w[size_t(c)] * s[size_t(c)];
      quantize_rows(members[m].type, scaled.data(), bytes.data(), 1, n, weighted ? importance.data() : nullptr);
      ref::dequantize_row(members[m].type, bytes.data(), back.data(), n);
      for (int64_t c = 0; c < n; ++c) {
        const double e = double(back[size_t(c)]) / s[size_t(c)] - w[size_t(c)];
        err += double(m2[size_t(c)]) * e * e;
      }
    }
  }
  return err;
}

// s = m^α, normalised so that max · min = 1 (AWQ's normalisation keeps the scales near 1).
std::vector<float> scales_at(const std::vector<float>& m2, float alpha) {
  float top = 0;
  for (float v : m2) top = std::max(top, v);
  std::vector<float> s(m2.size());
  float hi = 0, lo = INFINITY;
  for (size_t c = 0; c < m2.size(); ++c) {
    const float m = std::sqrt(std::max(m2[c], top * 1e-12f + 1e-30f));
    s[c] = std::pow(m, alpha);
    hi = std::max(hi, s[c]), lo = std::min(lo, s[c]);
  }
  const float norm = std::sqrt(hi * lo);
  for (float& v : s) v /= norm;
  return s;
}

// The best α for a group whose members all read an input with column second moments m2.
AwqGroup search(const std::string& name, const std::vector<Member>& members, const std::vector<float>& m2,
                std::vector<float>& best_s, bool weighted, int threads) {
  std::vector<std::vector<std::vector<float>>> rows(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    const int64_t n_rows = members[m].t->n_elements / members[m].t->shape[0];
    const int64_t step = std::max<int64_t>(1, n_rows / kSampleRows);
    for (int64_t r = 0; r < n_rows; r += step) rows[m].push_back(row_f32(*members[m].t, r));
  }
  std::vector<double> err(kGrid);
#pragma omp parallel for num_threads(threads) schedule(dynamic)
  for (int i = 0; i < kGrid; ++i) err[size_t(i)] = group_error(members, m2, scales_at(m2, float(i) / kGrid), rows, weighted);
  const int best = int(std::min_element(err.begin(), err.end()) - err.begin());
  best_s = scales_at(m2, float(best) / kGrid);
  return {name, float(best) / kGrid, err[0], err[size_t(best)]};
}

}  // namespace

void apply_awq(const AwqTransform& t, int64_t row, float* x, int64_t n) {
  if (!t.col_scale.empty())
    for (int64_t c = 0; c < n; ++c) x[c] *= t.col_scale[size_t(c)];
  if (!t.row_div.empty()) {
    const float d = t.row_div[size_t(row)];
    for (int64_t c = 0; c < n; ++c) x[c] /= d;
  }
}

AwqPlan plan_awq(const gguf::GgufFile& in, const ImportanceMatrix& imatrix, const std::map<std::string, DType>& types,
                 bool weighted_rounding, int threads) {
  AwqPlan plan;
  for (int64_t layer = 0;; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    if (!in.find_tensor(p + "attn_norm.weight") && !in.find_tensor(p + "ffn_down.weight")) break;
    // A group: the matrices that read one input, and where that input's divisor goes.
    const auto group = [&](const std::string& name, const std::vector<std::string>& weights, const std::string& fold_norm,
                           const std::string& fold_rows) {
      std::vector<Member> members;
      for (const auto& w : weights) {
        const gguf::TensorInfo* t = in.find_tensor(p + w + ".weight");
        const auto type = types.find(p + w + ".weight");
        if (!t || t->shape.size() != 2 || type == types.end() || dtype_info(type->second).block_size == 1) return;
        if (!members.empty() && t->shape[0] != members[0].t->shape[0]) return;
        members.push_back({t, type->second});
      }
      const std::vector<float>* m2 = imatrix.find(p + weights[0] + ".weight");
      if (!m2 || int64_t(m2->size()) != members[0].t->shape[0]) return;
      const gguf::TensorInfo* norm = fold_norm.empty() ? nullptr : in.find_tensor(p + fold_norm + ".weight");
      const gguf::TensorInfo* rows = fold_rows.empty() ? nullptr : in.find_tensor(p + fold_rows + ".weight");
      if (norm && (norm->type != DType::F32 || norm->n_elements != members[0].t->shape[0])) return;
      // The divisor must land in the artifact: rows of a matrix that is requantized (not copied as it was).
      if (!norm && (!rows || rows->shape.size() != 2 || rows->shape[1] != members[0].t->shape[0] || !types.count(rows->name)))
        return;
      std::vector<float> s;
      AwqGroup g = search(p + name, members, *m2, s, weighted_rounding, threads);
      if (g.alpha == 0.0f) return plan.groups.push_back(g);  // nothing to move
      for (const auto& w : weights) plan.tensors[p + w + ".weight"].col_scale = s;
      if (norm) {
        std::vector<float> inv(s.size());
        for (size_t c = 0; c < s.size(); ++c) inv[c] = 1.0f / s[c];
        plan.tensors[norm->name].col_scale = inv;
      } else {
        plan.tensors[rows->name].row_div = s;
      }
      plan.groups.push_back(g);
    };
    group("attn_qkv", {"attn_q", "attn_k", "attn_v"}, "attn_norm", "");
    group("ffn_gate_up", {"ffn_gate", "ffn_up"}, "ffn_norm", "");
    group("ffn_down", {"ffn_down"}, "", "ffn_up");
  }
  return plan;
}

}  // namespace ridge::quant
