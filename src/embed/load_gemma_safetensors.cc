// Hugging Face Gemma3TextModel checkpoints (EmbeddingGemma): config.json for the shapes and the
// layer pattern, safetensors for the weights. Matrices stay in the memory map in their stored type;
// norm weights become f32 copies holding 1 + w.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "embed/gemma_model.h"
#include "model/safetensors/safetensors_checkpoint.h"

namespace ridge {
namespace {

using nlohmann::json;

struct GemmaStorage {
  SafetensorsCheckpoint checkpoint;
  std::vector<std::vector<float>> norms;  // 1 + w
};

int64_t positive_int(const json& c, const char* key, std::optional<int64_t> fallback = std::nullopt) {
  const auto it = c.find(key);
  if (it == c.end() || it->is_null()) {
    if (fallback) return *fallback;
    fail("config.json: missing integer '{}'", key);
  }
  if (!it->is_number_integer()) fail("config.json: '{}' is not an integer", key);
  const int64_t v = it->get<int64_t>();
  if (v <= 0 || v > (int64_t(1) << 24)) fail("config.json: '{}' = {} is out of range", key, v);
  return v;
}

double positive_number(const json& c, const char* key, double fallback) {
  const auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (!it->is_number() || !(it->get<double>() > 0.0) || !std::isfinite(it->get<double>()))
    fail("config.json: '{}' must be a positive number", key);
  return it->get<double>();
}

// A key that must be absent, null or `ok` (a feature ridge's Gemma encoder does not run otherwise).
void require(const json& c, const char* key, const json& ok, const char* why) {
  const auto it = c.find(key);
  if (it != c.end() && !it->is_null() && *it != ok) fail("config.json: '{}' = {} ({})", key, it->dump(), why);
}

std::vector<bool> sliding_layers(const json& c, int64_t n_layer) {
  std::vector<bool> sliding(static_cast<size_t>(n_layer));
  if (const auto it = c.find("layer_types"); it != c.end() && !it->is_null()) {
    if (!it->is_array() || int64_t(it->size()) != n_layer)
      fail("config.json: 'layer_types' must list the {} layers", n_layer);
    for (int64_t i = 0; i < n_layer; ++i) {
      const json& t = (*it)[size_t(i)];
      if (t == "sliding_attention") sliding[size_t(i)] = true;
      else if (t != "full_attention")
        fail("config.json: layer_types[{}] = {} (sliding_attention or full_attention)", i, t.dump());
    }
    return sliding;
  }
  // Older configs: every pattern-th layer is global.
  const int64_t pattern = c.contains("sliding_window_pattern") ? positive_int(c, "sliding_window_pattern")
                                                               : positive_int(c, "_sliding_window_pattern", 6);
  for (int64_t i = 0; i < n_layer; ++i) sliding[size_t(i)] = (i + 1) % pattern != 0;
  return sliding;
}

GemmaEncoderSpec spec_from_config(const json& c) {
  if (c.value("model_type", "") != "gemma3_text")
    fail("config.json: model_type '{}' is not gemma3_text", c.value("model_type", ""));
  if (!c.value("use_bidirectional_attention", false))
    fail(
        "config.json: use_bidirectional_attention is not true: a causal Gemma 3 is a decoder (ridge run), not an "
        "encoder");
  const std::string act =
      c.contains("hidden_activation") ? c.value("hidden_activation", "") : c.value("hidden_act", "");
  if (act != "gelu_pytorch_tanh")
    fail("config.json: hidden_activation '{}' (ridge's Gemma runs gelu_pytorch_tanh)", act);
  require(c, "attention_bias", false, "ridge's Gemma has no attention biases");
  require(c, "attn_logit_softcapping", nullptr, "ridge's Gemma encoder does not soft-cap scores");
  require(c, "rope_scaling", json{{"rope_type", "default"}}, "ridge's Gemma encoder runs unscaled RoPE");
  GemmaEncoderSpec s;
  s.n_vocab = positive_int(c, "vocab_size");
  s.n_embd = positive_int(c, "hidden_size");
  s.n_head = positive_int(c, "num_attention_heads");
  s.n_head_kv = positive_int(c, "num_key_value_heads", s.n_head);
  s.head_dim = positive_int(c, "head_dim", s.n_embd / s.n_head);
  s.n_layer = positive_int(c, "num_hidden_layers");
  s.n_ff = positive_int(c, "intermediate_size");
  s.n_positions = positive_int(c, "max_position_embeddings");
  s.sliding = sliding_layers(c, s.n_layer);
  // transformers' Gemma3TextConfig turns a bidirectional model's window into its half plus one
  // (exclusive bounds), and its mask is |i - j| < that: 512 sees 256 tokens either side. llama.cpp's
  // symmetric window (|i - j| <= n_swa / 2) is the same.
  s.sliding_window = positive_int(c, "sliding_window", s.n_positions) / 2 + 1;
  s.rope_theta = float(positive_number(c, "rope_theta", 10000.0));
  s.rope_theta_local = float(positive_number(c, "rope_local_base_freq", 10000.0));
  s.norm_eps = float(positive_number(c, "rms_norm_eps", 1e-6));
  s.attention_scale = float(1.0 / std::sqrt(positive_number(c, "query_pre_attn_scalar", double(s.head_dim))));
  if (s.n_head % s.n_head_kv != 0)
    fail("config.json: {} attention heads do not share {} KV heads evenly", s.n_head, s.n_head_kv);
  if (s.head_dim % 2 != 0) fail("config.json: head_dim {} is odd (RoPE turns pairs)", s.head_dim);
  return s;
}

class Binder {
 public:
  Binder(GemmaStorage& storage, std::string prefix) : storage_(storage), prefix_(std::move(prefix)) {}
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols) {
    const SafetensorsTensor& t = checked_tensor(storage_.checkpoint, prefix_ + name, {rows, cols});
    return WeightRef{t.type, t.data, rows, cols};
  }
  WeightRef norm(const std::string& name, int64_t n) {
    std::vector<float>& w =
        storage_.norms.emplace_back(tensor_floats(checked_tensor(storage_.checkpoint, prefix_ + name, {n})));
    for (float& v : w) v = 1.0f + v;
    return WeightRef{DType::F32, w.data(), 1, n};
  }

