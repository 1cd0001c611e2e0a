#include "model/safetensors/load_safetensors.h"

#include <filesystem>

#include "core/error.h"
#include "model/safetensors/hf_config.h"
#include "model/safetensors/hf_tensor_names.h"
#include "model/safetensors/hf_weight_binder.h"

namespace ridge {
namespace {

// Gemma 3 with vision names its language model "language_model.model." (older transformers) or
// "model.language_model." (newer): whichever the checkpoint holds.
void find_prefix(HfConfig& c, const SafetensorsCheckpoint& checkpoint) {
  if (c.prefix == "model.") return;
  for (const char* p : {"language_model.model.", "model.language_model."})
    if (checkpoint.find(std::string(p) + "embed_tokens.weight")) c.prefix = p;
}

// The layer a tensor name belongs to ("<prefix>layers.N."), or -1.
int64_t layer_of(const std::string& name, const std::string& prefix) {
  const std::string head = prefix + "layers.";
  if (name.rfind(head, 0) != 0) return -1;
  int64_t layer = 0;
  size_t i = head.size();
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && layer < (1 << 20); ++i)
    layer = layer * 10 + (name[i] - '0');
  return layer;
}

// Activation and KV-cache scales of FP8 / NVFP4 checkpoints: ridge quantizes activations its own way.
bool is_activation_scale(const std::string& name) {
  for (const char* suffix : {".input_scale", ".input_global_scale", ".k_scale", ".v_scale"})
    if (name.ends_with(suffix)) return true;
  return false;
}

// A tensor no weight took means the config describes another model than the one stored: refused,
// except for what HF checkpoints carry beside the language model (rotary caches, activation scales,
// a vision tower, DeepSeek-V3's prediction layers).
void refuse_unread(const HfConfig& c, const HfWeightBinder& bind) {
  for (const std::string& name : bind.unread()) {
    if (name.ends_with("rotary_emb.inv_freq") || is_activation_scale(name)) continue;
    if (c.prefix != "model." && name.find("language_model.") == std::string::npos) continue;
    const int64_t layer = layer_of(name, c.prefix);
    if (layer >= c.n_layer_stored)
      fail("tensor '{}' belongs to layer {}, but config.json has num_hidden_layers {}", name, layer, c.spec.n_layer);
    if (layer >= c.spec.n_layer) continue;
    fail("tensor '{}' is not part of a {} checkpoint as config.json describes it", name, c.model_type);
  }
}

}  // namespace

Model load_safetensors_model(const std::string& dir) {
  Model model;
  try {
    HfConfig config = read_hf_checkpoint_config((std::filesystem::path(dir) / "config.json").string());
    auto storage = std::make_shared<SafetensorsStorage>(SafetensorsStorage{SafetensorsCheckpoint::open(dir), {}, {}});
    find_prefix(config, storage->checkpoint);
    HfWeightBinder bind(*storage);
    bind_hf_weights(config, bind, model.weights);
    refuse_unread(config, bind);
    model.spec = config.spec;
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
  return model;
}

}  // namespace ridge
