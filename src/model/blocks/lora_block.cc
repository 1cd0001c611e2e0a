// LoRA adapters in the forward pass: after a target matmul, each adapter's tokens get their
// low-rank addend (model/lora/lora_addend.h). The addend's input is the matmul's, normalised or
// activated as its prologue would, computed here for those tokens only.
#include <algorithm>

#include "core/error.h"
#include "kernels/cpu/gelu_table.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/norm.h"
#include "model/forward.h"
#include "model/lora/lora_addend.h"

namespace ridge {

void ModelForward::group_lora_tokens(const TokenBatch& batch) {
  lora_groups_.clear();
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
  for (const LoraGroup& g : lora_groups_) {
    const lora::LoraMatrix* m = g.adapter->matrix(layer_, target);
    if (!m) continue;
    const float* rows = x;
    if (prologue.kind != cpu::MatmulPrologue::Kind::None) {
      // The prologue's output for this group's tokens, at their own row indices.
      lora_x_.resize(std::max(lora_x_.size(), size_t((g.tokens.back() + 1) * d_in)));
      for (int64_t t : g.tokens) {
        const float* in = x + t * d_in;
        float* out = lora_x_.data() + t * d_in;
        switch (prologue.kind) {
          case cpu::MatmulPrologue::Kind::RmsNorm:
            ref::rms_norm(in, prologue.norm_weight, 1, d_in, prologue.eps, out);
            break;
          case cpu::MatmulPrologue::Kind::SwiGlu:
          case cpu::MatmulPrologue::Kind::GeGlu:
            std::copy_n(in, d_in, out);
            activate(out, prologue.up + t * d_in, d_in);
            break;
          case cpu::MatmulPrologue::Kind::None:
            break;
        }
      }
      rows = lora_x_.data();
    }
    lora::add_lora_rows(*m, rows, d_in, g.tokens, y, d_out, *pool_);
  }
}

}  // namespace ridge
