#pragma once
// Storage formats the planner prices: how many bits one value takes (block scales included) and
// which math rate a matrix multiply on it runs at. Covers the serving formats (BF16, FP8, INT4,
// NVFP4, ...) and every GGUF type, whose size comes from core/dtype.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace ridge::plan {

// The tensor-core (or SIMD) rate a GEMM runs at; hardware lists a peak for each.
enum class ComputeClass { F32, BF16, FP8, INT8, FP4 };
std::string_view compute_class_name(ComputeClass c);

struct NumberFormat {
  std::string name;                    // "bf16", "fp8", "nvfp4", "q4_1"
  double bits = 16;                    // per value, block scales included
  ComputeClass compute = ComputeClass::BF16;
  // Stored narrow but multiplied at the activations' precision (AWQ/GPTQ INT4, GGUF blocks on GPUs):
  // it saves bytes, not math.
  bool weight_only = false;

  double bytes() const { return bits / 8.0; }
};

// "bf16", "fp16", "f32", "fp8", "int8", "int4", "fp4", "nvfp4", "mxfp4", or a GGUF type name
// ("q4_1", "Q8_0"). int4 and fp4 are the nominal 4 bits the first seed's table uses; nvfp4 and
// mxfp4 add their block scales (FP8 per 16 values, E8M0 per 32).
std::optional<NumberFormat> find_number_format(std::string_view name);
NumberFormat number_format(std::string_view name);  // Error listing the known names
NumberFormat number_format_from_dtype(DType type);
std::vector<std::string> number_format_names();  // the serving formats (GGUF types are accepted too)

// The math a GEMM with these weights and activations runs at: weight-only formats compute at the
// activations' rate, native low-precision formats at their own.
ComputeClass gemm_compute(const NumberFormat& weights, const NumberFormat& activations);

}  // namespace ridge::plan
