#include "model/lora/lora_adapter.h"

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/fp16.h"
#include "model/model_spec.h"

namespace ridge::lora {

std::string_view target_name(Target t) {
  static constexpr std::string_view kNames[kTargets] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  return kNames[size_t(t)];
}

int64_t LoraAdapter::bytes() const {
  int64_t n = 0;
  for (const auto& layer : layers)
    for (const auto& m : layer)
      if (m) n += int64_t(m->a_t.size() + m->b_t.size()) * int64_t(sizeof(float)) + int64_t(m->a_t16.size() + m->b_t16.size()) * 2;
  return n;
}

int64_t LoraAdapter::n_matrices() const {
  int64_t n = 0;
  for (const auto& layer : layers)
    for (const auto& m : layer) n += m.has_value();
  return n;
}

std::pair<int64_t, int64_t> target_shape(const ModelSpec& s, Target t) {
  switch (t) {
    case Target::kQ: return {s.q_dim(), s.n_embd};
    case Target::kK:
    case Target::kV: return {s.kv_dim(), s.n_embd};
    case Target::kO: return {s.n_embd, s.q_dim()};
    case Target::kGate:
    case Target::kUp: return {s.n_ff, s.n_embd};
    case Target::kDown: return {s.n_embd, s.n_ff};
  }
  return {0, 0};
}

float lora_scale(double alpha, int64_t rank, bool rs_lora, float user_scale, const std::string& origin) {
  if (rank <= 0) fail("{}: LoRA rank {} (it must be at least 1)", origin, rank);
  if (!std::isfinite(alpha) || alpha <= 0 || alpha > 1e6)
    fail("{}: lora_alpha {} is not a usable scale (a finite number in (0, 1e6])", origin, alpha);
  const double scale = alpha / (rs_lora ? std::sqrt(double(rank)) : double(rank)) * double(user_scale);
  if (!std::isfinite(scale)) fail("{}: the scale alpha / rank is not finite", origin);
  return float(scale);
}

void place_matrix(LoraAdapter& adapter, const ModelSpec& base, int64_t layer, Target t, LoraMatrix m, const std::string& tensor) {
  if (base.is_mla() || base.is_moe())
    fail("{}: LoRA on {} models is not supported yet (dense attention and FFN only)", tensor, base.is_mla() ? "MLA" : "MoE");
  if (layer < 0 || layer >= base.n_layer) fail("{}: layer {} is not in the base model ({} layers)", tensor, layer, base.n_layer);
  const auto [d_out, d_in] = target_shape(base, t);
  if (m.rank <= 0) fail("{}: LoRA rank {} (it must be at least 1)", tensor, m.rank);
  if (m.rank > std::min(d_in, d_out)) fail("{}: rank {} exceeds the matrix's size ({} x {})", tensor, m.rank, d_out, d_in);
  if (m.d_in != d_in || m.d_out != d_out)
    fail("{}: the adapter's matrix is {} x {} but the base model's {} of layer {} is {} x {} (an adapter for another model?)",
         tensor, m.d_out, m.d_in, target_name(t), layer, d_out, d_in);
  if (int64_t(m.a.size()) != m.rank * m.d_in || int64_t(m.b.size()) != m.d_out * m.rank) fail("{}: A or B has the wrong size", tensor);
  for (float v : m.a)
    if (!std::isfinite(v)) fail("{}: lora_A holds a value that is not finite", tensor);
  for (float v : m.b)
    if (!std::isfinite(v)) fail("{}: lora_B holds a value that is not finite", tensor);
  m.a_t.resize(m.a.size());
  for (int64_t j = 0; j < m.rank; ++j)
    for (int64_t i = 0; i < m.d_in; ++i) m.a_t[size_t(i * m.rank + j)] = m.a[size_t(j * m.d_in + i)];
  m.b_t.resize(m.b.size());
  for (int64_t o = 0; o < m.d_out; ++o)
    for (int64_t j = 0; j < m.rank; ++j) m.b_t[size_t(j * m.d_out + o)] = m.b[size_t(o * m.rank + j)];
  std::vector<float>().swap(m.a);
  std::vector<float>().swap(m.b);
  if (adapter.layers.size() < size_t(base.n_layer)) adapter.layers.resize(size_t(base.n_layer));
  auto& slot = adapter.layers[size_t(layer)][size_t(t)];
  if (slot) fail("{}: a second adapter matrix for {} of layer {}", tensor, target_name(t), layer);
  adapter.rank = std::max(adapter.rank, m.rank);
  slot = std::move(m);
}

std::shared_ptr<const LoraAdapter> load_adapter(const std::string& path, const ModelSpec& base, const LoraLoadOptions& options) {
  static std::atomic<uint64_t> next_id{1};
  namespace fs = std::filesystem;
  std::error_code ec;
  std::shared_ptr<LoraAdapter> a;
  if (fs::is_directory(path, ec)) {
    a = read_peft_adapter(path, base, options);
  } else if (fs::is_regular_file(path, ec)) {
    a = read_gguf_adapter(path, base, options);
  } else {
    fail("LoRA adapter '{}' does not exist (a PEFT directory or a GGUF LoRA file)", path);
  }
  if (a->n_matrices() == 0) fail("LoRA adapter '{}' changes none of the base model's matrices", path);
  a->layers.resize(size_t(base.n_layer));
  if (options.f16)
    for (auto& layer : a->layers)
      for (auto& m : layer) {
        if (!m) continue;
        for (float v : m->a_t)
          if (std::fabs(v) > 65504.0f) fail("LoRA adapter '{}' holds a value f16 cannot hold: load it in f32", path);
        for (float v : m->b_t)
          if (std::fabs(v) > 65504.0f) fail("LoRA adapter '{}' holds a value f16 cannot hold: load it in f32", path);
        m->a_t16.resize(m->a_t.size());
        m->b_t16.resize(m->b_t.size());
        for (size_t i = 0; i < m->a_t.size(); ++i) m->a_t16[i] = f32_to_f16(m->a_t[i]);
        for (size_t i = 0; i < m->b_t.size(); ++i) m->b_t16[i] = f32_to_f16(m->b_t[i]);
        std::vector<float>().swap(m->a_t);
        std::vector<float>().swap(m->b_t);
      }
  a->id = next_id++;
  return a;
}

}  // namespace ridge::lora
