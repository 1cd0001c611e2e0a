// Gemma 3: embeddings scaled by sqrt(n_embd); five sliding-window layers (RoPE base 10000) then one
// global layer (the file's base); QK-norm per head; RMSNorm on each block's output before the
// residual add as well as on its input; GeGLU (GELU, tanh approximation).
#include <cmath>

#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"

namespace ridge {
namespace {

class Gemma3 final : public StandardDecoder {
 public:
  std::string_view name() const override { return "gemma3"; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    s.rope_style = RopeStyle::NeoX;
    s.qk_norm = QkNorm::PerHead;
    s.post_norms = true;
    s.ffn_activation = FfnActivation::GeGlu;
    s.embedding_scale = std::sqrt(float(s.n_embd));
    s.sliding_window = h.get_int("attention.sliding_window").value_or(0);
    if (s.sliding_window > 0) {
      s.swa_pattern = h.get_int("attention.sliding_window_pattern").value_or(6);
      s.rope_theta_swa = float(h.get_double("rope.freq_base_swa").value_or(10000.0));
    }
    s.final_logit_softcap = float(h.get_double("final_logit_softcapping").value_or(0.0));
    // Gemma 3 27B scales scores by its n_embd / n_head, the others by 1 / sqrt(head_dim).
    if (s.n_layer == 62) s.attention_scale = 1.0f / std::sqrt(float(s.n_embd / s.n_head));
  }
};

}  // namespace

std::unique_ptr<Architecture> make_gemma3() { return std::make_unique<Gemma3>(); }

}  // namespace ridge
