#pragma once
// The bytes of the paged KV cache: one pool of blocks, each holding the keys and values of
// block_size consecutive positions of one sequence for every layer. Which block belongs to which
// sequence is the KvManager's business; the runner passes block tables in, the attention kernel
// reads rows through them. FP8 and INT8 rows carry one f32 scale per (position, kv head).
// A keys-only store (multi-head latent attention) holds one row per position and no value rows:
// its attention reads the values from the key rows (the latent is both).
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>

#include "kv/block_pool.h"
#include "kv/kv_dtype.h"

namespace ridge {

struct KvLayout {
  int64_t n_layer = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int32_t block_size = 16;
  int32_t n_blocks = 0;
  KvDtype dtype = KvDtype::F16;
  bool keys_only = false;  // MLA: each row is [latent | RoPE key], the values its first part

  int64_t kv_dim() const { return n_kv_heads * head_dim; }
  int64_t rows_per_position() const { return keys_only ? 1 : 2; }
  int64_t element_bytes() const;
  bool scaled() const { return dtype == KvDtype::FP8_E4M3 || dtype == KvDtype::INT8; }
  // K and V (K alone when keys_only) of one position in one layer, scales included: the seed's
  // ledger entry per layer.
  int64_t bytes_per_token_per_layer() const;
};

// One layer of the store as the attention kernel sees it. Within a block, keys are stored
// transposed per kv head, (n_kv_heads, head_dim, block_size), so that the d-th element of sixteen
// positions is one load (scores for many positions at once, each still one running sum over d);
// values as rows, (block_size, n_kv_heads * head_dim), for P·V over many dimensions at once.
struct KvLayerView {
  KvDtype dtype;
  int32_t block_size;
  int64_t n_kv_heads, head_dim, elem_bytes;
  const uint8_t* data;        // block b's keys at data + b * block_bytes, its values value_offset further
  int64_t block_bytes, value_offset, row_bytes;  // value rows: none in a keys-only store
  const float* scales;        // block b: (2 or 1, block_size, n_kv_heads) at scales + b * block_scales
  int64_t block_scales;

  // (head_dim, block_size) elements of one kv head: element (d, slot) at [(d * block_size + slot) * elem_bytes].
  const uint8_t* key_head(BlockId block, int64_t head) const {
    return data + block * block_bytes + head * head_dim * block_size * elem_bytes;
  }
  const uint8_t* value_row(BlockId block, int64_t slot) const { return data + block * block_bytes + value_offset + slot * row_bytes; }
  const float* key_scales(BlockId block, int64_t slot) const { return scales + block * block_scales + slot * n_kv_heads; }
  const float* value_scales(BlockId block, int64_t slot) const {
    return key_scales(block, slot) + int64_t(block_size) * n_kv_heads;
  }
};

// Zeroed memory for the store from elsewhere (a KV transport's registered memory, which peers
// write into); it must outlive the store, which never frees it.
using KvAllocator = std::function<void*(size_t bytes)>;

// One contiguous part of the store's memory: all data rows, or all scales.
struct KvRegion {
  uint8_t* base = nullptr;
  int64_t bytes = 0;
};

// Frees the store's memory unless it came from a KvAllocator.
struct KvStoreFree {
  bool owned = true;
  void operator()(void* p) const {
    if (owned) std::free(p);
  }
};

class KvStore {
 public:
  explicit KvStore(const KvLayout& layout, const KvAllocator* allocator = nullptr);

  const KvLayout& layout() const { return layout_; }
  int64_t bytes() const { return data_bytes_ + scale_count_ * int64_t(sizeof(float)); }

  // Converts one position's k and v (kv_dim f32 each) into the store's type at (block, slot).
  // v must be null for a keys-only store, and only there.
  void write(int64_t layer, BlockId block, int64_t slot, const float* k, const float* v);
  // Copy-on-write: block dst becomes a copy of block src in every layer.
  void copy_block(BlockId src, BlockId dst);

  KvLayerView layer(int64_t layer) const;
  // The data rows (n_layer, n_blocks, ...) and the scales (empty unless scaled), and where one
  // layer's block starts in each: byte offsets a transfer addresses blocks by.
  KvRegion data_region() const { return {data_.get(), data_bytes_}; }
  KvRegion scale_region() const { return {reinterpret_cast<uint8_t*>(scales_.get()), scale_count_ * int64_t(sizeof(float))}; }
  int64_t block_data_offset(int64_t layer, BlockId block) const { return layer * layer_bytes_ + block * block_bytes_; }
  int64_t block_scale_offset(int64_t layer, BlockId block) const {
    return (layer * layer_scales_ + block * block_scales_) * int64_t(sizeof(float));
  }
  int64_t block_data_bytes() const { return block_bytes_; }
  int64_t block_scale_bytes() const { return block_scales_ * int64_t(sizeof(float)); }

 private:
  KvLayout layout_;
  int64_t block_bytes_, layer_bytes_, block_scales_, layer_scales_;
  // calloc'd: a large pool costs memory only as its blocks are first written.
  int64_t data_bytes_, scale_count_;
  std::unique_ptr<uint8_t[], KvStoreFree> data_;  // (n_layer, n_blocks, rows_per_position, block_size, kv_dim) elements
  std::unique_ptr<float[], KvStoreFree> scales_;  // (n_layer, n_blocks, rows_per_position, block_size, n_kv_heads), scaled types only
};

}  // namespace ridge
