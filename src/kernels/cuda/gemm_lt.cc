// GEMMs for prefill and large decode batches through cuBLASLt: BF16 (f32 accumulate and output)
// and FP8 E4M3 (Hopper) with per-tensor scales. ridge's matrices are row-major (rows = output
// features); in cuBLASLt's column-major terms y (n, rows) is D (rows x n) = op(A)ᵀ·B with A the
// weight as a (cols x rows) column-major matrix transposed ("TN", the layout FP8 requires).
// The algorithm for each shape is chosen once by the heuristic and kept.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <tuple>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"

namespace ridge::cuda {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail("cuBLASLt: {} failed with status {}", what, int(status));
}

enum Kind { kBf16 = 0, kFp8 = 1 };

}  // namespace

struct GemmLt::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (op) cublasLtMatmulDescDestroy(op);
    for (auto* l : {a, b, c, d})
      if (l) cublasLtMatrixLayoutDestroy(l);
  }
};

struct GemmLt::Plans {
  std::map<std::tuple<int, int64_t, int64_t, int64_t, bool>, std::unique_ptr<Plan>> by_shape;
};

GemmLt::GemmLt(int64_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  check_lt(cublasLtCreate(&h), "cublasLtCreate");
  handle_ = h;
  workspace_ = device_malloc(workspace_bytes_);
  plans_ = new Plans;
}

GemmLt::~GemmLt() {
  delete plans_;
  device_free(workspace_);
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

GemmLt::Plan& GemmLt::plan_for(int kind, int64_t rows, int64_t cols, int64_t n, bool accumulate) {
  auto& slot = plans_->by_shape[{kind, rows, cols, n, accumulate}];
  if (slot) return *slot;
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t in = kind == kFp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  const cudaDataType_t out = kind == kFp8 ? CUDA_R_16BF : CUDA_R_32F;
  check_lt(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "TRANSA");
  check_lt(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb), "TRANSB");
  if (kind == kFp8) {
    // Placeholders so the heuristic sees scaled FP8; the real pointers are set per call.
    const void* none = nullptr;
    check_lt(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &none, sizeof none), "A scale");
    check_lt(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &none, sizeof none), "B scale");
  }
  check_lt(cublasLtMatrixLayoutCreate(&plan->a, in, uint64_t(cols), uint64_t(rows), cols), "A layout");
  check_lt(cublasLtMatrixLayoutCreate(&plan->b, in, uint64_t(cols), uint64_t(n), cols), "B layout");
  check_lt(cublasLtMatrixLayoutCreate(&plan->c, out, uint64_t(rows), uint64_t(n), rows), "C layout");
  check_lt(cublasLtMatrixLayoutCreate(&plan->d, out, uint64_t(rows), uint64_t(n), rows), "D layout");

  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const uint64_t ws = uint64_t(workspace_bytes_);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->op, plan->a,
                                                           plan->b, plan->c, plan->d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_lt(st, "algorithm heuristic");
  if (found == 0)
    fail("cuBLASLt: no {} algorithm for ({} x {}) x ({} tokens)", kind == kFp8 ? "FP8" : "BF16", rows, cols, n);
  plan->algo = result.algo;
  slot = std::move(plan);
  return *slot;
}

void GemmLt::bf16(const uint16_t* w, const uint16_t* x, float* y, int64_t rows, int64_t cols, int64_t n, bool accumulate,
                  Stream s) {
  if (n <= 0) return;
  Plan& p = plan_for(kBf16, rows, cols, n, accumulate);
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check_lt(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.d,
                          &p.algo, workspace_, size_t(workspace_bytes_), static_cast<cudaStream_t>(s)),
           "BF16 matmul");
}

void GemmLt::fp8(const uint8_t* w, const uint8_t* x, uint16_t* y, int64_t rows, int64_t cols, int64_t n,
                 const float* scale_w, const float* scale_x, Stream s) {
  if (n <= 0) return;
  if (rows % 16 != 0 || cols % 16 != 0 || n % 16 != 0) fail("cuBLASLt FP8: dimensions must be multiples of 16");
  Plan& p = plan_for(kFp8, rows, cols, n, false);
  check_lt(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_w, sizeof scale_w), "A scale");
  check_lt(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_x, sizeof scale_x), "B scale");
  const float alpha = 1.0f, beta = 0.0f;
  check_lt(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.d,
                          &p.algo, workspace_, size_t(workspace_bytes_), static_cast<cudaStream_t>(s)),
           "FP8 matmul");
}

}  // namespace ridge::cuda
