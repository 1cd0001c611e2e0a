#include "plan/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ridge::plan {
namespace {

// The parts a row cannot hold (experts, latent attention, long-context RoPE, sliding windows),
// set by one function per model.
using Extras = void (*)(ModelSpec&);

// One row per model: the numbers of its Hugging Face config.json.
struct CatalogEntry {
  const char* name;
  const char* arch;
  int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx_train;
  float rope_theta, rms_eps;
  bool tied, qkv_bias;
  Extras extras = nullptr;
};

void llama3_rope(ModelSpec& s, float factor) {
  s.rope_scaling.type = RopeScaling::Type::Llama3;
  s.rope_scaling.factor = factor;
  s.rope_scaling.original_context = 8192;
}

void experts(ModelSpec& s, int64_t n_expert, int64_t n_used, int64_t n_ff_expert, bool weights_norm) {
  s.n_expert = n_expert;
  s.n_expert_used = n_used;
  s.n_ff_expert = n_ff_expert;
  s.expert_weights_norm = weights_norm;  // norm_topk_prob
}

// DeepSeek's YaRN: factor 40 over a 4096-position base, attention scaled by mscale_all_dim.
void deepseek_yarn(ModelSpec& s, float mscale_all_dim) {
  s.rope_scaling.type = RopeScaling::Type::Yarn;
  s.rope_scaling.factor = 40.0f;
  s.rope_scaling.original_context = 4096;
  s.rope_scaling.yarn_beta_fast = 32.0f;
  s.rope_scaling.yarn_beta_slow = 1.0f;
  s.rope_scaling.yarn_log_multiplier = mscale_all_dim;
}

// MLA: a kv_lora_rank-wide KV latent + a 64-wide shared RoPE key per token and layer.
void deepseek_mla(ModelSpec& s, int64_t q_lora_rank) {
  s.kv_lora_rank = 512;
  s.q_lora_rank = q_lora_rank;
  s.qk_rope_head_dim = 64;
  s.qk_nope_head_dim = 128;
  s.v_head_dim = 128;
  s.rope_dim = 64;
}

void llama_3_2_1b(ModelSpec& s) { llama3_rope(s, 32.0f); }
void llama_3_1_405b(ModelSpec& s) { llama3_rope(s, 8.0f); }
void mixtral_8x7b(ModelSpec& s) { experts(s, 8, 2, 14336, true); }  // softmax over the top 2
void qwen3_30b_a3b(ModelSpec& s) { experts(s, 128, 8, 768, true); }
void olmoe_1b_7b(ModelSpec& s) { experts(s, 64, 8, 1024, false); }

// 60 routed experts (4 per token) and one shared expert four experts wide behind a sigmoid gate.
void qwen1_5_moe_a2_7b(ModelSpec& s) {
  experts(s, 60, 4, 1408, false);
  s.n_shared_expert = 4;
  s.n_ff_shared = 5632;
  s.shared_expert_gate = true;
}

// Five sliding-window layers (512 positions, RoPE base 10000) then one global layer.
void gemma3_270m(ModelSpec& s) {
  s.sliding_window = 512;
  s.swa_pattern = 6;
  s.rope_theta_swa = 10000.0f;
  s.embedding_scale = std::sqrt(float(s.n_embd));
  s.ffn_activation = FfnActivation::GeGlu;
  s.post_norms = true;
}

// 1 dense layer, then 26 MoE layers of 64 routed experts (6 per token, softmax) + 2 shared.
void deepseek_v2_lite(ModelSpec& s) {
  experts(s, 64, 6, 1408, false);
  s.n_shared_expert = 2;
  s.n_layer_dense_lead = 1;
  s.expert_gating = ExpertGating::Softmax;
  s.expert_weights_scale = 1.0f;
  deepseek_mla(s, 0);
  deepseek_yarn(s, 0.707f);
}

// 3 dense layers, then 58 MoE layers of 256 routed experts (8 per token, sigmoid scores with a
// selection bias, renormalised and scaled by 2.5) + 1 shared expert. The router's expert groups
// (8 groups, 4 chosen) are not in ModelSpec.
void deepseek_v3(ModelSpec& s) {
  experts(s, 256, 8, 2048, true);
  s.n_shared_expert = 1;
  s.n_layer_dense_lead = 3;
  s.expert_gating = ExpertGating::Sigmoid;
  s.expert_weights_scale = 2.5f;
  deepseek_mla(s, 1536);
  deepseek_yarn(s, 1.0f);
}

constexpr CatalogEntry kCatalog[] = {
    // name              arch     vocab   H     L   heads kv hd   H'     ctx     theta    eps   tied  bias
    {"llama-3-8b",       "llama", 128256, 4096, 32, 32, 8, 128, 14336, 8192,   500000, 1e-5f, false, false},
    {"llama-3-70b",      "llama", 128256, 8192, 80, 64, 8, 128, 28672, 8192,   500000, 1e-5f, false, false},
    {"llama-3.1-405b",   "llama", 128256, 16384, 126, 128, 8, 128, 53248, 131072, 500000, 1e-5f, false, false, llama_3_1_405b},
    {"llama-3.2-1b",     "llama", 128256, 2048, 16, 32, 8, 64,  8192,  131072, 500000, 1e-5f, true,  false, llama_3_2_1b},
    {"tinyllama-1.1b",   "llama", 32000,  2048, 22, 32, 4, 64,  5632,  2048,   10000,  1e-5f, false, false},
    {"smollm2-135m",     "llama", 49152,  576,  30, 9,  3, 64,  1536,  8192,   100000, 1e-5f, true,  false},
    {"qwen2-7b",         "qwen2", 152064, 3584, 28, 28, 4, 128, 18944, 131072, 1e6f,   1e-6f, false, true},
    {"qwen3-0.6b",       "qwen3", 151936, 1024, 28, 16, 8, 128, 3072,  40960,  1e6f,   1e-6f, true,  false},
    {"qwen3-30b-a3b",    "qwen3moe", 151936, 2048, 48, 32, 4, 128, 6144, 40960, 1e6f,  1e-6f, false, false, qwen3_30b_a3b},
    {"qwen1.5-moe-a2.7b", "qwen2moe", 151936, 2048, 24, 16, 16, 128, 5632, 8192, 1e6f,  1e-6f, false, true, qwen1_5_moe_a2_7b},
    {"gemma3-270m",      "gemma3", 262144, 640, 18, 4,  1, 256, 2048,  32768,  1e6f,   1e-6f, true,  false, gemma3_270m},
    {"olmoe-1b-7b",      "olmoe", 50304,  2048, 16, 16, 16, 128, 1024, 4096,   10000,  1e-5f, false, false, olmoe_1b_7b},
    {"mixtral-8x7b",     "llama", 32000,  4096, 32, 32, 8, 128, 14336, 32768,  1e6f,   1e-5f, false, false, mixtral_8x7b},
    {"deepseek-v2-lite", "deepseek2", 102400, 2048, 27, 16, 16, 192, 10944, 163840, 10000, 1e-6f, false, false, deepseek_v2_lite},
    {"deepseek-v3",      "deepseek2", 129280, 7168, 61, 128, 128, 192, 18432, 163840, 10000, 1e-6f, false, false, deepseek_v3},
};

std::string normalized(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += c == '_' ? '-' : char(std::tolower(c));
  return out;
}

// What every model of an architecture shares: how RoPE pairs dimensions, where QK-norm sits.
void set_arch_traits(ModelSpec& s) {
  const std::string& a = s.arch;
  if (a == "qwen2" || a == "qwen2moe" || a == "qwen3" || a == "qwen3moe" || a == "olmoe" || a == "gemma3")
    s.rope_style = RopeStyle::NeoX;
  if (a == "qwen3" || a == "qwen3moe" || a == "gemma3") s.qk_norm = QkNorm::PerHead;
  if (a == "olmoe") s.qk_norm = QkNorm::Whole;
}

ModelSpec spec_from_entry(const CatalogEntry& e) {
  ModelSpec s;
  s.arch = e.arch;
  s.name = e.name;
  s.n_vocab = e.n_vocab;
  s.n_embd = e.n_embd;
  s.n_layer = e.n_layer;
  s.n_head = e.n_head;
  s.n_head_kv = e.n_head_kv;
  s.head_dim = e.head_dim;
  s.n_ff = e.n_ff;
  s.n_ctx_train = e.n_ctx_train;
  s.rope_theta = e.rope_theta;
  s.rms_eps = e.rms_eps;
  s.rope_dim = e.head_dim;
  s.tied_embeddings = e.tied;
  s.qkv_bias = e.qkv_bias;
  set_arch_traits(s);
  if (e.extras) e.extras(s);
  return s;
}

}  // namespace

std::optional<ModelSpec> named_model_spec(std::string_view name) {
  const std::string key = normalized(name);
  for (const auto& e : kCatalog)
    if (key == e.name) return spec_from_entry(e);
  return std::nullopt;
}

std::vector<std::string> named_model_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.push_back(e.name);
  return names;
}

}  // namespace ridge::plan
