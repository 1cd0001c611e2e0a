#pragma once
// The paged KV cache in device memory: per layer, blocks of block_size positions, each block its K
// rows then its V rows (block_size, n_kv_heads * head_dim); FP8/INT8 with one f32 scale per
// (position, kv head), laid out as the host store's. Unlike the host store, keys stay rows: the
// attention kernel reads one K row per 8 lanes with 16-byte loads. The two stores never exchange
// bytes. Zeroed at creation, as the host store's calloc.
#include <cstdint>

#include "backend/cuda/device_buffer.h"
#include "kv/kv_store.h"

namespace ridge::cuda {

class DeviceKvStore {
 public:
  explicit DeviceKvStore(const KvLayout& layout);

  const KvLayout& layout() const { return layout_; }
  int64_t bytes() const { return data_.bytes() + scales_.bytes(); }
  KvLayerDevice layer(int64_t layer) const;
  // Copy-on-write, queued on s: block dst becomes a copy of block src in every layer.
  void copy_block(BlockId src, BlockId dst, Stream s);
  // Host copies of one layer (tests): data (n_blocks, 2, block_size, kv_dim) elements and scales.
  void download_layer(int64_t layer, void* data, float* scales) const;

 private:
  KvLayout layout_;
  int64_t block_bytes_, layer_bytes_, block_scales_, layer_scales_;
  DeviceBuffer data_;    // (n_layer, n_blocks, 2, block_size, kv_dim) elements
  DeviceBuffer scales_;  // (n_layer, n_blocks, 2, block_size, n_kv_heads) f32, scaled types only
};

}  // namespace ridge::cuda
