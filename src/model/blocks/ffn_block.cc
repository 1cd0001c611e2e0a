// The dense FFN block (SwiGLU or GeGLU) and the residual add every block ends with.
#include "core/error.h"
#include "kernels/cpu/gelu_table.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/norm.h"
#include "model/forward.h"

namespace ridge {
namespace {

cpu::MatmulJob job(const WeightRef& w, float* y) { return {as_matrix(w), y}; }
const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }

}  // namespace

void ModelForward::gated_ffn(const WeightRef& gate, const WeightRef& up, const WeightRef& down, const WeightRef* norm,
                             const float* x, int64_t n, float* out, const Partition* width, bool lora) {
  const ModelSpec& s = spec_;
  gate_.resize(size_t(n * gate.rows));
  up_.resize(gate_.size());
  // RMSNorm and the activation fused into the activation passes of the matmuls that read them.
  cpu::MatmulPrologue in;
  if (norm) in = {cpu::MatmulPrologue::Kind::RmsNorm, as_f32(*norm), s.rms_eps, nullptr};
  matmul({job(gate, gate_.data()), job(up, up_.data())}, x, n, in);
  lora = lora && !lora_groups_.empty();
  if (lora) {
    add_lora(lora::Target::kGate, x, s.n_embd, in, gate_.data(), gate.rows);
    add_lora(lora::Target::kUp, x, s.n_embd, in, up_.data(), up.rows);
  }
  if (width) {
    // Each rank activates its columns (the bits the fused prologue gives), then all of them
    // together go through this rank's rows of down.
    activate(gate_.data(), up_.data(), int64_t(gate_.size()));
    gather_columns(gate_.data(), n, *width, gathered_);
    output_rows(down, gathered_.data(), n, out);
    return;
  }
  const auto act = s.ffn_activation == FfnActivation::GeGlu ? cpu::MatmulPrologue::Kind::GeGlu
                                                            : cpu::MatmulPrologue::Kind::SwiGlu;
  const cpu::MatmulPrologue activation{act, nullptr, 0.0f, up_.data()};
  matmul({job(down, out)}, gate_.data(), n, activation);
  if (lora) add_lora(lora::Target::kDown, gate_.data(), gate.rows, activation, out, s.n_embd);
}

void ModelForward::activate(float* gate, const float* up, int64_t n) const {
  if (spec_.ffn_activation == FfnActivation::GeGlu) return cpu::geglu_table(gate, up, n);
  cpu::swiglu(gate, up, n);
}

void ModelForward::add_residual(float* out, const WeightRef& post_norm, int64_t n, bool partial) {
  const ModelSpec& s = spec_;
  const int64_t size = n * s.n_embd;
  if (partial) {
    if (!tp_.all_reduce_sum) fail("a tensor-parallel slice needs the other ranks' partial sums");
    tp_.all_reduce_sum(out, size);
  }
  if (post_norm.present()) {
    // The normalised copy goes to xn_ (free between blocks), so `out` stays as it was.
    xn_.resize(size_t(size));
    ref::rms_norm(out, as_f32(post_norm), n, s.n_embd, s.rms_eps, xn_.data());
    out = xn_.data();
  }
  for (int64_t i = 0; i < size; ++i) x_[size_t(i)] += out[i];
}

void ModelForward::dense_ffn(const LayerWeights& w) {
  const auto n = int64_t(batch_->tokens.size());
  if (n == 0) return;  // a data-parallel rank without sequences this step
  proj_.resize(x_.size());
  gated_ffn(w.w_gate, w.w_up, w.w_down, &w.ffn_norm, x_.data(), n, proj_.data(),
            gather_mode() ? &model_.shard->ff : nullptr, /*lora=*/true);
  add_residual(proj_.data(), w.post_ffn_norm, n, reduce_ffn());
}

}  // namespace ridge
