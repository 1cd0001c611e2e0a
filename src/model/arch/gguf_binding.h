#pragma once
// What an architecture reads from a GGUF file: metadata under "<arch>." and tensors with their
// shapes checked.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/weights.h"

namespace ridge {

class GgufHparams {
 public:
  GgufHparams(const gguf::GgufFile& file, std::string arch) : file_(file), prefix_(std::move(arch) + ".") {}
  // "<arch>.key", error when missing
  int64_t required_int(const std::string& key) const;
  std::optional<int64_t> get_int(const std::string& key) const { return file_.get_int(prefix_ + key); }
  std::optional<double> get_double(const std::string& key) const { return file_.get_double(prefix_ + key); }
  std::optional<bool> get_bool(const std::string& key) const { return file_.get_bool(prefix_ + key); }
  std::optional<std::string> get_string(const std::string& key) const { return file_.get_string(prefix_ + key); }
  // A per-layer array stored for a value that must be the same in every layer: its one value.
  std::optional<int64_t> uniform_int(const std::string& key) const;
  bool has_tensor(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  const gguf::GgufFile& file() const { return file_; }

 private:
  const gguf::GgufFile& file_;
  std::string prefix_;
};

class TensorBinder {
 public:
  TensorBinder(const gguf::GgufFile& file, std::vector<std::vector<float>>& f32_copies)
      : file_(file), f32_copies_(f32_copies) {}
  // A matrix of `rows` x `cols` in its file type (dequantized inside the matmul).
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols, bool required = true);
  // A vector of `n` values, always f32 (converted once if the file stores another type).
  WeightRef vector(const std::string& name, int64_t n, bool required = true);
  // A 3-D tensor of n matrices of `rows` x `cols` (GGUF [cols, rows, n]): one view per matrix.
  std::vector<WeightRef> stacked(const std::string& name, int64_t n, int64_t rows, int64_t cols);
  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // For weights rearranged at load: a matrix dequantized to f32 (rows, cols), and new f32 storage
  // of n values, both kept as long as the model.
  float* f32_copy(const std::string& name, int64_t rows, int64_t cols);
  float* f32_storage(int64_t n);

 private:
  // The n per-matrix output factors of a weight ("<name>.scale", f32; 1 where there is none).
  std::vector<float> output_scales(const std::string& weight, int64_t n) const;
  const gguf::TensorInfo& find(const std::string& name, const std::vector<int64_t>& shape) const;
  const gguf::GgufFile& file_;
  std::vector<std::vector<float>>& f32_copies_;
};

}  // namespace ridge
