#include "embed/st_pipeline.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/safetensors/safetensors_file.h"

namespace ridge {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::optional<json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("{}: {}", path.string(), e.what());
  }
}

PoolingMode pooling_of(const json& c, const fs::path& path) {
  if (!c.is_object()) fail("{}: not a JSON object", path.string());
  const auto on = [&](const char* key) { return c.value(key, false); };
  int modes = 0;
  PoolingMode mode = PoolingMode::Mean;
  for (auto [key, m] : {std::pair{"pooling_mode_mean_tokens", PoolingMode::Mean}, {"pooling_mode_cls_token", PoolingMode::Cls},
                        {"pooling_mode_max_tokens", PoolingMode::Max},
                        {"pooling_mode_mean_sqrt_len_tokens", PoolingMode::MeanSqrtLen},
                        {"pooling_mode_lasttoken", PoolingMode::LastToken}})
    if (on(key)) ++modes, mode = m;
  if (c.contains("pooling_mode") && c["pooling_mode"].is_string()) {
    const std::string name = c["pooling_mode"];
    if (name == "mean") mode = PoolingMode::Mean;
    else if (name == "cls") mode = PoolingMode::Cls;
    else if (name == "max") mode = PoolingMode::Max;
    else if (name == "lasttoken") mode = PoolingMode::LastToken;
    else fail("{}: pooling_mode '{}' is not one ridge runs (mean, cls, max, lasttoken)", path.string(), name);
    modes = 1;
  }
  if (modes != 1)
    fail("{}: {} pooling modes are on; ridge pools one way (concatenated modes are not supported)", path.string(), modes);
  return mode;
}

DenseLayer dense_of(const fs::path& dir) {
  const auto config = read_json(dir / "config.json");
  if (!config || !config->is_object()) fail("{}: missing or malformed config.json", dir.string());
  DenseLayer d;
  d.in = config->value("in_features", int64_t(0));
  d.out = config->value("out_features", int64_t(0));
  if (d.in <= 0 || d.out <= 0 || d.in > (1 << 20) || d.out > (1 << 20))
    fail("{}: in_features / out_features out of range", dir.string());
  const std::string act = config->value("activation_function", "torch.nn.modules.linear.Identity");
  if (act.ends_with("Identity")) d.activation = DenseLayer::Activation::Identity;
  else if (act.ends_with("Tanh")) d.activation = DenseLayer::Activation::Tanh;
  else fail("{}: activation_function '{}' (ridge runs Identity and Tanh)", dir.string(), act);
  const fs::path weights = dir / "model.safetensors";
  if (!fs::exists(weights)) fail("{}: no model.safetensors (ridge does not read pickled pytorch_model.bin)", dir.string());
  const SafetensorsFile file = SafetensorsFile::open(weights.string());
  const SafetensorsTensor* w = file.find("linear.weight");
  if (!w || w->shape != std::vector<int64_t>{d.out, d.in})
    fail("{}: 'linear.weight' missing or not [{}, {}]", weights.string(), d.out, d.in);
  d.weight = tensor_floats(*w);
  if (config->value("bias", true)) {
    const SafetensorsTensor* b = file.find("linear.bias");
    if (!b || b->shape != std::vector<int64_t>{d.out}) fail("{}: 'linear.bias' missing or not [{}]", weights.string(), d.out);
    d.bias = tensor_floats(*b);
  }
  return d;
}

EmbeddingPipeline read_pipeline(const std::string& dir_name, int64_t n_embd) {
  const fs::path dir(dir_name);
  EmbeddingPipeline p;
  if (const auto bert = read_json(dir / "sentence_bert_config.json"); bert && bert->is_object())
    p.max_seq_length = bert->value("max_seq_length", int64_t(0));
  if (p.max_seq_length < 0 || p.max_seq_length == 1 || p.max_seq_length > (int64_t(1) << 24))
    fail("{}: sentence_bert_config.json: max_seq_length {} is out of range", dir.string(), p.max_seq_length);
  if (const auto st = read_json(dir / "config_sentence_transformers.json"); st && st->is_object()) {
    if (const auto it = st->find("prompts"); it != st->end() && it->is_object())
      for (const auto& [name, text] : it->items())
        if (text.is_string()) p.prompts[name] = text.get<std::string>();
    if (const auto it = st->find("default_prompt_name"); it != st->end() && it->is_string()) p.default_prompt_name = *it;
  }
  const auto modules = read_json(dir / "modules.json");
  if (!modules) return p;
  if (!modules->is_array()) fail("{}: modules.json is not a list", dir.string());
  int64_t width = n_embd;
  for (const json& m : *modules) {
    if (!m.is_object()) fail("{}: modules.json holds a non-object", dir.string());
    const std::string type = m.value("type", "");
    const fs::path path = dir / m.value("path", "");
    if (type.ends_with(".Transformer")) continue;
    if (type.ends_with(".Pooling")) {
      const fs::path config_path = path / "config.json";
      const auto config = read_json(config_path);
      if (!config) fail("{}: missing", config_path.string());
      p.pooling = pooling_of(*config, config_path);
      p.include_prompt = config->value("include_prompt", true);
    } else if (type.ends_with(".Dense")) {
      DenseLayer d = dense_of(path);
      if (d.in != width) fail("{}: a Dense layer of {} inputs follows {} dimensions", path.string(), d.in, width);
      width = d.out;
      p.dense.push_back(std::move(d));
    } else if (type.ends_with(".Normalize")) {
      p.normalize = true;
    } else {
      fail("{}: modules.json names module '{}', which ridge does not run", dir.string(), type);
    }
  }
  return p;
}

}  // namespace

const std::string& EmbeddingPipeline::prompt(const std::string& name) const {
  const auto it = prompts.find(name);
  if (it == prompts.end()) {
    std::string known;
    for (const auto& [k, v] : prompts) known += (known.empty() ? "" : ", ") + k;
    fail("the model has no prompt named '{}' (it has: {})", name, known.empty() ? "none" : known);
  }
  return it->second;
}

EmbeddingPipeline read_embedding_pipeline(const std::string& dir_name, int64_t n_embd) {
  // A field of the wrong JSON type anywhere is the directory's error, named, like any other.
  try {
    return read_pipeline(dir_name, n_embd);
  } catch (const json::exception& e) {
    fail("{}: a sentence-transformers file has a field of the wrong type: {}", dir_name, e.what());
  }
}

}  // namespace ridge
