// GGUF LoRA files as llama.cpp's convert_lora_to_gguf.py writes them: general.type "adapter",
// adapter.type "lora", adapter.lora.alpha, and per matrix "blk.{i}.{attn_q|...}.weight.lora_a"
// (GGUF shape [d_in, r]) and ".lora_b" ([r, d_out]); q/k already in the GGUF's row order.
#include <map>
#include <regex>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/gguf_file.h"
#include "model/lora/lora_adapter.h"
#include "model/model_spec.h"

namespace ridge::lora {
namespace {

std::optional<Target> target_of(std::string_view gguf_name) {
  static const std::pair<std::string_view, Target> kNames[] = {
      {"attn_q", Target::kQ},       {"attn_k", Target::kK},   {"attn_v", Target::kV},     {"attn_output", Target::kO},
      {"ffn_gate", Target::kGate}, {"ffn_up", Target::kUp}, {"ffn_down", Target::kDown}};
  for (const auto& [name, t] : kNames)
    if (name == gguf_name) return t;
  return std::nullopt;
}

std::vector<float> floats_of(const gguf::TensorInfo& t, const std::string& origin) {
  if (!ref::can_dequantize(t.type)) fail("{}: tensor '{}' has a type ridge cannot read", origin, t.name);
  std::vector<float> out(size_t(t.n_elements));
  ref::dequantize_row(t.type, t.data, out.data(), t.n_elements);
  return out;
}

}  // namespace

std::shared_ptr<LoraAdapter> read_gguf_adapter(const std::string& path, const ModelSpec& base, const LoraLoadOptions& options) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  const std::string type = file.get_string("general.type").value_or("");
  if (type != "adapter") fail("'{}' is a GGUF {} file, not a LoRA adapter (general.type is not 'adapter')", path, type.empty() ? "model" : type);
  const std::string adapter_type = file.get_string("adapter.type").value_or("");
  if (adapter_type != "lora") fail("'{}': adapter.type '{}' (only 'lora' is read)", path, adapter_type);
  const std::string arch = file.get_string("general.architecture").value_or("");
  if (!arch.empty() && !base.arch.empty() && arch != base.arch)
    fail("'{}' is an adapter for a {} model, the base model is {}", path, arch, base.arch);
  const double alpha = file.get_double("adapter.lora.alpha").value_or(0);

  auto adapter = std::make_shared<LoraAdapter>();
  adapter->name = path;
  adapter->source_format = "gguf";
  adapter->alpha = float(alpha);
  static const std::regex key(R"(blk\.(\d+)\.([a-z_]+)\.weight\.lora_(a|b))");
  struct Pair {
    const gguf::TensorInfo* a = nullptr;
    const gguf::TensorInfo* b = nullptr;
  };
  std::map<std::pair<int64_t, int>, Pair> pairs;
  for (const gguf::TensorInfo& t : file.tensors()) {
    std::smatch m;
    if (!std::regex_match(t.name, m, key))
      fail("'{}': tensor '{}': only the decoder layers' attention and FFN matrices are supported", path, t.name);
    const std::optional<Target> target = target_of(m[2].str());
    if (!target) fail("'{}': tensor '{}': unknown target '{}'", path, t.name, m[2].str());
    Pair& p = pairs[{std::stoll(m[1].str()), int(*target)}];
    (m[3] == "a" ? p.a : p.b) = &t;
  }
  for (const auto& [where, p] : pairs) {
    const auto [layer, t] = where;
    const gguf::TensorInfo* named = p.a ? p.a : p.b;
    if (!p.a || !p.b) fail("'{}': tensor '{}' has no lora_{} partner", path, named->name, p.a ? "b" : "a");
    if (p.a->shape.size() != 2 || p.b->shape.size() != 2) fail("'{}': tensor '{}': LoRA matrices are two-dimensional", path, named->name);
    LoraMatrix mat;
    mat.d_in = p.a->shape[0];
    mat.rank = p.a->shape[1];
    mat.d_out = p.b->shape[1];
    if (p.b->shape[0] != mat.rank)
      fail("'{}': tensor '{}' has rank {} but its lora_a has rank {}", path, p.b->name, p.b->shape[0], mat.rank);
    // llama.cpp: scale = alpha / rank when alpha is set, else 1.
    mat.scale = alpha == 0 ? options.scale : lora_scale(alpha, mat.rank, false, options.scale, "'" + path + "': " + p.a->name);
    mat.a = floats_of(*p.a, path);
    mat.b = floats_of(*p.b, path);
    place_matrix(*adapter, base, layer, Target(t), std::move(mat), "'" + path + "': " + named->name);
  }
  return adapter;
}

}  // namespace ridge::lora
