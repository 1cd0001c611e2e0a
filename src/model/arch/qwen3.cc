// Qwen 3 and Qwen 3 MoE: Llama's layer with QK-norm (each head's query and key RMS-normalised
// before RoPE) and NeoX RoPE; the MoE variant routes every layer's FFN (softmax, top-k renormalised).
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"

namespace ridge {
namespace {

class Qwen3 final : public StandardDecoder {
 public:
  explicit Qwen3(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    s.rope_style = RopeStyle::NeoX;
    s.qk_norm = QkNorm::PerHead;
    read_expert_hparams(h, s);
    s.expert_weights_norm = true;
  }


 private:
  std::string_view name_;
};

}  // namespace

std::unique_ptr<Architecture> make_qwen3(std::string_view name) { return std::make_unique<Qwen3>(name); }

}  // namespace ridge
