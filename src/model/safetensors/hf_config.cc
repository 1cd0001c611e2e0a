#include "model/safetensors/hf_config.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <optional>

#include "core/error.h"

namespace ridge {
namespace {

using nlohmann::json;

constexpr std::array kModelTypes = {"llama", "mistral", "qwen2"};

// A field that is absent or null counts as not given (Mistral writes "head_dim": null).
const json* field(const json& config, const char* key) {
  const auto it = config.find(key);
  return it == config.end() || it->is_null() ? nullptr : &*it;
}

int64_t int_field(const json& config, const char* key, std::optional<int64_t> fallback = std::nullopt) {
  const json* value = field(config, key);
  if (!value) {
    if (!fallback) fail("config.json: missing '{}'", key);
    return *fallback;
  }
  if (!value->is_number_integer()) fail("config.json: '{}' must be an integer", key);
  return value->get<int64_t>();
}

double number_field(const json& config, const char* key, double fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_number()) fail("config.json: '{}' must be a number", key);
  return value->get<double>();
}

bool bool_field(const json& config, const char* key, bool fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_boolean()) fail("config.json: '{}' must be true or false", key);
  return value->get<bool>();
}

std::string string_field(const json& config, const char* key, const std::string& fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_string()) fail("config.json: '{}' must be a string", key);
  return value->get<std::string>();
}

// rope_scaling: null, {"rope_type"|"type": "linear", "factor"} or Llama 3's frequency-band scaling.
RopeScaling parse_rope_scaling(const json& config) {
  RopeScaling scaling;
  const json* rs = field(config, "rope_scaling");
  if (!rs) return scaling;
  if (!rs->is_object()) fail("config.json: 'rope_scaling' must be an object");
  const std::string type = string_field(*rs, "rope_type", string_field(*rs, "type", "default"));
  if (type == "default") return scaling;
  scaling.factor = float(number_field(*rs, "factor", 1.0));
  if (type == "linear") {
    scaling.type = RopeScaling::Type::Linear;
  } else if (type == "llama3") {
    scaling.type = RopeScaling::Type::Llama3;
    scaling.low_freq_factor = float(number_field(*rs, "low_freq_factor", 1.0));
    scaling.high_freq_factor = float(number_field(*rs, "high_freq_factor", 4.0));
    scaling.original_context = int_field(*rs, "original_max_position_embeddings", 8192);
  } else {
    fail("config.json: rope_scaling type '{}' is not supported (ridge runs linear and llama3)", type);
  }
  if (!(scaling.factor > 0.0f)) fail("config.json: rope_scaling factor must be positive");
  return scaling;
}

}  // namespace

ModelSpec model_spec_from_hf_config(const json& config) {
  if (!config.is_object()) fail("config.json: not a JSON object");
  ModelSpec spec;
  spec.arch = string_field(config, "model_type", "");
  if (std::find(kModelTypes.begin(), kModelTypes.end(), spec.arch) == kModelTypes.end())
    fail("config.json: model_type '{}' is not supported (ridge runs llama, mistral, qwen2)", spec.arch);
  spec.name = string_field(config, "_name_or_path", spec.arch);
  const std::string act = string_field(config, "hidden_act", "silu");
  if (act != "silu") fail("config.json: hidden_act '{}' is not supported (ridge runs SwiGLU with silu)", act);

  spec.n_vocab = int_field(config, "vocab_size");
  spec.n_embd = int_field(config, "hidden_size");
  spec.n_layer = int_field(config, "num_hidden_layers");
  spec.n_head = int_field(config, "num_attention_heads");
  spec.n_head_kv = int_field(config, "num_key_value_heads", spec.n_head);
  if (spec.n_head <= 0) fail("config.json: num_attention_heads must be positive, got {}", spec.n_head);
  spec.head_dim = int_field(config, "head_dim", spec.n_embd / spec.n_head);
  spec.rope_dim = spec.head_dim;
  spec.n_ff = int_field(config, "intermediate_size");
  spec.n_ctx_train = int_field(config, "max_position_embeddings", 2048);
  spec.rms_eps = float(number_field(config, "rms_norm_eps", 1e-6));
  spec.rope_theta = float(number_field(config, "rope_theta", 10000.0));
  spec.rope_scaling = parse_rope_scaling(config);
  spec.rope_style = RopeStyle::NeoX;  // rotate_half on unpermuted q/k weights
  spec.tied_embeddings = bool_field(config, "tie_word_embeddings", false);

  // Qwen2 always has q/k/v biases. Llama's attention_bias also puts a bias on o_proj, which the
  // weight layout has no place for; mlp_bias likewise.
  if (spec.arch == "qwen2") {
    spec.qkv_bias = true;
  } else if (bool_field(config, "attention_bias", false)) {
    fail("config.json: attention_bias (a bias on o_proj too) is not supported for {}", spec.arch);
  }
  if (bool_field(config, "mlp_bias", false)) fail("config.json: mlp_bias is not supported");
  // sliding_window (Mistral v0.1) is not applied: it only matters past the window length.
  validate(spec);
  return spec;
}

ModelSpec read_hf_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read '{}'", path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto config = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) fail("config.json: not valid JSON");
  return model_spec_from_hf_config(config);
}

}  // namespace ridge
