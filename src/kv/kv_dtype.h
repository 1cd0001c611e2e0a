#pragma once
// Element types of the KV cache. F16 is the default (llama.cpp's and vLLM's); BF16 keeps f32's
// range; FP8 E4M3 and INT8 halve the bytes per token again (scaled per token and head).
#include <cstdint>
#include <optional>
#include <string_view>

namespace ridge {

enum class KvDtype { F16, BF16, FP8_E4M3, INT8 };

std::string_view kv_dtype_name(KvDtype dtype);
std::optional<KvDtype> parse_kv_dtype(std::string_view name);  // "f16", "bf16", "fp8" / "fp8_e4m3", "int8"

}  // namespace ridge
