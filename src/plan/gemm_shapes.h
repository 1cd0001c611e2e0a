#pragma once
// GEMM shape analysis (the second seed): each linear layer as C = A B with A the (M x K) input
// activations, B the (K x N) weights, C the (M x N) output. FLOPs 2MNK; read bytes
// M K bytes_A + N K bytes_B; write bytes M N bytes_C. Math, read and write time on a device, and
// the work lost to tile quantization when N is not a multiple of the tile.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/cost_model.h"
#include "plan/hardware.h"

namespace ridge::plan {

struct GemmFormats {
  NumberFormat a = number_format("bf16");  // input activations
  NumberFormat b = number_format("bf16");  // weights
  NumberFormat c = number_format("bf16");  // output
};

// The tiles the second seed names: 128 (one SM), 256 (clusterMMA, 2 SMs), 512 (a CGA of SMs).
inline constexpr int64_t kGemmTiles[] = {128, 256, 512};

struct GemmShape {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
  double flops = 0;
  double read_bytes = 0;
  double write_bytes = 0;
  double math_s = 0;
  double read_s = 0;
  double write_s = 0;
  double tile_waste[3] = {0, 0, 0};  // fraction of launched work on padding, per kGemmTiles entry
  double intensity() const { return flops / (read_bytes + write_bytes); }
  // The roofline with reads and writes sharing the bus.
  double seconds() const { return std::max(math_s, read_s + write_s); }
  bool memory_bound() const { return read_s + write_s > math_s; }
};

GemmShape gemm_shape(const std::string& name, int64_t m, int64_t n, int64_t k, const GemmFormats& formats,
                     const HardwareSpec& hw);

// Waste of padding `extent` up to a multiple of `tile`: 1 - extent / padded.
double tile_waste(int64_t extent, int64_t tile);

// One row per linear layer of the model (and the output head) for `tokens` rows of activations;
// routed experts see tokens x top-k / experts rows each.
std::vector<GemmShape> model_gemm_shapes(const ModelSpec& spec, int64_t tokens, const GemmFormats& formats,
                                         const HardwareSpec& hw);

}  // namespace ridge::plan
