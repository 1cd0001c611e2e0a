#include "model/arch/gguf_binding.h"

#include "core/error.h"
#include "kernels/ref/dequant.h"

namespace ridge {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

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
  return *t;
}

WeightRef TensorBinder::matrix(const std::string& name, int64_t rows, int64_t cols, bool required) {
  if (!required && !has(name)) return {};
  const gguf::TensorInfo& t = find(name, {cols, rows});
  return WeightRef{t.type, t.data, rows, cols};
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
  return out;
}

float* TensorBinder::f32_storage(int64_t n) { return f32_copies_.emplace_back(size_t(n)).data(); }

std::vector<WeightRef> TensorBinder::stacked(const std::string& name, int64_t n, int64_t rows, int64_t cols) {
  const gguf::TensorInfo& t = find(name, {cols, rows, n});
  std::vector<WeightRef> out;
  for (int64_t i = 0; i < n; ++i) {
    WeightRef w{t.type, nullptr, rows, cols};
    w.data = t.data + i * rows * w.row_bytes();
    out.push_back(w);
  }
  return out;
}

}  // namespace ridge
