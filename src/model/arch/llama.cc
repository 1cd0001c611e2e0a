// Llama, Mistral and Qwen2: pre-norm GQA attention with RoPE, SwiGLU. Mixtral is "llama" with
// experts: a softmax router whose top-k weights are renormalised.
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"

namespace ridge {
namespace {

class LlamaFamily final : public StandardDecoder {
 public:
  explicit LlamaFamily(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    if (name_ == "qwen2") s.rope_style = RopeStyle::NeoX;
    read_expert_hparams(h, s);
    s.expert_weights_norm = true;
  }


 private:
  std::string_view name_;
};

}  // namespace

std::unique_ptr<Architecture> make_llama_family(std::string_view name) { return std::make_unique<LlamaFamily>(name); }

}  // namespace ridge
