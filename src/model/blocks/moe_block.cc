// The mixture-of-experts FFN block. The router picks each token's top-k experts; the batch's tokens
// are then grouped by expert, so each chosen expert's matrices are read once per step for all the
// tokens routed to it (a grouped GEMM of M = its token count), and an expert no token chose is
// not read at all. Each token's expert outputs are summed in expert order, which does not depend
// on what else is in the batch.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/ref/activation.h"
#include "kernels/ref/norm.h"
#include "model/forward.h"

namespace ridge {
namespace {

cpu::MatmulJob job(const WeightRef& w, float* y) { return {as_matrix(w), y}; }
const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Group-limited routing (DeepSeek): each group scores the sum of its two best selection scores,
// and the experts outside the n_group_used best groups (ties to the lower group) drop out.
void keep_best_groups(const ModelSpec& s, std::vector<float>& selection) {
  const int64_t groups = s.n_expert_groups, per = s.n_expert / groups;
  std::vector<float> score(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    const float* x = selection.data() + g * per;
    float best = -INFINITY, second = -INFINITY;
    for (int64_t e = 0; e < per; ++e) {
      if (x[e] > best) second = best, best = x[e];
      else if (x[e] > second) second = x[e];
    }
    score[size_t(g)] = best + second;
  }
  std::vector<int32_t> order(static_cast<size_t>(groups));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return score[size_t(a)] > score[size_t(b)]; });
  for (int64_t i = s.n_group_used; i < groups; ++i)
    std::fill_n(selection.data() + order[size_t(i)] * per, per, -INFINITY);
}

}  // namespace

// chosen_ / chosen_weight_ for each token, then the tokens grouped by expert.
void ModelForward::route(const LayerWeights& w, int64_t n) {
  const ModelSpec& s = spec_;
  const int64_t n_exp = s.n_expert, k = s.n_expert_used;
  router_logits_.resize(size_t(n * n_exp));
  if (n > 0) matmul({job(w.router, router_logits_.data())}, xn_.data(), n);
  chosen_.resize(size_t(n * k));
  chosen_weight_.resize(size_t(n * k));
  std::vector<int32_t> order(static_cast<size_t>(n_exp));
  std::vector<float> selection(static_cast<size_t>(n_exp));
  for (int64_t t = 0; t < n; ++t) {
    float* probs = router_logits_.data() + t * n_exp;
    if (s.expert_gating == ExpertGating::Softmax) ref::softmax(probs, 1, n_exp);
    else for (int64_t e = 0; e < n_exp; ++e) probs[e] = sigmoid(probs[e]);
    // The bias (DeepSeek-V3) steers the choice only; the weights are the unbiased probabilities.
    for (int64_t e = 0; e < n_exp; ++e) selection[size_t(e)] = probs[e] + (w.router_bias.present() ? as_f32(w.router_bias)[e] : 0.0f);
    if (s.n_expert_groups > 1) keep_best_groups(s, selection);
    std::iota(order.begin(), order.end(), 0);
    // Ties go to the lower expert id, so the choice is the same wherever the token is batched.
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      return selection[size_t(a)] > selection[size_t(b)] || (selection[size_t(a)] == selection[size_t(b)] && a < b);
    });
    float sum = 0.0f;
    for (int64_t i = 0; i < k; ++i) sum += probs[order[size_t(i)]];
    const float norm = s.expert_weights_norm ? 1.0f / std::max(sum, 6.103515625e-5f) : 1.0f;
    for (int64_t i = 0; i < k; ++i) {
      chosen_[size_t(t * k + i)] = order[size_t(i)];
      chosen_weight_[size_t(t * k + i)] = probs[order[size_t(i)]] * norm * s.expert_weights_scale;
    }
  }
  // Counting sort of the (token, slot) pairs by expert; within an expert, tokens stay in order.
  expert_begin_.assign(size_t(n_exp + 1), 0);
  for (int32_t e : chosen_) ++expert_begin_[size_t(e + 1)];
  for (int64_t e = 0; e < n_exp; ++e) expert_begin_[size_t(e + 1)] += expert_begin_[size_t(e)];
  expert_tokens_.resize(chosen_.size());
  expert_slot_.resize(chosen_.size());
  std::vector<int64_t> fill(expert_begin_.begin(), expert_begin_.end() - 1);
  for (int64_t i = 0; i < int64_t(chosen_.size()); ++i) {
    const int64_t at = fill[size_t(chosen_[size_t(i)])]++;
    expert_tokens_[size_t(at)] = int32_t(i / k);
    expert_slot_[size_t(at)] = int32_t(i);
  }
}

