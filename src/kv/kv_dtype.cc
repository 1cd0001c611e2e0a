#include "kv/kv_dtype.h"

namespace ridge {

std::string_view kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::F16: return "f16";
    case KvDtype::BF16: return "bf16";
    case KvDtype::FP8_E4M3: return "fp8_e4m3";
    case KvDtype::INT8: return "int8";
  }
  return "?";
}

std::optional<KvDtype> parse_kv_dtype(std::string_view name) {
  if (name == "f16" || name == "fp16" || name == "auto") return KvDtype::F16;
  if (name == "bf16") return KvDtype::BF16;
  if (name == "fp8" || name == "fp8_e4m3" || name == "e4m3") return KvDtype::FP8_E4M3;
  if (name == "int8" || name == "i8") return KvDtype::INT8;
  return std::nullopt;
}

}  // namespace ridge
