#include "kernels/cpu/matmul.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {
namespace {

using QuantDotFn = void (*)(const QuantDotTask&);
using DotF32Fn = float (*)(const float*, const float*, int64_t);

QuantDotFn quant_dot_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512Vnni: return quant_dot_avx512vnni;
    case Isa::AvxVnni: return quant_dot_avxvnni;
    case Isa::Avx2: return quant_dot_avx2;
    case Isa::Scalar: return quant_dot_scalar;
  }
  return quant_dot_scalar;
}

DotF32Fn dot_f32_for(Isa isa) { return isa == Isa::Scalar ? dot_f32_scalar : dot_f32_avx2; }

// Rows handed to a thread at a time: enough to amortise the loop, few enough to balance small
// matrices; a packed matrix is handed out in whole tiles.
constexpr int64_t kRowGrain = 8;
int64_t unit_rows(const MatmulJob& job) { return job.w.packed ? kTileRows : kRowGrain; }

using PackedDotFn = void (*)(const PackedDotTask&);
// AMX pays off once a tile of tokens is nearly full; every choice gives the same bits.
constexpr int64_t kAmxMinTokens = 16;
PackedDotFn packed_dot_for(Isa isa, int64_t n_tokens) {
  if (isa != Isa::Avx512Vnni) return packed_dot_scalar;
  return n_tokens >= kAmxMinTokens && amx_usable() ? packed_dot_amx : packed_dot_avx512vnni;
}

}  // namespace

void matmul(std::span<const MatmulJob> jobs, const float* x, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch,
            Isa isa) {
  if (jobs.empty() || n_tokens == 0) return;
  const int64_t cols = jobs[0].w.cols;
  int64_t total_units = 0;
  bool any_quant = false;
  for (const auto& job : jobs) {
    if (job.w.cols != cols) fail("matmul jobs disagree on the input width ({} vs {})", job.w.cols, cols);
    if (job.w.packed && !packable(job.w.type)) fail("a packed matrix of type {} has no kernel", dtype_name(job.w.type));
    total_units += (job.w.rows + unit_rows(job) - 1) / unit_rows(job);
    any_quant = any_quant || quant_dot_supported(job.w.type) || job.w.packed;
  }
  const int64_t n_blocks = cols / kActBlock;
  if (any_quant) {  // activations quantized once per call, a token per part
    scratch.acts.resize(size_t(n_tokens * n_blocks));
    ActBlock* acts = scratch.acts.data();
    pool.parallel_for(n_tokens, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) quantize_activations(x + t * cols, cols, acts + t * n_blocks);
    });
  }
  scratch.rows.resize(size_t(pool.size()));
  const QuantDotFn quant_dot = quant_dot_for(isa);
  const DotF32Fn dot_f32 = dot_f32_for(isa);
  const PackedDotFn packed_dot = packed_dot_for(isa, n_tokens);

  pool.run([&](int thread, int n_threads) {
    const Range mine = split_range(total_units, 1, thread, n_threads);
    int64_t job_start = 0;  // first global unit of the current job
    for (const auto& job : jobs) {
      const int64_t unit = unit_rows(job), job_units = (job.w.rows + unit - 1) / unit;
      const int64_t begin = (std::max(mine.begin, job_start) - job_start) * unit;
      const int64_t end = std::min((std::min(mine.end, job_start + job_units) - job_start) * unit, job.w.rows);
      job_start += job_units;
      if (begin >= end) continue;
      const auto* w = static_cast<const uint8_t*>(job.w.data);
      if (job.w.packed) {
        packed_dot({job.w.type, w, job.w.rows, n_blocks, begin, end, scratch.acts.data(), n_tokens, job.y, job.w.rows});
        continue;
      }
      const int64_t row_bytes = dtype_row_bytes(job.w.type, cols);
      if (quant_dot_supported(job.w.type)) {
        quant_dot({job.w.type, w, row_bytes, n_blocks, begin, end, scratch.acts.data(), n_tokens, job.y, job.w.rows});
        continue;
      }
      if (float_dot_supported(job.w.type) && isa != Isa::Scalar) {
        float_dot_avx2({job.w.type, w, row_bytes, cols, begin, end, x, n_tokens, job.y, job.w.rows});
        continue;
      }
      auto& row = scratch.rows[size_t(thread)];
      row.resize(size_t(cols));
      for (int64_t r = begin; r < end; ++r) {
        ref::dequantize_row(job.w.type, w + r * row_bytes, row.data(), cols);
        for (int64_t t = 0; t < n_tokens; ++t) job.y[t * job.w.rows + r] = dot_f32(row.data(), x + t * cols, cols);
      }
    }
  });
}

}  // namespace ridge::cpu