// Every chosen expert over the rows routed to it, as two grouped matmuls (gate and up of all of
// them, then down of all of them): one parallel region per phase whatever the number of experts.
void ModelForward::run_experts(const LayerWeights& w, int64_t l, int64_t n) {
  const ModelSpec& s = spec_;
  const int64_t d = s.n_embd, ff = s.n_ff_expert, rows = expert_begin_.back();
  expert_in_.resize(size_t(rows * d));
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(xn_.data() + expert_tokens_[size_t(i)] * d, d, expert_in_.data() + i * d);
  gate_.resize(size_t(rows * ff));
  up_.resize(gate_.size());
  expert_out_.resize(size_t(rows * d));
  const auto act = s.ffn_activation == FfnActivation::GeGlu ? cpu::MatmulPrologue::Kind::GeGlu
                                                            : cpu::MatmulPrologue::Kind::SwiGlu;
  // Under TpMode::Gather with sliced experts, every expert's activation is put together from all
  // ranks' columns, and each rank computes its rows of every expert's down matrix.
  const bool sliced = gather_mode() && !model_.shard->request.expert_parallel;
  const int64_t ff_full = sliced ? model_.shard->ff_expert.total() : ff;
  const int64_t d_out = sliced ? model_.shard->mine(model_.shard->embd).count : d;
  if (sliced) {
    part_.resize(size_t(rows * d_out));
    gathered_.resize(size_t(rows * ff_full));
  }
  std::vector<cpu::MatmulInput> inputs, activated;
  std::vector<cpu::GroupedMatmulJob> gate_up, down;
  for (int64_t e = 0; e < s.n_expert; ++e) {
    const int64_t begin = expert_begin_[size_t(e)], m = expert_begin_[size_t(e + 1)] - begin;
    if (m == 0) continue;  // an expert no token chose is not read
    moe_stats_.add(l, e, uint64_t(m));
    if (!holds_expert(e)) continue;  // another rank's (expert parallelism)
    const ExpertWeights& ex = w.experts[size_t(e)];
    const auto input = int32_t(inputs.size());
    inputs.push_back({expert_in_.data() + begin * d, m, {}});
    if (sliced) activated.push_back({gathered_.data() + begin * ff_full, m, {}});
    else activated.push_back({gate_.data() + begin * ff, m, {act, nullptr, 0.0f, up_.data() + begin * ff}});
    gate_up.push_back({job(ex.w_gate, gate_.data() + begin * ff), input});
    gate_up.push_back({job(ex.w_up, up_.data() + begin * ff), input});
    float* y = sliced ? part_.data() + begin * d_out : expert_out_.data() + begin * d;
    down.push_back({job(ex.w_down, y), input});
  }
  cpu::matmul_grouped(inputs, gate_up, *pool_, matmul_scratch_);
  if (sliced) {
    activate(gate_.data(), up_.data(), int64_t(gate_.size()));
    tp_.gather_columns(gate_.data(), rows, model_.shard->ff_expert, gathered_.data());
  }
  cpu::matmul_grouped(activated, down, *pool_, matmul_scratch_);
  if (sliced) {
    tp_.gather_columns(part_.data(), rows, model_.shard->embd, expert_out_.data());
  } else if (gather_mode()) {
    // Expert parallelism: each rank's experts are a contiguous run of the rows grouped by expert.
    const Partition& owners = model_.shard->experts;
    std::vector<int64_t> counts;
    for (const Slice& p : owners.parts) counts.push_back(expert_begin_[size_t(p.end())] - expert_begin_[size_t(p.begin)]);
    const int64_t first = expert_begin_[size_t(model_.shard->mine(owners).begin)];
    gathered_.resize(size_t(rows * d));
    tp_.gather_rows(expert_out_.data() + first * d, counts, d, gathered_.data());
    expert_out_.swap(gathered_);
  }
}

