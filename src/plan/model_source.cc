#include "plan/model_source.h"

#include <filesystem>
#include <map>

#include "core/error.h"
#include "hub/repo_ref.h"
#include "model/gguf/gguf_file.h"
#include "model/load_gguf.h"
#include "model/model_store.h"
#include "model/safetensors/hf_config.h"
#include "plan/model_catalog.h"

namespace ridge::plan {
namespace {

// A file's layer matrices often mix types (Q4_K with some Q6_K): price them at their average bits,
// and multiply at the rate of the type holding most bytes.
NumberFormat blended_format(const std::map<DType, std::pair<double, double>>& by_type) {
  double bytes = 0, elements = 0, top_bytes = -1;
  DType top = DType::F32;
  for (const auto& [type, be] : by_type) {
    bytes += be.first;
    elements += be.second;
    if (be.first > top_bytes) top_bytes = be.first, top = type;
  }
  NumberFormat f = number_format_from_dtype(top);
  if (elements > 0) f.bits = 8.0 * bytes / elements;
  if (by_type.size() > 1) f.name += "+mixed";
  return f;
}

PlanModel from_gguf(const std::string& path) {
  const auto file = gguf::GgufFile::open(path);
  PlanModel m;
  m.spec = model_spec_from_gguf(file);
  m.source = path;
  std::map<DType, std::pair<double, double>> layers;  // type -> (bytes, elements)
  const gguf::TensorInfo* head = file.find_tensor("output.weight");
  if (!head) head = file.find_tensor("token_embd.weight");
  for (const auto& t : file.tensors()) {
    if (t.shape.size() < 2 || t.name.rfind("blk.", 0) != 0) continue;
    layers[t.type].first += double(t.n_bytes);
    layers[t.type].second += double(t.n_elements);
  }
  Precision p;
  if (!layers.empty()) p.weights = blended_format(layers);
  if (head) p.embeddings = number_format_from_dtype(head->type);
  // The engine runs f32 activations and an f32 KV cache today.
  p.activations = number_format("f32");
  p.kv = number_format("f32");
  m.precision = p;
  m.weights_note = fmt::format("layers {} ({:.2f} bits), output head {}", p.weights.name, p.weights.bits,
                               p.embeddings.name);
  return m;
}

PlanModel from_hf_config(const std::string& path) {
  PlanModel m;
  m.spec = read_hf_config(path);
  m.source = path;
  return m;
}

}  // namespace

PlanModel resolve_plan_model(const std::string& arg) {
  if (auto spec = named_model_spec(arg)) {
    validate(*spec);
    return {*spec, "catalogue", std::nullopt, ""};
  }
  namespace fs = std::filesystem;
  if (arg == "default" || arg.empty()) return from_gguf(resolve_model_path(arg));
  if (hub::is_hub_uri(arg)) return resolve_plan_model(resolve_model_path(arg));  // hf://: a GGUF file or a snapshot folder
  if (fs::is_directory(arg)) {
    const fs::path config = fs::path(arg) / "config.json";
    if (!fs::exists(config)) fail("'{}' is a directory without a config.json", arg);
    return from_hf_config(config.string());
  }
  if (fs::exists(arg)) {
    if (fs::path(arg).extension() == ".json") return from_hf_config(arg);
    return from_gguf(arg);
  }
  std::string names;
  for (const auto& n : named_model_names()) names += (names.empty() ? "" : ", ") + n;
  fail("model '{}' is neither a file nor a named shape ({})", arg, names);
}

}  // namespace ridge::plan
