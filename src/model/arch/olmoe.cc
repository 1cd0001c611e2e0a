// OLMoE: Llama-style attention with QK-norm over the whole query and key projections (not per
// head), NeoX RoPE; every FFN a softmax router over the experts, weights not renormalised.
#include "core/error.h"
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"

namespace ridge {
namespace {

class Olmoe final : public StandardDecoder {
 public:
  std::string_view name() const override { return "olmoe"; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    s.rope_style = RopeStyle::NeoX;
    s.qk_norm = QkNorm::Whole;
    read_expert_hparams(h, s);
    if (!s.is_moe()) fail("olmoe needs {}.expert_count", s.arch);
    s.expert_weights_norm = false;
  }
};

}  // namespace

std::unique_ptr<Architecture> make_olmoe() { return std::make_unique<Olmoe>(); }

}  // namespace ridge