void ModelForward::run_experts_dispatched(const LayerWeights& w, int64_t l) {
  const ModelSpec& s = spec_;
  const Partition& owners = model_.shard->experts;
  const auto T = owners.parts.size();
  const int64_t d = s.n_embd, ff = s.n_ff_expert, rows = expert_begin_.back();
  // This rank's rows, grouped by expert: each destination's rows are one contiguous run.
  expert_in_.resize(size_t(rows * d));
  std::vector<int32_t> row_expert(static_cast<size_t>(rows));
  // Every rank counts every rank's routing (an all-reduce of n_expert counts), so rank 0's
  // per-expert and per-rank loads cover the whole batch.
  std::vector<float> routed(static_cast<size_t>(s.n_expert));
  for (int64_t e = 0; e < s.n_expert; ++e) routed[size_t(e)] = float(expert_begin_[size_t(e + 1)] - expert_begin_[size_t(e)]);
  tp_.all_reduce_sum(routed.data(), s.n_expert);
  for (int64_t e = 0; e < s.n_expert; ++e) {
    moe_stats_.add(l, e, uint64_t(routed[size_t(e)]));
    for (int64_t i = expert_begin_[size_t(e)]; i < expert_begin_[size_t(e + 1)]; ++i) {
      std::copy_n(xn_.data() + expert_tokens_[size_t(i)] * d, d, expert_in_.data() + i * d);
      row_expert[size_t(i)] = int32_t(e);
    }
  }
  std::vector<int64_t> send_rows(T), recv_rows(T), eight(T, 8), at(T);
  for (size_t r = 0; r < T; ++r) {
    send_rows[r] = expert_begin_[size_t(owners.parts[r].end())] - expert_begin_[size_t(owners.parts[r].begin)];
    at[r] = int64_t(r) * 8;
  }
  tp_.all_to_all(send_rows.data(), eight, at, recv_rows.data(), eight, at);
  // Byte counts and offsets of `width`-byte rows, on the sending and the receiving side.
  auto layout = [&](const std::vector<int64_t>& n_rows, int64_t width, std::vector<int64_t>& bytes,
                    std::vector<int64_t>& offsets) {
    bytes.assign(T, 0);
    offsets.assign(T, 0);
    for (size_t r = 0, o = 0; r < T; o += size_t(bytes[r]), ++r) {
      bytes[r] = n_rows[r] * width;
      offsets[r] = int64_t(o);
    }
  };
  std::vector<int64_t> sb, so, rb, ro;
  int64_t n_recv = 0;
  for (int64_t n : recv_rows) n_recv += n;
  dispatched_expert_.resize(size_t(n_recv));
  layout(send_rows, 4, sb, so);
  layout(recv_rows, 4, rb, ro);
  tp_.all_to_all(row_expert.data(), sb, so, dispatched_expert_.data(), rb, ro);
  dispatched_in_.resize(size_t(n_recv * d));
  layout(send_rows, d * 4, sb, so);
  layout(recv_rows, d * 4, rb, ro);
  tp_.all_to_all(expert_in_.data(), sb, so, dispatched_in_.data(), rb, ro);

  // The received rows grouped by this rank's experts; each expert runs on all of its rows at once.
  const Slice mine = model_.shard->mine(owners);
  std::vector<int64_t> begin(size_t(mine.count + 1), 0), order(static_cast<size_t>(n_recv));
  for (int32_t e : dispatched_expert_) ++begin[size_t(e - mine.begin + 1)];
  for (int64_t e = 0; e < mine.count; ++e) begin[size_t(e + 1)] += begin[size_t(e)];
  std::vector<int64_t> fill(begin.begin(), begin.end() - 1);
  for (int64_t i = 0; i < n_recv; ++i) order[size_t(fill[size_t(dispatched_expert_[size_t(i)] - mine.begin)]++)] = i;
  std::vector<float>& grouped = dispatched_grouped_;
  std::vector<float>& grouped_out = dispatched_grouped_out_;  // members: no allocation per layer
  grouped.resize(size_t(n_recv * d));
  grouped_out.resize(size_t(n_recv * d));
  for (int64_t i = 0; i < n_recv; ++i)
    std::copy_n(dispatched_in_.data() + order[size_t(i)] * d, d, grouped.data() + i * d);
  gate_.resize(size_t(n_recv * ff));
  up_.resize(gate_.size());
  const auto act = s.ffn_activation == FfnActivation::GeGlu ? cpu::MatmulPrologue::Kind::GeGlu
                                                            : cpu::MatmulPrologue::Kind::SwiGlu;
  std::vector<cpu::MatmulInput> inputs, activated;
  std::vector<cpu::GroupedMatmulJob> gate_up, down;
  for (int64_t e = 0; e < mine.count; ++e) {
    const int64_t b = begin[size_t(e)], m = begin[size_t(e + 1)] - b;
    if (m == 0) continue;
    const ExpertWeights& ex = w.experts[size_t(mine.begin + e)];
    const auto input = int32_t(inputs.size());
    inputs.push_back({grouped.data() + b * d, m, {}});
    activated.push_back({gate_.data() + b * ff, m, {act, nullptr, 0.0f, up_.data() + b * ff}});
    gate_up.push_back({job(ex.w_gate, gate_.data() + b * ff), input});
    gate_up.push_back({job(ex.w_up, up_.data() + b * ff), input});
    down.push_back({job(ex.w_down, grouped_out.data() + b * d), input});
  }
  cpu::matmul_grouped(inputs, gate_up, *pool_, matmul_scratch_);
  cpu::matmul_grouped(activated, down, *pool_, matmul_scratch_);
  dispatched_out_.resize(size_t(n_recv * d));
  for (int64_t i = 0; i < n_recv; ++i)
    std::copy_n(grouped_out.data() + i * d, d, dispatched_out_.data() + order[size_t(i)] * d);
  // Back to the ranks the rows came from, in the order they were sent.
  expert_out_.resize(size_t(rows * d));
  tp_.all_to_all(dispatched_out_.data(), rb, ro, expert_out_.data(), sb, so);
}

