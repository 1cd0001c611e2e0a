// The engine's PagedForward on a CUDA GPU: CudaForward over a DeviceKvStore.
#include "backend/cuda/cuda_entry.h"
#include "backend/cuda/cuda_forward.h"

namespace ridge::cuda {
namespace {

class CudaPagedForward final : public PagedForward {
 public:
  CudaPagedForward(const Model& model, const PagedForwardConfig& c)
      : forward_(model, options(c)), store_(forward_.kv_layout(c.block_size, c.n_blocks, c.kv_dtype)) {}

  const ModelSpec& spec() const override { return forward_.spec(); }
  Device device() const override { return Device::Cuda; }
  int64_t kv_bytes() const override { return store_.bytes(); }
  void copy_block(BlockId src, BlockId dst) override { store_.copy_block(src, dst, forward_.stream()); }
  void forward(const TokenBatch& batch, std::vector<float>& logits) override { forward_.forward(batch, store_, logits); }

 private:
  static CudaForwardOptions options(const PagedForwardConfig& c) {
    CudaForwardOptions o;
    o.n_ctx = c.n_ctx;
    return o;
  }
  CudaForward forward_;
  DeviceKvStore store_;
};

}  // namespace

std::unique_ptr<PagedForward> make_cuda_paged_forward(const Model& model, const PagedForwardConfig& config) {
  return std::make_unique<CudaPagedForward>(model, config);
}

}  // namespace ridge::cuda
