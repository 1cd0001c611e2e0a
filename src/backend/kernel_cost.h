#pragma once
// Bytes and FLOPs each kernel of a forward step should move and do, summed per kernel family:
// what turns a measured time into achieved GB/s and TFLOP/s (`ridge bench run --device cuda`).
// The counts are the minimum traffic of each launch: every weight byte once, activations read and
// written once, K/V rows of every attended position once per sequence and kv head.
#include <array>
#include <cstdint>
#include <string_view>

namespace ridge {

enum class KernelKind { Embed, Norm, QuantizeAct, Gemv, Gemm, Rope, KvWrite, Attention, Swiglu, Add, Argmax, Copy, kCount };
inline constexpr int kKernelKinds = int(KernelKind::kCount);
std::string_view kernel_kind_name(KernelKind kind);

struct KernelCost {
  double bytes = 0;
  double flops = 0;
  int64_t launches = 0;
  KernelCost& operator+=(const KernelCost& o);
};

// y (n, rows) (+)= x (n, cols) · Wᵀ, W of weight_bytes; activations of act_bytes per element.
KernelCost matmul_cost(int64_t weight_bytes, int64_t rows, int64_t cols, int64_t n_tokens, int64_t act_bytes,
                       bool accumulate);
// n_tokens queries of n_heads heads attending `attended` positions in all (Σ position + 1), reading
// kv_bytes of K/V (and scales).
KernelCost attention_cost(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t attended, int64_t kv_bytes);
// An element-wise pass over `elements` f32 values reading `reads` arrays and writing `writes`.
KernelCost elementwise_cost(int64_t elements, int reads, int writes, double flops_per_element);

class CostLedger {
 public:
  void add(KernelKind kind, const KernelCost& cost);
  void add(const CostLedger& other);
  const KernelCost& operator[](KernelKind kind) const { return costs_[size_t(kind)]; }
  KernelCost total() const;
  void clear() { costs_ = {}; }
  CostLedger scaled(double factor) const;  // every figure times factor (per-step means)

 private:
  std::array<KernelCost, kKernelKinds> costs_{};
};

}  // namespace ridge
