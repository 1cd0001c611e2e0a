// PEFT's LoRA directories: adapter_config.json (r, lora_alpha, use_rslora, target_modules, and
// per-module rank_pattern / alpha_pattern) and adapter_model.safetensors with
// "base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight".
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/lora/lora_adapter.h"
#include "model/model_spec.h"
#include "model/safetensors/safetensors_file.h"

namespace ridge::lora {
namespace {

namespace fs = std::filesystem;

std::optional<Target> target_of(std::string_view module) {
  for (int t = 0; t < kTargets; ++t)
    if (target_name(Target(t)) == module) return Target(t);
  return std::nullopt;
}

// Hugging Face keeps q and k in rotate-half order; a GGUF of an interleaved-RoPE model (llama,
// mistral) has their rows permuted within each head, as llama.cpp's converter does, so B's rows
// follow: GGUF row h*hd + 2j + k is Hugging Face row h*hd + k*hd/2 + j.
void permute_rows_for_interleaved_rope(std::vector<float>& b, int64_t rank, int64_t n_heads, int64_t head_dim) {
  std::vector<float> out(b.size());
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t j = 0; j < head_dim / 2; ++j)
      for (int64_t k = 0; k < 2; ++k) {
        const int64_t to = h * head_dim + 2 * j + k, from = h * head_dim + k * (head_dim / 2) + j;
        std::copy_n(b.begin() + from * rank, rank, out.begin() + to * rank);
      }
  b.swap(out);
}

}  // namespace

std::shared_ptr<LoraAdapter> read_peft_adapter(const std::string& dir, const ModelSpec& base, const LoraLoadOptions& options) {
  const fs::path config_path = fs::path(dir) / "adapter_config.json";
  std::ifstream in(config_path);
  if (!in) fail("'{}' is no PEFT adapter: it has no adapter_config.json", dir);
  nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) fail("{}: not a JSON object", config_path.string());
  const std::string peft_type = config.value("peft_type", std::string("LORA"));
  if (peft_type != "LORA") fail("{}: peft_type '{}' (only LORA adapters are read)", config_path.string(), peft_type);
  const auto number = [&](const char* key, double fallback) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return fallback;
    if (!it->is_number()) fail("{}: '{}' must be a number", config_path.string(), key);
    return it->get<double>();
  };
  const double r = number("r", 8), alpha = number("lora_alpha", 8);
  const bool rs_lora = config.value("use_rslora", false);
  if (config.value("fan_in_fan_out", false)) fail("{}: fan_in_fan_out adapters (GPT-2 style) are not supported", config_path.string());
  if (config.contains("use_dora") && config["use_dora"].is_boolean() && config["use_dora"].get<bool>())
    fail("{}: DoRA adapters are not supported", config_path.string());
  std::map<std::string, double> rank_pattern, alpha_pattern;
  for (const auto& [key, pattern] : {std::pair{"rank_pattern", &rank_pattern}, std::pair{"alpha_pattern", &alpha_pattern}})
    if (config.contains(key) && config[key].is_object())
      for (auto& [k, v] : config[key].items())
        if (v.is_number()) (*pattern)[k] = v.get<double>();
  const auto pattern_value = [](const std::map<std::string, double>& p, const std::string& key, double fallback) {
    for (const auto& [k, v] : p)
      if (key.size() >= k.size() && key.compare(key.size() - k.size(), k.size(), k) == 0) return v;
    return fallback;
  };

  const fs::path weights = fs::path(dir) / "adapter_model.safetensors";
  if (!fs::exists(weights))
    fail("{}: no adapter_model.safetensors (adapter_model.bin, PyTorch's pickle, is not read: save with safe_serialization)", dir);
  const SafetensorsFile file = SafetensorsFile::open(weights.string());

  auto adapter = std::make_shared<LoraAdapter>();
  adapter->name = fs::path(dir).filename().string();
  adapter->source_format = "peft";
  adapter->alpha = float(alpha);
  static const std::regex key(R"((?:.*\.)?layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+)\.lora_(A|B)(?:\.default)?\.weight)");
  struct Pair {
    const SafetensorsTensor* a = nullptr;
    const SafetensorsTensor* b = nullptr;
  };
  std::map<std::pair<int64_t, int>, Pair> pairs;
  for (const SafetensorsTensor& t : file.tensors()) {
    std::smatch m;
    if (!std::regex_match(t.name, m, key)) {
      if (t.name.find("lora_") != std::string::npos || t.name.find("embed") != std::string::npos ||
          t.name.find("lm_head") != std::string::npos)
        fail("{}: tensor '{}': only q/k/v/o_proj and gate/up/down_proj of the decoder layers are supported", weights.string(), t.name);
      continue;
    }
    const std::optional<Target> target = target_of(m[3].str());
    if (!target) fail("{}: tensor '{}': unknown target module '{}'", weights.string(), t.name, m[3].str());
    Pair& p = pairs[{std::stoll(m[1].str()), int(*target)}];
    (m[4] == "A" ? p.a : p.b) = &t;
  }
  for (const auto& [where, p] : pairs) {
    const auto [layer, t] = where;
    const SafetensorsTensor* named = p.a ? p.a : p.b;
    if (!p.a || !p.b) fail("{}: tensor '{}' has no lora_{} partner", weights.string(), named->name, p.a ? "B" : "A");
    if (p.a->shape.size() != 2 || p.b->shape.size() != 2)
      fail("{}: tensor '{}': LoRA matrices are two-dimensional", weights.string(), named->name);
    LoraMatrix mat;
    mat.rank = p.a->shape[0];
    mat.d_in = p.a->shape[1];
    mat.d_out = p.b->shape[0];
    if (p.b->shape[1] != mat.rank)
      fail("{}: tensor '{}': lora_B is {} x {} but lora_A's rank is {}", weights.string(), p.b->name, p.b->shape[0], p.b->shape[1],
           mat.rank);
    const std::string module = "layers." + std::to_string(layer) + "." + std::string(target_name(Target(t)));
    const double rank_here = pattern_value(rank_pattern, module, r), alpha_here = pattern_value(alpha_pattern, module, alpha);
    if (int64_t(rank_here) != mat.rank)
      fail("{}: tensor '{}' has rank {} but adapter_config.json says r = {}", weights.string(), p.a->name, mat.rank, rank_here);
    mat.scale = lora_scale(alpha_here, mat.rank, rs_lora, options.scale, weights.string() + ": " + p.a->name);
    mat.a = tensor_floats(*p.a);
    mat.b = tensor_floats(*p.b);
    if ((Target(t) == Target::kQ || Target(t) == Target::kK) && base.rope_style == RopeStyle::Normal && mat.d_out % base.head_dim == 0 &&
        base.head_dim % 2 == 0)
      permute_rows_for_interleaved_rope(mat.b, mat.rank, mat.d_out / base.head_dim, base.head_dim);
    place_matrix(*adapter, base, layer, Target(t), std::move(mat), weights.string() + ": " + named->name);
  }
  return adapter;
}

}  // namespace ridge::lora
