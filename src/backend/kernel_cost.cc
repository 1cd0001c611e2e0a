#include "backend/kernel_cost.h"

namespace ridge {

std::string_view kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::Embed: return "embed";
    case KernelKind::Norm: return "rms_norm";
    case KernelKind::QuantizeAct: return "quantize_act";
    case KernelKind::Gemv: return "gemv";
    case KernelKind::Gemm: return "gemm";
    case KernelKind::Rope: return "rope";
    case KernelKind::KvWrite: return "kv_write";
    case KernelKind::Attention: return "attention";
    case KernelKind::Swiglu: return "swiglu";
    case KernelKind::Add: return "add";
    case KernelKind::Argmax: return "argmax";
    case KernelKind::Copy: return "copy";
    case KernelKind::kCount: break;
  }
  return "?";
}

KernelCost& KernelCost::operator+=(const KernelCost& o) {
  bytes += o.bytes;
  flops += o.flops;
  launches += o.launches;
  return *this;
}

KernelCost matmul_cost(int64_t weight_bytes, int64_t rows, int64_t cols, int64_t n_tokens, int64_t act_bytes,
                       bool accumulate) {
  const double out = double(n_tokens) * double(rows) * 4.0 * (accumulate ? 2.0 : 1.0);
  return {double(weight_bytes) + double(n_tokens) * double(cols) * double(act_bytes) + out,
          2.0 * double(rows) * double(cols) * double(n_tokens), 1};
}

KernelCost attention_cost(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t attended, int64_t kv_bytes) {
  const double q_and_out = 2.0 * double(n_tokens) * double(n_heads) * double(head_dim) * 4.0;
  return {double(kv_bytes) + q_and_out, 4.0 * double(n_heads) * double(head_dim) * double(attended), 1};
}

KernelCost elementwise_cost(int64_t elements, int reads, int writes, double flops_per_element) {
  return {double(elements) * 4.0 * double(reads + writes), double(elements) * flops_per_element, 1};
}

void CostLedger::add(KernelKind kind, const KernelCost& cost) { costs_[size_t(kind)] += cost; }

void CostLedger::add(const CostLedger& other) {
  for (int k = 0; k < kKernelKinds; ++k) costs_[size_t(k)] += other.costs_[size_t(k)];
}

KernelCost CostLedger::total() const {
  KernelCost t;
  for (const auto& c : costs_) t += c;
  return t;
}

CostLedger CostLedger::scaled(double factor) const {
  CostLedger out = *this;
  for (auto& c : out.costs_) {
    c.bytes *= factor;
    c.flops *= factor;
  }
  return out;
}

}  // namespace ridge
