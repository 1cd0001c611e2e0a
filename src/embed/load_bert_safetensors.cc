// Hugging Face BertModel checkpoints: config.json for the shapes, safetensors for the weights.
// PyTorch's Linear weights are [out, in], already the layout a WeightRef wants; matrices stay in the
// memory map in their stored type, vectors become f32.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "embed/encoder_model.h"
#include "model/safetensors/safetensors_checkpoint.h"

namespace ridge {
namespace {

using nlohmann::json;

struct BertStorage {
  SafetensorsCheckpoint checkpoint;
  std::vector<std::vector<float>> f32_copies;
};

int64_t positive_int(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || !it->is_number_integer()) fail("config.json: missing integer '{}'", key);
  const int64_t v = it->get<int64_t>();
  if (v <= 0 || v > (int64_t(1) << 24)) fail("config.json: '{}' = {} is out of range", key, v);
  return v;
}

EncoderSpec spec_from_config(const json& c) {
  const std::string type = c.value("model_type", "");
  if (type != "bert")
    fail("config.json: model_type '{}' is not an encoder ridge runs (bert)", type);
  if (c.value("hidden_act", "gelu") != "gelu")
    fail("config.json: hidden_act '{}' (ridge's BERT runs gelu)", c.value("hidden_act", ""));
  if (c.value("position_embedding_type", "absolute") != "absolute")
    fail("config.json: position_embedding_type '{}' (ridge's BERT runs absolute)", c.value("position_embedding_type", ""));
  EncoderSpec s;
  s.n_vocab = positive_int(c, "vocab_size");
  s.n_embd = positive_int(c, "hidden_size");
  s.n_head = positive_int(c, "num_attention_heads");
  s.n_layer = positive_int(c, "num_hidden_layers");
  s.n_ff = positive_int(c, "intermediate_size");
  s.n_positions = positive_int(c, "max_position_embeddings");
  s.n_token_types = c.value("type_vocab_size", 0);
  s.norm_eps = float(c.value("layer_norm_eps", 1e-12));
  if (s.n_embd % s.n_head != 0) fail("config.json: hidden_size {} is not a multiple of {} heads", s.n_embd, s.n_head);
  if (!(s.norm_eps > 0.0f)) fail("config.json: layer_norm_eps must be positive");
  return s;
}

class Binder {
 public:
  Binder(BertStorage& storage, std::string prefix) : storage_(storage), prefix_(std::move(prefix)) {}
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols) {
    const SafetensorsTensor& t = checked_tensor(storage_.checkpoint, prefix_ + name, {rows, cols});
    return WeightRef{t.type, t.data, rows, cols};
  }
  WeightRef vector(const std::string& name, int64_t n) {
    return f32_vector(checked_tensor(storage_.checkpoint, prefix_ + name, {n}), storage_.f32_copies);
  }

 private:
  BertStorage& storage_;
  std::string prefix_;
};

}  // namespace

EncoderModel load_bert_safetensors(const std::string& dir) {
  EncoderModel model;
  try {
    const std::string config_path = (std::filesystem::path(dir) / "config.json").string();
    std::ifstream in(config_path);
    if (!in) fail("config.json: cannot open {}", config_path);
    json config;
    try {
      config = json::parse(in);
    } catch (const json::exception& e) {
      fail("config.json: {}", e.what());
    }
    if (!config.is_object()) fail("config.json: not a JSON object");
    model.spec = spec_from_config(config);
    model.spec.name = std::filesystem::path(dir).filename().string();
    auto storage = std::make_shared<BertStorage>(BertStorage{SafetensorsCheckpoint::open(dir), {}});
    // BertForSequenceClassification and friends keep the encoder under "bert."
    const std::string prefix = storage->checkpoint.find("bert.embeddings.word_embeddings.weight") ? "bert." : "";
    Binder b(*storage, prefix);
    bind_encoder_weights(
        model.spec, model.weights,
        [&](const std::string& name, int64_t rows, int64_t cols) { return b.matrix(bert_hf_name(name), rows, cols); },
        [&](const std::string& name, int64_t n) { return b.vector(bert_hf_name(name), n); });
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
  return model;
}

}  // namespace ridge
