#include "model/safetensors/hf_config.h"

#include <array>
#include <fstream>
#include <iterator>
#include <utility>

#include "core/error.h"
#include "model/safetensors/hf_config_families.h"
#include "model/safetensors/hf_json.h"

namespace ridge {
namespace {

using nlohmann::json;
using namespace hf;

// Far past any model's depth; a larger count is a hostile config, refused before anything is sized by it.
constexpr int64_t kMaxLayers = 1 << 16;

// config.json's model_type -> the registered architecture that runs it.
constexpr std::array<std::pair<const char*, const char*>, 11> kModelTypes = {{
    {"llama", "llama"}, {"mistral", "mistral"}, {"mixtral", "llama"}, {"qwen2", "qwen2"}, {"qwen2_moe", "qwen2moe"},
    {"qwen3", "qwen3"}, {"qwen3_moe", "qwen3moe"}, {"olmoe", "olmoe"}, {"gemma3_text", "gemma3"},
    {"deepseek_v2", "deepseek2"}, {"deepseek_v3", "deepseek2"},
}};

std::string arch_of(const std::string& model_type) {
  for (const auto& [type, arch] : kModelTypes)
    if (model_type == type) return arch;
  std::string known;
  for (const auto& [type, arch] : kModelTypes) known += std::string(known.empty() ? "" : ", ") + type;
  fail("config.json: model_type '{}' is not supported (ridge runs {})", model_type, known);
}

// Weights ridge reads as they are stored: plain floats, or the FP8 / NVFP4 layouts of these methods.
void check_quantization(const json& config) {
  if (const json* q = field(config, "quantization_config")) {
    if (!q->is_object()) fail("config.json: 'quantization_config' must be an object");
    const std::string method = string_field(*q, "quant_method", "");
    if (method != "fp8" && method != "compressed-tensors" && method != "modelopt")
      fail("config.json: quantization_config quant_method '{}' is not supported (ridge reads fp8, compressed-tensors "
           "and modelopt FP8 / NVFP4 weights)", method);
    return;
  }
  const std::string dtype = string_field(config, "torch_dtype", string_field(config, "dtype", "float32"));
  if (dtype != "float32" && dtype != "float16" && dtype != "bfloat16")
    fail("config.json: torch_dtype '{}' is not supported (ridge reads float32, float16, bfloat16)", dtype);
}

void read_common_fields(const json& config, HfConfig& c) {
  ModelSpec& s = c.spec;
  s.name = string_field(config, "_name_or_path", s.arch);
  if (s.name.empty()) s.name = s.arch;
  s.n_vocab = int_field(config, "vocab_size");
  s.n_embd = int_field(config, "hidden_size");
  s.n_layer = int_field(config, "num_hidden_layers");
  if (s.n_layer <= 0 || s.n_layer > kMaxLayers) fail("config.json: num_hidden_layers {} is not in 1..{}", s.n_layer, kMaxLayers);
  c.n_layer_stored = s.n_layer;
  s.n_head = int_field(config, "num_attention_heads");
  s.n_head_kv = int_field(config, "num_key_value_heads", s.n_head);
  if (s.n_head <= 0) fail("config.json: num_attention_heads must be positive, got {}", s.n_head);
  s.head_dim = int_field(config, "head_dim", s.n_embd / s.n_head);
  s.rope_dim = s.head_dim;
  s.n_ff = int_field(config, "intermediate_size");
  s.n_ctx_train = int_field(config, "max_position_embeddings", 2048);
  s.rms_eps = float(number_field(config, "rms_norm_eps", 1e-6));
  s.rope_theta = float(number_field(config, "rope_theta", 10000.0));
  s.rope_style = RopeStyle::NeoX;  // rotate_half on unpermuted q/k weights
  s.tied_embeddings = bool_field(config, "tie_word_embeddings", false);
  if (bool_field(config, "mlp_bias", false)) fail("config.json: mlp_bias is not supported");
}

// Llama-style attention: biases (Qwen2's q/k/v only), QK-norm, the window.
void read_attention_fields(const json& config, HfConfig& c) {
  ModelSpec& s = c.spec;
  const std::string& t = c.model_type;
  const std::string act = string_field(config, "hidden_act", "silu");
  if (act != "silu") fail("config.json: hidden_act '{}' is not supported for {} (ridge runs SwiGLU with silu)", act, t);
  s.rope_scaling = rope_scaling(config, t, false);
  if (t == "qwen2" || t == "qwen2_moe") {
    s.qkv_bias = true;
    if (bool_field(config, "use_sliding_window", false))
      fail("config.json: use_sliding_window (Qwen2's window on layers past max_window_layers) is not supported");
  } else if (bool_field(config, "attention_bias", false)) {
    fail("config.json: attention_bias (a bias on o_proj too) is not supported for {}", t);
  }
  if (t == "qwen3" || t == "qwen3_moe") {
    s.qk_norm = QkNorm::PerHead;
    if (bool_field(config, "use_sliding_window", false)) fail("config.json: use_sliding_window is not supported for {}", t);
  }
  if (t == "olmoe") {
    s.qk_norm = QkNorm::Whole;
    if (field(config, "clip_qkv")) fail("config.json: clip_qkv is not supported");
  }
  if (t == "mistral" || t == "mixtral") s.sliding_window = int_field(config, "sliding_window", 0);  // every layer slides
}

}  // namespace

HfConfig hf_config_from_json(const json& root) {
  if (!root.is_object()) fail("config.json: not a JSON object");
  HfConfig c;
  c.model_type = string_field(root, "model_type", "");
  const json* config = &root;
  // Gemma 3 with a vision tower: the language model's own config under text_config.
  if (c.model_type == "gemma3") {
    config = field(root, "text_config");
    if (!config || !config->is_object()) fail("config.json: model_type 'gemma3' without a 'text_config' object");
    c.model_type = "gemma3_text";
    c.prefix = "language_model.model.";
  }
  c.spec.arch = arch_of(c.model_type);
  check_quantization(root);
  read_common_fields(*config, c);
  if (c.spec.arch == "gemma3") {
    read_gemma3_fields(*config, c);
  } else if (c.spec.arch == "deepseek2") {
    read_deepseek_fields(*config, c);
  } else {
    read_attention_fields(*config, c);
    read_moe_fields(*config, c);
  }
  validate(c.spec);
  return c;
}

ModelSpec model_spec_from_hf_config(const json& config) { return hf_config_from_json(config).spec; }

HfConfig read_hf_checkpoint_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read '{}'", path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto config = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) fail("config.json: not valid JSON");
  return hf_config_from_json(config);
}

ModelSpec read_hf_config(const std::string& path) { return read_hf_checkpoint_config(path).spec; }

}  // namespace ridge