 private:
  GemmaStorage& storage_;
  std::string prefix_;
};

json read_config(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in) fail("config.json: cannot open {}", path);
  try {
    json config = json::parse(in);
    if (!config.is_object()) fail("config.json: not a JSON object");
    return config;
  } catch (const json::exception& e) {
    fail("config.json: {}", e.what());
  }
}

}  // namespace

GemmaEncoderModel load_gemma_safetensors(const std::string& dir) {
  GemmaEncoderModel model;
  try {
    GemmaEncoderSpec& s = model.spec = spec_from_config(read_config(dir));
    auto storage = std::make_shared<GemmaStorage>(GemmaStorage{SafetensorsCheckpoint::open(dir), {}});
    // Gemma3ForCausalLM and friends keep the text model under "model."
    const std::string prefix = storage->checkpoint.find("model.embed_tokens.weight") ? "model." : "";
    Binder b(*storage, prefix);
    GemmaWeights& w = model.weights;
    w.token_embd = b.matrix("embed_tokens.weight", s.n_vocab, s.n_embd);
    w.output_norm = b.norm("norm.weight", s.n_embd);
    w.layers.resize(size_t(s.n_layer));
    for (int64_t i = 0; i < s.n_layer; ++i) {
      GemmaLayerWeights& l = w.layers[size_t(i)];
      const std::string p = "layers." + std::to_string(i) + ".";
      l.attn_norm = b.norm(p + "input_layernorm.weight", s.n_embd);
      l.wq = b.matrix(p + "self_attn.q_proj.weight", s.q_dim(), s.n_embd);
      l.wk = b.matrix(p + "self_attn.k_proj.weight", s.kv_dim(), s.n_embd);
      l.wv = b.matrix(p + "self_attn.v_proj.weight", s.kv_dim(), s.n_embd);
      l.q_norm = b.norm(p + "self_attn.q_norm.weight", s.head_dim);
      l.k_norm = b.norm(p + "self_attn.k_norm.weight", s.head_dim);
      l.wo = b.matrix(p + "self_attn.o_proj.weight", s.n_embd, s.q_dim());
      l.post_attn_norm = b.norm(p + "post_attention_layernorm.weight", s.n_embd);
      l.ffn_norm = b.norm(p + "pre_feedforward_layernorm.weight", s.n_embd);
      l.w_gate = b.matrix(p + "mlp.gate_proj.weight", s.n_ff, s.n_embd);
      l.w_up = b.matrix(p + "mlp.up_proj.weight", s.n_ff, s.n_embd);
      l.w_down = b.matrix(p + "mlp.down_proj.weight", s.n_embd, s.n_ff);
      l.post_ffn_norm = b.norm(p + "post_feedforward_layernorm.weight", s.n_embd);
    }
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
  return model;
}

}  // namespace ridge
