// LoRA adapters in the forward pass: after a target matmul, each adapter's tokens get their
// low-rank addend (kernels/cpu/low_rank.h). The addend's input is the matmul's, normalised or
// activated as its prologue would, computed here for those tokens only.
#include <algorithm>

#include "core/error.h"
#include "kernels/cpu/gelu_table.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/norm.h"
#include "model/forward.h"
#include "kernels/cpu/low_rank.h"

namespace ridge {

void ModelForward::group_lora_tokens(const TokenBatch& batch) {
  lora_groups_.clear();
  lora_prologue_key_ = {};  // a new batch: nothing computed yet
  for (int64_t r = 0, t = 0; r < int64_t(batch.runs.size()); t += batch.runs[size_t(r)].n_tokens, ++r) {
    const lora::LoraAdapter* a = batch.runs[size_t(r)].adapter;
    if (!a) continue;
    if (model_.shard) fail("LoRA adapters are not supported on a model split across ranks yet");
    auto g = std::find_if(lora_groups_.begin(), lora_groups_.end(), [&](const LoraGroup& x) { return x.adapter == a; });
    if (g == lora_groups_.end()) g = lora_groups_.insert(lora_groups_.end(), LoraGroup{a, {}});
    for (int64_t i = 0; i < batch.runs[size_t(r)].n_tokens; ++i) g->tokens.push_back(t + i);
  }
}

void ModelForward::add_lora(lora::Target target, const float* x, int64_t d_in, const cpu::MatmulPrologue& prologue, float* y,
                            int64_t d_out) {
  // One job per adapter with this matrix: its tokens' rows in x and y, its rows of t = x A^T.
  lora_jobs_.clear();
  lora_x_rows_.clear();
  lora_y_rows_.clear();
  int64_t t_floats = 0;
  for (const LoraGroup& g : lora_groups_) {
    const lora::LoraMatrix* m = g.adapter->matrix(layer_, target);
    if (!m) continue;
    lora_jobs_.push_back({m, int64_t(lora_x_rows_.size()), int64_t(g.tokens.size()), t_floats});
    t_floats += int64_t(g.tokens.size()) * m->rank;
    for (int64_t t : g.tokens) {
      lora_x_rows_.push_back(x + t * d_in);
      lora_y_rows_.push_back(y + t * d_out);
    }
  }
  if (lora_jobs_.empty()) return;
  if (prologue.kind != cpu::MatmulPrologue::Kind::None) {
    // The prologue's output (normed or activated input) for the adapted rows only, kept while the
    // next target reads the same input (Q, K, V; gate, up).
    const PrologueKey key{x, prologue.kind, prologue.norm_weight, prologue.up, d_in, layer_};
    const auto n_tokens = int64_t(batch_->tokens.size());
    if (!(key == lora_prologue_key_)) {
      lora_prologue_key_ = key;
      lora_x_.resize(size_t(n_tokens * d_in));
      lora_x_done_.assign(size_t(n_tokens), 0);
    }
    for (size_t k = 0; k < lora_x_rows_.size(); ++k) {
      const float* in = lora_x_rows_[k];
      const int64_t t = (in - x) / d_in;
      float* out = lora_x_.data() + t * d_in;
      if (!lora_x_done_[size_t(t)]) {
        if (prologue.kind == cpu::MatmulPrologue::Kind::RmsNorm) {
          ref::rms_norm(in, prologue.norm_weight, 1, d_in, prologue.eps, out);
        } else {  // SwiGlu, GeGlu: x is the gate, prologue.up the same token's up
          std::copy_n(in, d_in, out);
          activate(out, prologue.up + t * d_in, d_in);
        }
        lora_x_done_[size_t(t)] = 1;
      }
      lora_x_rows_[k] = out;
    }
  }
  lora_t_.resize(size_t(t_floats));
  const auto low_rank = [](const lora::LoraMatrix& m) {
    return cpu::LowRank{m.rank, m.d_in, m.d_out, m.a_t.data(), m.b_t.data(), m.scale,
                        m.a_t16.empty() ? nullptr : m.a_t16.data(), m.b_t16.empty() ? nullptr : m.b_t16.data()};
  };
  // Down: a job's rows in chunks of four, so A is read once per four rows (and threads share out chunks).
  constexpr int64_t kRowsPerChunk = 4;
  lora_items_.clear();
  for (size_t j = 0; j < lora_jobs_.size(); ++j)
    for (int64_t k = 0; k < lora_jobs_[j].n; k += kRowsPerChunk) lora_items_.push_back({int64_t(j), k});
  pool_->parallel_for(int64_t(lora_items_.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const LoraJob& job = lora_jobs_[size_t(lora_items_[size_t(i)].first)];
      const int64_t k = lora_items_[size_t(i)].second, n = std::min(kRowsPerChunk, job.n - k);
      cpu::low_rank_down(low_rank(*job.m), lora_x_rows_.data() + job.first + k, n, lora_t_.data() + job.t_first + k * job.m->rank);
    }
  });
  // Up: a job's output columns in ranges, so B is read once for all its rows.
  constexpr int64_t kColumns = 256;
  lora_items_.clear();
  for (size_t j = 0; j < lora_jobs_.size(); ++j)
    for (int64_t o = 0; o < d_out; o += kColumns) lora_items_.push_back({int64_t(j), o});
  pool_->parallel_for(int64_t(lora_items_.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const LoraJob& job = lora_jobs_[size_t(lora_items_[size_t(i)].first)];
      const int64_t o = lora_items_[size_t(i)].second;
      cpu::low_rank_up(low_rank(*job.m), lora_t_.data() + job.t_first, job.n, lora_y_rows_.data() + job.first, o,
                       std::min(d_out, o + kColumns));
    }
  });
}

}  // namespace ridge
