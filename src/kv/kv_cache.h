#pragma once
// The K/V history of one sequence, contiguous per layer, stored as f16 (llama.cpp's and vLLM's
// default: half the bytes of f32 for a loss far below the weights' quantization noise).
// (The paged, shared, multi-sequence cache replaces this under the same runner.)
#include <cstdint>
#include <vector>

namespace ridge {

class KvCache {
 public:
  KvCache(int64_t n_layer, int64_t capacity, int64_t kv_dim);

  int64_t capacity() const { return capacity_; }
  int64_t kv_dim() const { return kv_dim_; }
  int64_t size() const { return size_; }  // positions filled
  void resize(int64_t n);                 // keep the first n positions (n <= size) or mark n filled
  void clear() { size_ = 0; }
  int64_t bytes() const { return int64_t(data_.size() * sizeof(uint16_t)); }

  uint16_t* keys(int64_t layer) { return data_.data() + (layer * 2) * capacity_ * kv_dim_; }        // (capacity, kv_dim) f16
  uint16_t* values(int64_t layer) { return data_.data() + (layer * 2 + 1) * capacity_ * kv_dim_; }  // (capacity, kv_dim) f16

 private:
  int64_t n_layer_, capacity_, kv_dim_;
  int64_t size_ = 0;
  std::vector<uint16_t> data_;  // (n_layer, 2, capacity, kv_dim)
};

}  // namespace ridge
