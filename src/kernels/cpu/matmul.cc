#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/gelu_table.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"

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
bool uses_amx(Isa isa, DType type, int64_t n_tokens) {
  return isa == Isa::Avx512Vnni && (type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0) &&
         n_tokens >= kAmxMinTokens && amx_usable();
}
PackedDotFn packed_dot_for(Isa isa, DType type, int64_t n_tokens) {
  if (isa == Isa::AvxVnni) return packed_dot_avxvnni;
  if (isa == Isa::Avx2) return packed_dot_avx2;
  if (isa != Isa::Avx512Vnni) return packed_dot_scalar;
  return uses_amx(isa, type, n_tokens) ? packed_dot_amx : packed_dot_avx512vnni;
}

void apply_prologue(const MatmulPrologue& p, const float* x, int64_t t, int64_t cols, float* out) {
  if (p.kind == MatmulPrologue::Kind::RmsNorm) return ref::rms_norm(x, p.norm_weight, 1, cols, p.eps, out);
  std::copy(x, x + cols, out);
  if (p.kind == MatmulPrologue::Kind::GeGlu) return geglu_table(out, p.up + t * cols, cols);
  swiglu(out, p.up + t * cols, cols);
}

// RIDGE_F32_ACTIVATIONS=1: every weight dequantized a row at a time and dotted with the f32
// activations (slow; to measure what quantizing activations to int8 costs in accuracy).
bool f32_activations() {
  static const bool on = [] {
    const char* env = std::getenv("RIDGE_F32_ACTIVATIONS");
    return env && std::strcmp(env, "1") == 0;
  }();
  return on;
}

// Which kernel reads a job's weights; a prefill input's (MatmulInput::prefill) where AMX BF16 takes
// them, except the int8 group types (Q3_K, IQ4_XS, the ternary types, the codebook i-quants): their
// many-token int8 kernel decodes each weight group once per 128 tokens, where the BF16 path would
// dequantize the whole matrix a row at a time on every call.
enum class Path { Packed, Quant, Bf16, Float, Dequantized, Bf16Tiles };
Path path_of(const MatmulJob& job, Isa isa, const MatmulInput& input) {
  if (f32_activations()) return Path::Dequantized;
  if (input.prefill && isa == Isa::Avx512Vnni && amx_bf16_usable() && !int8_group_type(job.w.type) &&
      bf16_gemm_supported(job.w.type, job.w.packed))
    return Path::Bf16Tiles;
  if (job.w.packed) return Path::Packed;
  if (quant_dot_supported(job.w.type)) return Path::Quant;
  if (job.w.type == DType::BF16 && isa == Isa::Avx512Vnni && bf16_dot_usable()) return Path::Bf16;
  if (float_dot_supported(job.w.type) && isa != Isa::Scalar) return Path::Float;
  return Path::Dequantized;
}

}  // namespace

void matmul(std::span<const MatmulJob> jobs, const float* x, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch,
            Isa isa, const MatmulPrologue& prologue, bool prefill) {
  if (jobs.empty() || n_tokens == 0) return;
  const MatmulInput input{x, n_tokens, prologue, prefill};
  scratch.grouped.clear();
  for (const MatmulJob& job : jobs) scratch.grouped.push_back({job, 0});
  matmul_grouped(std::span(&input, 1), scratch.grouped, pool, scratch, isa);
}

