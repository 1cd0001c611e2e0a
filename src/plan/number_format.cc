#include "plan/number_format.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace ridge::plan {
namespace {

const std::vector<NumberFormat>& serving_formats() {
  static const std::vector<NumberFormat> formats = {
      {"f32", 32, ComputeClass::F32, false},
      {"bf16", 16, ComputeClass::BF16, false},
      {"fp16", 16, ComputeClass::BF16, false},
      {"fp8", 8, ComputeClass::FP8, false},
      {"int8", 8, ComputeClass::INT8, false},
      {"int4", 4, ComputeClass::BF16, true},
      {"fp4", 4, ComputeClass::FP4, false},
      {"nvfp4", 4 + 8.0 / 16, ComputeClass::FP4, false},
      {"mxfp4", 4 + 8.0 / 32, ComputeClass::FP4, false},
  };
  return formats;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

}  // namespace

std::string_view compute_class_name(ComputeClass c) {
  switch (c) {
    case ComputeClass::F32: return "f32";
    case ComputeClass::BF16: return "bf16";
    case ComputeClass::FP8: return "fp8";
    case ComputeClass::INT8: return "int8";
    case ComputeClass::FP4: return "fp4";
  }
  return "?";
}

NumberFormat number_format_from_dtype(DType type) {
  const DTypeInfo& info = dtype_info(type);
  NumberFormat f;
  f.name = lower(info.name);
  f.bits = 8.0 * double(info.block_bytes) / double(info.block_size);
  if (type == DType::F32 || type == DType::F64) {
    f.compute = ComputeClass::F32;
  } else if (type == DType::F16 || type == DType::BF16) {
    f.compute = ComputeClass::BF16;
  } else {
    // Block-quantized: fast CPU kernels quantize activations to 8 bits and use integer dot products.
    f.compute = ComputeClass::INT8;
    f.weight_only = true;
  }
  return f;
}

std::optional<NumberFormat> find_number_format(std::string_view name) {
  const std::string key = lower(name);
  for (const auto& f : serving_formats())
    if (f.name == key) return f;
  if (key == "e4m3" || key == "fp8_e4m3") return find_number_format("fp8");
  if (key == "f16") return find_number_format("fp16");
  if (auto dtype = dtype_from_name(name)) return number_format_from_dtype(*dtype);
  return std::nullopt;
}

NumberFormat number_format(std::string_view name) {
  if (auto f = find_number_format(name)) return *f;
  std::string known;
  for (const auto& n : number_format_names()) known += (known.empty() ? "" : ", ") + n;
  fail("unknown number format '{}' (known: {}, or a GGUF type such as q4_k)", name, known);
}

std::vector<std::string> number_format_names() {
  std::vector<std::string> names;
  for (const auto& f : serving_formats()) names.push_back(f.name);
  return names;
}

ComputeClass gemm_compute(const NumberFormat& weights, const NumberFormat& activations) {
  if (!weights.weight_only) return weights.compute;
  // GGUF blocks keep their integer-dot path when activations are wide (the CPU case).
  if (weights.compute == ComputeClass::INT8 && activations.compute == ComputeClass::F32) return ComputeClass::INT8;
  return activations.compute;
}

}  // namespace ridge::plan
