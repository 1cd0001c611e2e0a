#include "backend/paged_forward.h"

#include "model/forward.h"

namespace ridge {
namespace {

class CpuPagedForward final : public PagedForward {
 public:
  CpuPagedForward(const Model& model, const PagedForwardConfig& c)
      : forward_(model, c.n_threads), store_(forward_.kv_layout(c.block_size, c.n_blocks, c.kv_dtype), c.kv_allocator) {}

  const ModelSpec& spec() const override { return forward_.spec(); }
  Device device() const override { return Device::Cpu; }
  int64_t kv_bytes() const override { return store_.bytes(); }
  void copy_block(BlockId src, BlockId dst) override { store_.copy_block(src, dst); }
  void forward(const TokenBatch& batch, std::vector<float>& logits) override { forward_.forward(batch, store_, logits); }
  const MoeStats* moe_stats() const override { return spec().is_moe() ? &forward_.moe_stats() : nullptr; }
  KvStore* host_kv_store() override { return &store_; }

 private:
  ModelForward forward_;
  KvStore store_;
};

}  // namespace

std::unique_ptr<PagedForward> make_cpu_paged_forward(const Model& model, const PagedForwardConfig& config) {
  return std::make_unique<CpuPagedForward>(model, config);
}

}  // namespace ridge
