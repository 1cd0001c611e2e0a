#pragma once
// The forward pass as the engine steps it, whatever the device: one model pass together with the
// paged KV store it reads and writes (host memory for the CPU, device memory for CUDA). The
// backend is picked once (make_paged_forward in backend/device.h); a step is one virtual call.
#include <cstdint>
#include <string_view>
#include <vector>

#include "backend/device.h"
#include "kv/kv_store.h"
#include "model/moe_stats.h"
#include "model/token_batch.h"

namespace ridge {

namespace dist {
struct Parallel;
}

struct PagedForwardConfig {
  Device device = Device::Cpu;
  int n_threads = 0;       // CPU threads (<= 0: one per core)
  KvDtype kv_dtype = KvDtype::F16;
  int32_t block_size = 16;
  int32_t n_blocks = 1;
  int64_t n_ctx = 0;       // longest sequence (CUDA: RoPE table and decode graphs are sized by it)
  dist::Parallel* parallel = nullptr;  // set and distributed: the model is split across ranks (dist/lockstep.h)
  const KvAllocator* kv_allocator = nullptr;  // CPU: the KV store's memory from a KV transport
};

class PagedForward {
 public:
  virtual ~PagedForward() = default;
  virtual const ModelSpec& spec() const = 0;
  virtual Device device() const = 0;
  virtual int64_t kv_bytes() const = 0;
  // Copy-on-write: block dst becomes a copy of block src in every layer.
  virtual void copy_block(BlockId src, BlockId dst) = 0;
  // ModelForward::forward's contract over the owned KV store: logits (logits_rows(batch), n_vocab).
  virtual void forward(const TokenBatch& batch, std::vector<float>& logits) = 0;
  // Tokens routed to each expert of each MoE layer so far; nullptr for dense models.
  virtual const MoeStats* moe_stats() const { return nullptr; }
  // The KV store in host memory (the CPU pass), which a KV transfer reads and writes; else nullptr.
  virtual KvStore* host_kv_store() { return nullptr; }
};

// The CPU pass: ModelForward over a KvStore.
std::unique_ptr<PagedForward> make_cpu_paged_forward(const Model& model, const PagedForwardConfig& config);

}  // namespace ridge
