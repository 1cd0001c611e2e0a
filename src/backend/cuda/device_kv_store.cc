#include "backend/cuda/device_kv_store.h"

#include "core/error.h"

namespace ridge::cuda {

DeviceKvStore::DeviceKvStore(const KvLayout& layout) : layout_(layout) {
  if (layout.n_layer <= 0 || layout.n_kv_heads <= 0 || layout.head_dim <= 0 || layout.block_size <= 0 || layout.n_blocks <= 0)
    fail("device KV store: every dimension must be positive");
  block_bytes_ = 2 * int64_t(layout.block_size) * layout.kv_dim() * layout.element_bytes();
  layer_bytes_ = block_bytes_ * layout.n_blocks;
  block_scales_ = layout.scaled() ? 2 * int64_t(layout.block_size) * layout.n_kv_heads : 0;
  layer_scales_ = block_scales_ * layout.n_blocks;
  data_ = DeviceBuffer(layer_bytes_ * layout.n_layer);
  fill_zero(data_.get(), data_.bytes(), nullptr);
  if (layer_scales_ > 0) {
    scales_ = DeviceBuffer(layer_scales_ * layout.n_layer * int64_t(sizeof(float)));
    fill_zero(scales_.get(), scales_.bytes(), nullptr);
  }
  device_sync();
}

KvLayerDevice DeviceKvStore::layer(int64_t l) const {
  const int64_t row_bytes = layout_.kv_dim() * layout_.element_bytes();
  KvLayerDevice v;
  v.dtype = layout_.dtype;
  v.block_size = layout_.block_size;
  v.n_kv_heads = layout_.n_kv_heads;
  v.head_dim = layout_.head_dim;
  v.data = data_.as<uint8_t>() + l * layer_bytes_;
  v.block_bytes = block_bytes_;
  v.value_offset = int64_t(layout_.block_size) * row_bytes;
  v.row_bytes = row_bytes;
  v.scales = layer_scales_ > 0 ? scales_.as<float>() + l * layer_scales_ : nullptr;
  v.block_scales = block_scales_;
  return v;
}

void DeviceKvStore::copy_block(BlockId src, BlockId dst, Stream s) {
  if (src < 0 || dst < 0 || src >= layout_.n_blocks || dst >= layout_.n_blocks)
    fail("device KV store: block copy {} -> {} outside the pool of {}", src, dst, layout_.n_blocks);
  for (int64_t l = 0; l < layout_.n_layer; ++l) {
    uint8_t* base = data_.as<uint8_t>() + l * layer_bytes_;
    copy_on_device(base + dst * block_bytes_, base + src * block_bytes_, block_bytes_, s);
    if (block_scales_ > 0) {
      float* sc = scales_.as<float>() + l * layer_scales_;
      copy_on_device(sc + dst * block_scales_, sc + src * block_scales_, block_scales_ * int64_t(sizeof(float)), s);
    }
  }
}

void DeviceKvStore::download_layer(int64_t l, void* data, float* scales) const {
  copy_to_host(data, data_.as<uint8_t>() + l * layer_bytes_, layer_bytes_, nullptr);
  if (scales && layer_scales_ > 0)
    copy_to_host(scales, scales_.as<float>() + l * layer_scales_, layer_scales_ * int64_t(sizeof(float)), nullptr);
  device_sync();
}

}  // namespace ridge::cuda
