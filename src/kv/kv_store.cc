#include "kv/kv_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "core/fp8.h"

namespace ridge {
namespace {

void encode_row(KvDtype dtype, const float* x, int64_t n_heads, int64_t head_dim, uint8_t* out, float* scales) {
  const int64_t n = n_heads * head_dim;
  switch (dtype) {
    case KvDtype::F16: {
      auto* o = reinterpret_cast<uint16_t*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = f32_to_f16(x[i]);
      return;
    }
    case KvDtype::BF16: {
      auto* o = reinterpret_cast<uint16_t*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = f32_to_bf16(x[i]);
      return;
    }
    case KvDtype::FP8_E4M3:
    case KvDtype::INT8: {
      // One scale per head: the largest magnitude maps to the type's largest value.
      const float top = dtype == KvDtype::INT8 ? 127.0f : kFp8E4M3Max;
      for (int64_t h = 0; h < n_heads; ++h) {
        const float* xh = x + h * head_dim;
        float amax = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) amax = std::max(amax, std::fabs(xh[d]));
        const float scale = amax > 0.0f ? amax / top : 1.0f;
        const float inv = 1.0f / scale;
        scales[h] = scale;
        uint8_t* oh = out + h * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) {
          if (dtype == KvDtype::INT8) {
            oh[d] = uint8_t(int8_t(std::clamp(std::nearbyint(xh[d] * inv), -127.0f, 127.0f)));
          } else {
            oh[d] = f32_to_fp8_e4m3(xh[d] * inv);
          }
        }
      }
      return;
    }
  }
}

}  // namespace

int64_t KvLayout::element_bytes() const { return dtype == KvDtype::F16 || dtype == KvDtype::BF16 ? 2 : 1; }

int64_t KvLayout::bytes_per_token_per_layer() const {
  return rows_per_position() * (kv_dim() * element_bytes() + (scaled() ? n_kv_heads * int64_t(sizeof(float)) : 0));
}

KvStore::KvStore(const KvLayout& layout, const KvAllocator* allocator) : layout_(layout) {
  if (layout.kv_dim() * layout.element_bytes() > int64_t(2 * 512 * 64)) fail("KV store: a row of {} K/V values is too wide", layout.kv_dim());
  if (layout.n_layer <= 0 || layout.n_kv_heads <= 0 || layout.head_dim <= 0 || layout.block_size <= 0 || layout.n_blocks <= 0)
    fail("KV store: every dimension must be positive (layers {}, kv heads {}, head dim {}, block size {}, blocks {})",
         layout.n_layer, layout.n_kv_heads, layout.head_dim, layout.block_size, layout.n_blocks);
  const int64_t rows = layout.rows_per_position();
  block_bytes_ = rows * int64_t(layout.block_size) * layout.kv_dim() * layout.element_bytes();
  layer_bytes_ = block_bytes_ * layout.n_blocks;
  block_scales_ = layout.scaled() ? rows * int64_t(layout.block_size) * layout.n_kv_heads : 0;
  layer_scales_ = block_scales_ * layout.n_blocks;
  data_bytes_ = layer_bytes_ * layout.n_layer;
  scale_count_ = layer_scales_ * layout.n_layer;
  const size_t scale_bytes = size_t(std::max<int64_t>(scale_count_, 1)) * sizeof(float);
  if (allocator) {
    data_ = {static_cast<uint8_t*>((*allocator)(size_t(data_bytes_))), KvStoreFree{false}};
    scales_ = {static_cast<float*>((*allocator)(scale_bytes)), KvStoreFree{false}};
  } else {
    data_.reset(static_cast<uint8_t*>(std::calloc(size_t(data_bytes_), 1)));
    scales_.reset(static_cast<float*>(std::calloc(scale_bytes, 1)));
  }
  if (!data_ || !scales_) fail("KV store: cannot allocate {:.1f} MiB", double(bytes()) / double(1 << 20));
}

KvLayerView KvStore::layer(int64_t layer) const {
  const int64_t row_bytes = layout_.kv_dim() * layout_.element_bytes();
  return {layout_.dtype,
          layout_.block_size,
          layout_.n_kv_heads,
          layout_.head_dim,
          layout_.element_bytes(),
          data_.get() + layer * layer_bytes_,
          block_bytes_,
          int64_t(layout_.block_size) * row_bytes,
          row_bytes,
          scales_.get() + layer * layer_scales_,
          block_scales_};
}

void KvStore::write(int64_t layer, BlockId block, int64_t slot, const float* k, const float* v) {
  if ((v == nullptr) != layout_.keys_only)
    fail("KV store: {}", layout_.keys_only ? "a keys-only store holds no values" : "a position needs its values");
  const KvLayerView view = this->layer(layer);
  float* key_scales = layout_.scaled() ? const_cast<float*>(view.key_scales(block, slot)) : nullptr;
  if (v) {
    float* value_scales = layout_.scaled() ? const_cast<float*>(view.value_scales(block, slot)) : nullptr;
    encode_row(layout_.dtype, v, layout_.n_kv_heads, layout_.head_dim,
               const_cast<uint8_t*>(view.value_row(block, slot)), value_scales);
  }
  // Keys: encoded as a row, then scattered into the block's transposed layout.
  uint8_t key[2 * 512 * 64];
  const int64_t eb = view.elem_bytes, dim = layout_.head_dim;
  encode_row(layout_.dtype, k, layout_.n_kv_heads, dim, key, key_scales);
  for (int64_t h = 0; h < layout_.n_kv_heads; ++h) {
    auto* dst = const_cast<uint8_t*>(view.key_head(block, h)) + slot * eb;
    for (int64_t d = 0; d < dim; ++d) std::memcpy(dst + d * layout_.block_size * eb, key + (h * dim + d) * eb, size_t(eb));
  }
}

void KvStore::copy_block(BlockId src, BlockId dst) {
  if (src < 0 || dst < 0 || src >= layout_.n_blocks || dst >= layout_.n_blocks)
    fail("KV store: block copy {} -> {} outside the pool of {}", src, dst, layout_.n_blocks);
  for (int64_t l = 0; l < layout_.n_layer; ++l) {
    uint8_t* base = data_.get() + l * layer_bytes_;
    std::memcpy(base + dst * block_bytes_, base + src * block_bytes_, size_t(block_bytes_));
    if (block_scales_ > 0) {
      float* s = scales_.get() + l * layer_scales_;
      std::memcpy(s + dst * block_scales_, s + src * block_scales_, size_t(block_scales_) * sizeof(float));
    }
  }
}

}  // namespace ridge