void matmul_grouped(std::span<const MatmulInput> inputs, std::span<const GroupedMatmulJob> jobs, ThreadPool& pool,
                    MatmulScratch& scratch, Isa isa) {
  if (jobs.empty()) return;
  const int64_t cols = jobs[0].job.w.cols;
  int64_t total_units = 0;
  bool any_quant = false, any_float = false, any_bf16 = false;  // int8 blocks, f32 rows, bf16 rows
  auto& tile_first = scratch.input_tile_first;
  tile_first.assign(inputs.size(), -1);
  auto& bf16_tile_first = scratch.input_bf16_tile_first;  // -1: no job reads this input on AMX BF16
  bf16_tile_first.assign(inputs.size(), -1);
  auto& quantized = scratch.input_quantized;  // some job reads this input as int8 blocks
  quantized.assign(inputs.size(), 0);
  for (const auto& [job, input] : jobs) {
    if (job.w.cols != cols) fail("matmul jobs disagree on the input width ({} vs {})", job.w.cols, cols);
    if (input < 0 || input >= int32_t(inputs.size())) fail("matmul job names input {} of {}", input, inputs.size());
    if (job.w.packed && !packable(job.w.type)) fail("a packed matrix of type {} has no kernel", dtype_name(job.w.type));
    total_units += (job.w.rows + unit_rows(job) - 1) / unit_rows(job);
    const Path path = path_of(job, isa, inputs[size_t(input)]);  // what the input must be made into
    any_quant = any_quant || path == Path::Packed || path == Path::Quant;
    if (path == Path::Packed || path == Path::Quant) quantized[size_t(input)] = 1;
    if (path == Path::Bf16Tiles) bf16_tile_first[size_t(input)] = 0;
    any_float = any_float || path == Path::Float || path == Path::Dequantized;
    any_bf16 = any_bf16 || path == Path::Bf16;
    if (path == Path::Packed && uses_amx(isa, job.w.type, inputs[size_t(input)].n_tokens)) tile_first[size_t(input)] = 0;
  }
  // Each input's first token among all inputs' tokens: where its rows sit in the shared buffers.
  auto& first = scratch.input_first;
  first.assign(inputs.size() + 1, 0);
  bool transform = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    first[i + 1] = first[i] + inputs[i].n_tokens;
    transform = transform || inputs[i].prologue.kind != MatmulPrologue::Kind::None;
  }
  const int64_t all_tokens = first.back();
  if (all_tokens == 0) return;
  const int64_t n_blocks = cols / kActBlock;
  const bool keep = transform && any_float;  // the f32 kernels read the transformed rows
  if (keep) scratch.transformed.resize(size_t(all_tokens * cols));
  if (any_quant) scratch.acts.resize(size_t(all_tokens * n_blocks));
  if (any_bf16) scratch.bf16.resize(size_t(all_tokens * cols));
  // The AMX BF16 kernel's tiles of each prefill input it reads, written row by row below.
  const int64_t bf16_tile_words = cols / kBf16StepValues * kBf16StepWords;
  int64_t n_bf16_tiles = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (bf16_tile_first[i] >= 0) bf16_tile_first[i] = n_bf16_tiles, n_bf16_tiles += (inputs[i].n_tokens + 15) / 16;
  if (n_bf16_tiles > 0) {
    scratch.bf16_tiles.resize(size_t(n_bf16_tiles * bf16_tile_words));
    for (size_t i = 0; i < inputs.size(); ++i)  // the rows past a last partial tile's tokens stay zero
      if (bf16_tile_first[i] >= 0)
        for (int64_t t = inputs[i].n_tokens; t % 16 != 0; ++t)
          put_activation_row_bf16(nullptr, cols, t % 16,
                                  scratch.bf16_tiles.data() + (bf16_tile_first[i] + t / 16) * bf16_tile_words);
  }
  if (any_quant || keep || any_bf16 || n_bf16_tiles > 0) {  // a token per part: its row transformed (kept, or in a row buffer), then quantized
    pool.parallel_for(all_tokens, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> row;
      size_t i = size_t(std::upper_bound(first.begin(), first.end(), begin) - first.begin()) - 1;
      for (int64_t g = begin; g < end; ++g) {
        while (first[i + 1] <= g) ++i;
        const MatmulInput& in = inputs[i];
        const int64_t t = g - first[i];
        const float* row_in = in.x + t * cols;
        if (in.prologue.kind != MatmulPrologue::Kind::None) {
          float* out = keep ? scratch.transformed.data() + g * cols : (row.resize(size_t(cols)), row.data());
          apply_prologue(in.prologue, row_in, t, cols, out);
          row_in = out;
        } else if (keep) {
          std::copy(row_in, row_in + cols, scratch.transformed.data() + g * cols);
        }
        if (quantized[i]) quantize_activations(row_in, cols, scratch.acts.data() + g * n_blocks);
        if (any_bf16) to_bf16_avx512(row_in, cols, scratch.bf16.data() + g * cols);
        if (bf16_tile_first[i] >= 0)
          put_activation_row_bf16(row_in, cols, t % 16,
                                  scratch.bf16_tiles.data() + (bf16_tile_first[i] + t / 16) * bf16_tile_words);
      }
    });
  }
  // The AMX kernel's tiled copy of each input it reads, made once for all threads.
  int64_t n_tiles = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (tile_first[i] >= 0) tile_first[i] = n_tiles, n_tiles += (inputs[i].n_tokens + kTileTokens - 1) / kTileTokens;
  if (n_tiles > 0) {
    scratch.tiled_q.resize(size_t(n_tiles * n_blocks * kTiledBlockBytes));
    scratch.tiled_scales.resize(size_t(n_tiles * n_blocks * kTiledBlockScales));
    pool.parallel_for(n_tiles, 1, [&](int64_t begin, int64_t end) {
      size_t i = 0;
      for (int64_t g = begin; g < end; ++g) {
        while (tile_first[i] < 0 || g >= tile_first[i] + (inputs[i].n_tokens + kTileTokens - 1) / kTileTokens) ++i;
        tile_activations(scratch.acts.data() + first[i] * n_blocks, inputs[i].n_tokens, n_blocks, g - tile_first[i],
                         scratch.tiled_q.data() + g * n_blocks * kTiledBlockBytes,
                         scratch.tiled_scales.data() + g * n_blocks * kTiledBlockScales);
      }
    });
  }
  scratch.rows.resize(size_t(pool.size()));
  const QuantDotFn quant_dot = quant_dot_for(isa);
  const DotF32Fn dot_f32 = dot_f32_for(isa);

  pool.run([&](int thread, int n_threads) {
    const Range mine = split_range(total_units, 1, thread, n_threads);
    int64_t job_start = 0;  // first global unit of the current job
    for (const auto& [job, input] : jobs) {
      const int64_t unit = unit_rows(job), job_units = (job.w.rows + unit - 1) / unit;
      const int64_t begin = (std::max(mine.begin, job_start) - job_start) * unit;
      const int64_t end = std::min((std::min(mine.end, job_start + job_units) - job_start) * unit, job.w.rows);
      job_start += job_units;
      if (begin >= end) continue;
      const int64_t t0 = first[size_t(input)], n_tokens = inputs[size_t(input)].n_tokens;
      if (n_tokens == 0) continue;
      const float* x = keep ? scratch.transformed.data() + t0 * cols : inputs[size_t(input)].x;
      const ActBlock* acts = any_quant ? scratch.acts.data() + t0 * n_blocks : nullptr;
      const auto* w = static_cast<const uint8_t*>(job.w.data);
      const int64_t row_bytes = dtype_row_bytes(job.w.type, cols);
      switch (path_of(job, isa, inputs[size_t(input)])) {
        case Path::Bf16Tiles:
          bf16_gemm_amx({job.w.type, w, job.w.packed, job.w.rows, cols, begin, end,
                         scratch.bf16_tiles.data() + bf16_tile_first[size_t(input)] * bf16_tile_words, n_tokens, job.y,
                         job.w.rows});
          break;
        case Path::Packed: {
          PackedDotTask task{job.w.type, w, job.w.rows, n_blocks, begin, end, acts, n_tokens, job.y, job.w.rows};
          if (const int64_t tile = tile_first[size_t(input)]; tile >= 0)  // set only where the AMX kernel runs
            task.tiled = {scratch.tiled_q.data() + tile * n_blocks * kTiledBlockBytes,
                          scratch.tiled_scales.data() + tile * n_blocks * kTiledBlockScales};
          packed_dot_for(isa, job.w.type, n_tokens)(task);
          break;
        }
        case Path::Quant:
          quant_dot({job.w.type, w, row_bytes, n_blocks, begin, end, acts, n_tokens, job.y, job.w.rows});
          break;
        case Path::Bf16:
          bf16_dot_avx512({w, row_bytes, cols, begin, end, scratch.bf16.data() + t0 * cols, n_tokens, job.y, job.w.rows});
          break;
        case Path::Float:
          (job.w.type == DType::F8_E4M3 && isa == Isa::Avx512Vnni ? fp8_dot_avx512 : float_dot_avx2)(
              {job.w.type, w, row_bytes, cols, begin, end, x, n_tokens, job.y, job.w.rows, job.w.group_scales, job.w.group_cols});
          break;
        case Path::Dequantized: {
          auto& row = scratch.rows[size_t(thread)];
          row.resize(size_t(cols));
          for (int64_t r = begin; r < end; ++r) {
            if (job.w.packed) {
              dequantize_packed_row(job.w.type, w, job.w.rows, cols, r, row.data());
            } else {
              ref::dequantize_row(job.w.type, w + r * row_bytes, row.data(), cols);
              ref::apply_group_scales(job.w, r, row.data());
            }
            for (int64_t t = 0; t < n_tokens; ++t) job.y[t * job.w.rows + r] = dot_f32(row.data(), x + t * cols, cols);
          }
          break;
        }
      }
      // The per-tensor factor, on the rows this thread just wrote (still in cache).
      if (job.w.scale != 1.0f)
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t r = begin; r < end; ++r) job.y[t * job.w.rows + r] *= job.w.scale;
    }
  });
}

}  // namespace ridge::cpu
