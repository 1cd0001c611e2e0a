#pragma once
// Weight views over a checkpoint's tensors, by HF name: matrices in their stored type (F32, F16,
// BF16, FP8 with its scales, NVFP4 repacked into GGUF's blocks), vectors as f32. Every tensor read
// is remembered, so the loader can refuse tensors that no weight took.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/safetensors/safetensors_checkpoint.h"
#include "model/weights.h"

namespace ridge {

// Keeps the shards mapped, plus the copies made at load (f32 vectors, repacked or rearranged matrices).
struct SafetensorsStorage {
  SafetensorsCheckpoint checkpoint;
  std::vector<std::vector<float>> f32_copies;
  std::vector<std::vector<uint8_t>> repacked;  // NVFP4 matrices in GGUF's block layout
};

class HfWeightBinder {
 public:
  explicit HfWeightBinder(SafetensorsStorage& storage) : storage_(storage) {}

  // A [rows, cols] matrix (PyTorch [out, in]), kept in its stored type.
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols);
  // A [n] vector as f32; `plus_one` adds 1 to each value (Gemma's RMSNorm scales by 1 + w).
  WeightRef vector(const std::string& name, int64_t n, bool plus_one = false);
  // A [rows, cols] matrix's values as f32, for weights rearranged at load; kept as long as the model.
  const float* f32_matrix(const std::string& name, int64_t rows, int64_t cols);
  float* f32_storage(int64_t n) { return storage_.f32_copies.emplace_back(size_t(n)).data(); }
  bool has(const std::string& name) const { return storage_.checkpoint.find(name) != nullptr; }
  // Tensors of the checkpoint that no call above read.
  std::vector<std::string> unread() const;

 private:
  const SafetensorsTensor* find(const std::string& name);
  const SafetensorsTensor& tensor(const std::string& name, const std::vector<int64_t>& shape);
  std::optional<WeightRef> nvfp4_matrix(const std::string& name, int64_t rows, int64_t cols);
  std::optional<WeightRef> fp8_matrix(const std::string& name, int64_t rows, int64_t cols);

  SafetensorsStorage& storage_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace ridge
