#include "plan/model_catalog.h"

#include <algorithm>
#include <cctype>

namespace ridge::plan {
namespace {

// One row per model: the numbers of its Hugging Face config.json.
struct CatalogEntry {
  const char* name;
  const char* arch;
  int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx_train;
  float rope_theta, rms_eps;
  bool tied, qkv_bias;
};

constexpr CatalogEntry kCatalog[] = {
    // name              arch     vocab   H     L   heads kv hd   H'     ctx     theta    eps   tied  bias
    {"llama-3-8b",       "llama", 128256, 4096, 32, 32, 8, 128, 14336, 8192,   500000, 1e-5f, false, false},
    {"llama-3-70b",      "llama", 128256, 8192, 80, 64, 8, 128, 28672, 8192,   500000, 1e-5f, false, false},
    {"llama-3.1-405b",   "llama", 128256, 16384, 126, 128, 8, 128, 53248, 131072, 500000, 1e-5f, false, false},
    {"llama-3.2-1b",     "llama", 128256, 2048, 16, 32, 8, 64,  8192,  131072, 500000, 1e-5f, true,  false},
    {"tinyllama-1.1b",   "llama", 32000,  2048, 22, 32, 4, 64,  5632,  2048,   10000,  1e-5f, false, false},
    {"smollm2-135m",     "llama", 49152,  576,  30, 9,  3, 64,  1536,  8192,   100000, 1e-5f, true,  false},
    {"qwen2-7b",         "qwen2", 152064, 3584, 28, 28, 4, 128, 18944, 131072, 1e6f,   1e-6f, false, true},
    {"mixtral-8x7b",     "llama", 32000,  4096, 32, 32, 8, 128, 14336, 32768,  1e6f,   1e-5f, false, false},
    {"deepseek-v3",      "deepseek2", 129280, 7168, 61, 128, 128, 192, 18432, 163840, 10000, 1e-6f, false, false},
};

std::string normalized(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += c == '_' ? '-' : char(std::tolower(c));
  return out;
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
  if (s.arch == "qwen2") s.rope_style = RopeStyle::NeoX;
  return s;
}

// The parts a row cannot hold: Llama 3.x long-context RoPE, experts, latent attention.
void add_extras(ModelSpec& s) {
  if (s.name == "llama-3.2-1b" || s.name == "llama-3.1-405b") {
    s.rope_scaling.type = RopeScaling::Type::Llama3;
    s.rope_scaling.factor = s.name == "llama-3.2-1b" ? 32.0f : 8.0f;
    s.rope_scaling.original_context = 8192;
  }
  if (s.name == "mixtral-8x7b") {
    s.n_expert = 8;
    s.n_expert_used = 2;
    s.n_ff_expert = 14336;
  }
  if (s.name == "deepseek-v3") {
    // 3 dense layers, then 58 MoE layers of 256 routed experts (8 per token) + 1 shared expert.
    s.n_expert = 256;
    s.n_expert_used = 8;
    s.n_shared_expert = 1;
    s.n_ff_expert = 2048;
    s.n_layer_dense_lead = 3;
    // MLA: a 512-wide KV latent + a 64-wide shared RoPE key per token and layer.
    s.kv_lora_rank = 512;
    s.q_lora_rank = 1536;
    s.qk_rope_head_dim = 64;
    s.qk_nope_head_dim = 128;
    s.v_head_dim = 128;
    s.rope_dim = 64;
  }
}

}  // namespace

std::optional<ModelSpec> named_model_spec(std::string_view name) {
  const std::string key = normalized(name);
  for (const auto& e : kCatalog) {
    if (key != e.name) continue;
    ModelSpec s = spec_from_entry(e);
    add_extras(s);
    return s;
  }
  return std::nullopt;
}

std::vector<std::string> named_model_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.push_back(e.name);
  return names;
}

}  // namespace ridge::plan
