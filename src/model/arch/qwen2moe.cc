// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (biases, NeoX RoPE); every FFN is a
// softmax router over the routed experts (weights not renormalised) plus one shared expert whose
// output is scaled by sigmoid(x . w_gate).
#include "core/error.h"
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"

namespace ridge {
namespace {

class Qwen2Moe final : public StandardDecoder {
 public:
  std::string_view name() const override { return "qwen2moe"; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    s.rope_style = RopeStyle::NeoX;
    read_expert_hparams(h, s);
    if (!s.is_moe()) fail("qwen2moe needs {}.expert_count", s.arch);
    if (s.n_ff_shared == 0) s.n_ff_shared = s.n_ff;
    s.shared_expert_gate = true;
    s.expert_weights_norm = false;
  }
};

}  // namespace

std::unique_ptr<Architecture> make_qwen2moe() { return std::make_unique<Qwen2Moe>(); }

}  // namespace ridge
