#include "plan/gemm_shapes.h"

#include <algorithm>
#include <cmath>

namespace ridge::plan {

double tile_waste(int64_t extent, int64_t tile) {
  const int64_t padded = (extent + tile - 1) / tile * tile;
  return padded > 0 ? 1.0 - double(extent) / double(padded) : 0.0;
}

GemmShape gemm_shape(const std::string& name, int64_t m, int64_t n, int64_t k, const GemmFormats& formats,
                     const HardwareSpec& hw) {
  GemmShape g;
  g.name = name;
  g.m = m;
  g.n = n;
  g.k = k;
  g.flops = 2.0 * double(m) * double(n) * double(k);
  g.read_bytes = double(m) * double(k) * formats.a.bytes() + double(n) * double(k) * formats.b.bytes();
  g.write_bytes = double(m) * double(n) * formats.c.bytes();
  // A narrow-input GEMM runs at the narrower input's native rate (FP4 x FP4 on Blackwell).
  const ComputeClass compute = gemm_compute(formats.b, formats.a);
  g.math_s = g.flops / hw.peak(compute);
  g.read_s = g.read_bytes / hw.memory_bw;
  g.write_s = g.write_bytes / hw.memory_bw;
  for (size_t i = 0; i < std::size(kGemmTiles); ++i) g.tile_waste[i] = tile_waste(n, kGemmTiles[i]);
  return g;
}

std::vector<GemmShape> model_gemm_shapes(const ModelSpec& spec, int64_t tokens, const GemmFormats& formats,
                                         const HardwareSpec& hw) {
  std::vector<GemmShape> out;
  for (const auto& lin : model_linears(spec)) {
    int64_t m = tokens;
    if (lin.routed()) m = int64_t(std::ceil(double(tokens) * double(lin.n_used) / double(lin.n_copies)));
    out.push_back(gemm_shape(lin.name, m, lin.n_out, lin.n_in, formats, hw));
  }
  out.push_back(gemm_shape("output_head", tokens, spec.n_vocab, spec.n_embd, formats, hw));
  return out;
}

}  // namespace ridge::plan
