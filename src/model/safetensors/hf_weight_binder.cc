#include "model/safetensors/hf_weight_binder.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/error.h"

namespace ridge {
const SafetensorsTensor* HfWeightBinder::find(const std::string& name) {
  const SafetensorsTensor* t = storage_.checkpoint.find(name);
  if (t) read_.insert(name);
  return t;
}

const SafetensorsTensor& HfWeightBinder::tensor(const std::string& name, const std::vector<int64_t>& shape) {
  read_.insert(name);
  return checked_tensor(storage_.checkpoint, name, shape);
}

WeightRef HfWeightBinder::matrix(const std::string& name, int64_t rows, int64_t cols) {
  if (auto w = nvfp4_matrix(name, rows, cols)) return *w;
  if (auto w = fp8_matrix(name, rows, cols)) return *w;
  const SafetensorsTensor& t = tensor(name, {rows, cols});
  return WeightRef{t.type, t.data, rows, cols};
}

WeightRef HfWeightBinder::vector(const std::string& name, int64_t n, bool plus_one) {
  const SafetensorsTensor& t = tensor(name, {n});
  if (!plus_one) return f32_vector(t, storage_.f32_copies);
  auto& copy = storage_.f32_copies.emplace_back(tensor_floats(t));
  for (float& v : copy) v += 1.0f;
  return WeightRef{DType::F32, copy.data(), 1, n};
}

const float* HfWeightBinder::f32_matrix(const std::string& name, int64_t rows, int64_t cols) {
  return storage_.f32_copies.emplace_back(tensor_floats(tensor(name, {rows, cols}))).data();
}

std::vector<std::string> HfWeightBinder::unread() const {
  std::vector<std::string> out;
  for (const SafetensorsFile& f : storage_.checkpoint.files())
    for (const SafetensorsTensor& t : f.tensors())
      if (!read_.count(t.name) && storage_.checkpoint.find(t.name) == &t) out.push_back(t.name);
  return out;
}

// NVFP4 as ModelOpt writes it (weight: U8 [rows, cols/2], value 2j in the low nibble of byte j;
// weight_scale: F8_E4M3 [rows, cols/16]; weight_scale_2: the F32 per-tensor factor) or as
// compressed-tensors does (weight_packed, weight_scale, weight_global_scale: the factor's
// reciprocal). nullopt when `name` is not such a weight.
std::optional<WeightRef> HfWeightBinder::nvfp4_matrix(const std::string& name, int64_t rows, int64_t cols) {
  const std::string base = name.substr(0, name.size() - std::string_view(".weight").size());
  const SafetensorsTensor* packed = find(base + ".weight_packed");
  if (!packed) packed = find(name);
  const SafetensorsTensor* scales = find(base + ".weight_scale");
  if (!packed || packed->dtype != "U8" || !scales || scales->shape.size() != 2) return std::nullopt;
  if (packed->shape != std::vector<int64_t>{rows, cols / 2} || cols % 2 != 0)
    fail("NVFP4 tensor '{}' has shape {}, expected [{}, {}] (two values per byte)", packed->name, shape_text(packed->shape),
         rows, cols / 2);
  if (scales->dtype != "F8_E4M3" || scales->shape != std::vector<int64_t>{rows, cols / 16})
    fail("NVFP4 scales '{}' must be F8_E4M3 [{}, {}], not {} {}", scales->name, rows, cols / 16, scales->dtype,
         shape_text(scales->shape));
  if (cols % 64 != 0) fail("NVFP4 tensor '{}': rows of {} values do not fill ridge's 64-value NVFP4 blocks", name, cols);
  float factor = 1.0f;
  const SafetensorsTensor* f = find(base + ".weight_scale_2");
  const SafetensorsTensor* g = f ? nullptr : find(base + ".weight_global_scale");
  if (const SafetensorsTensor* s = f ? f : g) {
    if (s->type != DType::F32 || s->n_elements != 1) fail("NVFP4 factor '{}' must be one F32 value", s->name);
    std::memcpy(&factor, s->data, 4);
    if (g) factor = 1.0f / factor;
    if (!std::isfinite(factor) || factor == 0.0f) fail("NVFP4 factor '{}' is {}, not a finite non-zero value", s->name, factor);
  }
  auto& out = storage_.repacked.emplace_back(size_t(rows * cols / 64 * 36));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < cols / 64; ++b) {
      uint8_t* blk = out.data() + (r * (cols / 64) + b) * 36;
      for (int s = 0; s < 4; ++s) {
        blk[s] = scales->data[r * (cols / 16) + 4 * b + s];
        const uint8_t* src = packed->data + r * (cols / 2) + 32 * b + 8 * s;  // 16 values, two per byte
        const auto code = [&](int v) { return uint8_t(v % 2 ? src[v / 2] >> 4 : src[v / 2] & 0x0f); };
        for (int j = 0; j < 8; ++j) blk[4 + 8 * s + j] = uint8_t(code(j) | code(j + 8) << 4);
      }
    }
  WeightRef w{DType::NVFP4, out.data(), rows, cols};
  w.scale = factor;
  return w;
}

// FP8 E4M3 weights with the scales their checkpoints carry: "weight_scale" per tensor, per output
// channel, or per 128 x 128 block (compressed-tensors, ModelOpt), or "weight_scale_inv" per block
// (DeepSeek-V3, Qwen3 FP8: the weight is value times it). nullopt when `name` is no FP8 tensor.
std::optional<WeightRef> HfWeightBinder::fp8_matrix(const std::string& name, int64_t rows, int64_t cols) {
  const SafetensorsTensor* t = find(name);
  if (!t || t->dtype != "F8_E4M3") return std::nullopt;
  if (t->shape != std::vector<int64_t>{rows, cols})
    fail("tensor '{}' has shape {}, expected [{}, {}]", name, shape_text(t->shape), rows, cols);
  if (cols % 16 != 0) fail("FP8 tensor '{}': rows of {} values; ridge's FP8 kernels take multiples of 16", name, cols);
  WeightRef w{DType::F8_E4M3, t->data, rows, cols};
  const std::string base = name.substr(0, name.size() - std::string_view(".weight").size());
  const SafetensorsTensor* s = find(base + ".weight_scale");
  if (!s) s = find(base + ".weight_scale_inv");
  if (!s) return w;
  const std::vector<float> v = tensor_floats(*s);
  for (float x : v)
    if (!std::isfinite(x)) fail("FP8 scale '{}' holds {}", s->name, x);
  if (v.size() == 1) {
    w.scale = v[0];
    return w;
  }
  auto& g = storage_.f32_copies.emplace_back();
  if (int64_t(v.size()) == rows && s->shape.size() <= 2 && (s->shape.size() < 2 || s->shape[1] == 1)) {
    g = v;  // per output channel
    w.group_cols = cols;
  } else {
    constexpr int64_t kBlock = 128;
    const int64_t br = (rows + kBlock - 1) / kBlock, bc = (cols + kBlock - 1) / kBlock;
    if (s->shape != std::vector<int64_t>{br, bc})
      fail("FP8 scales '{}' have shape {}: neither one per tensor, per row [{}], nor per 128 x 128 block [{}, {}]", s->name,
           shape_text(s->shape), rows, br, bc);
    if (cols % kBlock != 0) fail("FP8 tensor '{}': block scales need rows of whole 128-value blocks, not {}", name, cols);
    g.resize(size_t(rows * bc));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < bc; ++b) g[size_t(r * bc + b)] = v[size_t(r / kBlock * bc + b)];
    w.group_cols = kBlock;
  }
  w.group_scales = g.data();
  return w;
}

}  // namespace ridge