void ModelForward::moe_ffn(const LayerWeights& w, int64_t l) {
  const ModelSpec& s = spec_;
  const auto n = int64_t(batch_->tokens.size());
  const int64_t d = s.n_embd;
  ref::rms_norm(x_.data(), as_f32(w.ffn_norm), n, d, s.rms_eps, xn_.data());
  route(w, n);
  moe_out_.assign(size_t(n * d), 0.0f);
  if (dp_attention()) run_experts_dispatched(w, l);  // every rank takes part, with tokens or not
  else run_experts(w, l, n);
  if (n == 0) return;
  // Each token's expert outputs, weighted, added in expert order.
  const int64_t rows = expert_begin_.back();
  for (int64_t i = 0; i < rows; ++i) {
    // Reduce mode: only this rank's experts; their sum over ranks is all-reduced below.
    if (reduce_ffn() && !holds_expert(chosen_[size_t(expert_slot_[size_t(i)])])) continue;
    const float weight = chosen_weight_[size_t(expert_slot_[size_t(i)])];
    float* out = moe_out_.data() + expert_tokens_[size_t(i)] * d;
    const float* y = expert_out_.data() + i * d;
    for (int64_t j = 0; j < d; ++j) out[j] += weight * y[j];
  }
  if (w.shared_gate.present()) {
    proj_.resize(size_t(n * d));
    gated_ffn(w.shared_gate, w.shared_up, w.shared_down, nullptr, xn_.data(), n, proj_.data(),
              gather_mode() ? &model_.shard->shared_ff : nullptr);
    std::vector<float> gate(static_cast<size_t>(n), 1.0f);
    if (w.shared_router.present()) {
      matmul({job(w.shared_router, gate.data())}, xn_.data(), n);
      for (float& g : gate) g = sigmoid(g);
    }
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < d; ++j) moe_out_[size_t(t * d + j)] += gate[size_t(t)] * proj_[size_t(t * d + j)];
  }
  add_residual(moe_out_.data(), WeightRef{}, n, reduce_ffn());
}

}  // namespace ridge
