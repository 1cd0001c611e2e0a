#include "model/arch/gguf_binding.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/block_scales.h"

namespace ridge {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::vector<float> TensorBinder::output_scales(const std::string& weight, int64_t n) const {
  const std::string name = gguf::factor_name(weight);
  const gguf::TensorInfo* t = name.empty() ? nullptr : file_.find_tensor(name);
  if (!t) return std::vector<float>(size_t(n), 1.0f);
  int64_t count = 1;
  for (int64_t d : t->shape) count *= d;
  if (t->type != DType::F32 || count != n) fail("tensor '{}' must be {} f32 value(s), one per matrix of '{}'", name, n, weight);
  std::vector<float> out(static_cast<size_t>(n));
  std::memcpy(out.data(), t->data, size_t(n) * 4);
  for (float v : out)
    if (!std::isfinite(v) || v == 0.0f) fail("tensor '{}' holds {}, not a finite non-zero factor", name, v);
  return out;
}

int64_t GgufHparams::required_int(const std::string& key) const {
  return file_.get(prefix_ + key).as_int(prefix_ + key);
}

std::optional<int64_t> GgufHparams::uniform_int(const std::string& key) const {
  const gguf::Value* v = file_.find(prefix_ + key);
  if (!v) return std::nullopt;
  if (v->type != gguf::ValueType::ARRAY) return v->as_int(prefix_ + key);
  const auto& items = v->as_array(prefix_ + key);
  if (items.empty()) fail("{}{} is an empty array", prefix_, key);
  const int64_t first = items[0].as_int(prefix_ + key);
  for (const gguf::Value& item : items)
    if (item.as_int(prefix_ + key) != first) fail("{}{} differs between layers, which ridge does not run", prefix_, key);
  return first;
}

const gguf::TensorInfo& TensorBinder::find(const std::string& name, const std::vector<int64_t>& shape) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t) fail("missing tensor '{}'", name);
  std::vector<int64_t> got = t->shape;
  while (got.size() < shape.size()) got.push_back(1);
  if (got != shape) fail("tensor '{}' has shape {}, expected {}", name, shape_string(t->shape), shape_string(shape));
  if (!ref::can_dequantize(t->type)) fail("tensor '{}' has type {}, which ridge cannot compute with", name, dtype_name(t->type));
  const int64_t n_blocks = t->n_elements / dtype_info(t->type).block_size;
  if (const int64_t bad = first_nonfinite_scale(t->type, t->data, n_blocks); bad >= 0)
    fail("tensor '{}' ({}): block {} of {} has a scale that is not a finite number (the file is corrupt)", name,
         dtype_name(t->type), bad, n_blocks);
  return *t;
}

WeightRef TensorBinder::matrix(const std::string& name, int64_t rows, int64_t cols, bool required) {
  if (!required && !has(name)) return {};
  const gguf::TensorInfo& t = find(name, {cols, rows});
  WeightRef w{t.type, t.data, rows, cols};
  if (rows > 1) w.scale = output_scales(name, 1)[0];
  return w;
}

WeightRef TensorBinder::vector(const std::string& name, int64_t n, bool required) {
  WeightRef w = matrix(name, 1, n, required);
  if (!w.present() || w.type == DType::F32) return w;
  auto& copy = f32_copies_.emplace_back(size_t(n));
  ref::dequantize_row(w.type, w.data, copy.data(), n);
  return WeightRef{DType::F32, copy.data(), 1, n};
}

float* TensorBinder::f32_copy(const std::string& name, int64_t rows, int64_t cols) {
  const WeightRef w = matrix(name, rows, cols);
  float* out = f32_storage(rows * cols);
  for (int64_t r = 0; r < rows; ++r) ref::dequantize_row(w.type, w.row(r), out + r * cols, cols);
  if (w.scale != 1.0f)
    for (int64_t i = 0; i < rows * cols; ++i) out[i] *= w.scale;
  return out;
}

float* TensorBinder::f32_storage(int64_t n) { return f32_copies_.emplace_back(size_t(n)).data(); }

std::vector<WeightRef> TensorBinder::stacked(const std::string& name, int64_t n, int64_t rows, int64_t cols) {
  const gguf::TensorInfo& t = find(name, {cols, rows, n});
  std::vector<WeightRef> out;
  const std::vector<float> scales = output_scales(name, n);
  for (int64_t i = 0; i < n; ++i) {
    WeightRef w{t.type, nullptr, rows, cols};
    w.data = t.data + i * rows * w.row_bytes();
    w.scale = scales[size_t(i)];
    out.push_back(w);
  }
  return out;
}

}  // namespace ridge
