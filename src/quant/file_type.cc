#include "quant/file_type.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace ridge::quant {

const std::vector<FileTypeInfo>& file_types() {
  static const std::vector<FileTypeInfo> types = {
      {FileType::F32, "F32", DType::F32, "32-bit floats"},
      {FileType::F16, "F16", DType::F16, "16-bit floats"},
      {FileType::BF16, "BF16", DType::BF16, "bfloat16"},
      {FileType::Q8_0, "Q8_0", DType::Q8_0, "8.5 bits per weight, round to nearest"},
      {FileType::Q6_K, "Q6_K", DType::Q6_K, "6.56 bits per weight"},
      {FileType::Q5_1, "Q5_1", DType::Q5_1, "6 bits per weight, round to nearest"},
      {FileType::Q5_0, "Q5_0", DType::Q5_0, "5.5 bits per weight, round to nearest"},
      {FileType::Q5_K_M, "Q5_K_M", DType::Q5_K, "Q5_K, half of attn_v and ffn_down Q6_K"},
      {FileType::Q5_K_S, "Q5_K_S", DType::Q5_K, "Q5_K throughout"},
      {FileType::Q4_1, "Q4_1", DType::Q4_1, "5 bits per weight, round to nearest"},
      {FileType::Q4_0, "Q4_0", DType::Q4_0, "4.5 bits per weight, round to nearest"},
      {FileType::IQ4_NL, "IQ4_NL", DType::IQ4_NL, "4.5 bits per weight, non-linear levels, a scale per 32"},
      {FileType::IQ4_XS, "IQ4_XS", DType::IQ4_XS, "4.25 bits per weight, non-linear levels, 6-bit scales per 32"},
      {FileType::Q4_K_M, "Q4_K_M", DType::Q4_K, "Q4_K, half of attn_v and ffn_down Q6_K"},
      {FileType::Q4_K_S, "Q4_K_S", DType::Q4_K, "Q4_K, the first layers' attn_v and ffn_down Q5_K"},
      {FileType::Q3_K_L, "Q3_K_L", DType::Q3_K, "Q3_K, attn_v, attn_output and ffn_down Q5_K"},
      {FileType::Q3_K_M, "Q3_K_M", DType::Q3_K, "Q3_K, attn_v, attn_output and ffn_down Q4_K/Q5_K"},
      {FileType::Q3_K_S, "Q3_K_S", DType::Q3_K, "Q3_K throughout"},
      {FileType::IQ3_M, "IQ3_M", DType::IQ3_S, "IQ3_S, attn_v, attn_output and the first ffn_down Q4_K"},
      {FileType::IQ3_S, "IQ3_S", DType::IQ3_S, "3.44 bits per weight, a 512-entry grid of 4-vectors"},
      {FileType::IQ3_XS, "IQ3_XS", DType::IQ3_S, "IQ3_S, attn_q/k and the middle layers' ffn_gate/up IQ3_XXS"},
      {FileType::IQ3_XXS, "IQ3_XXS", DType::IQ3_XXS, "3.06 bits per weight, a 256-entry grid of 4-vectors (needs --imatrix)"},
      {FileType::Q2_K, "Q2_K", DType::Q2_K, "Q2_K, attn_v and ffn_down Q3_K/Q4_K"},
      {FileType::Q2_K_S, "Q2_K_S", DType::Q2_K, "Q2_K, a few first-layer tensors Q4_K (needs --imatrix)"},
      {FileType::IQ2_M, "IQ2_M", DType::IQ2_S, "IQ2_S, attn_v, attn_output and the first ffn_down IQ3_S (needs --imatrix)"},
      {FileType::IQ2_S, "IQ2_S", DType::IQ2_XS, "IQ2_XS, attn_v, attn_output and the first ffn_down IQ3_S (needs --imatrix)"},
      {FileType::IQ2_XS, "IQ2_XS", DType::IQ2_XS, "2.31 bits per weight, a 512-entry grid of 8-vectors (needs --imatrix)"},
      {FileType::IQ2_XXS, "IQ2_XXS", DType::IQ2_XXS, "2.06 bits per weight, a 256-entry grid of 8-vectors (needs --imatrix)"},
      {FileType::IQ1_M, "IQ1_M", DType::IQ1_M, "1.75 bits per weight, ternary 8-vectors, attn_output IQ2_XXS (needs --imatrix)"},
      {FileType::IQ1_S, "IQ1_S", DType::IQ1_S, "1.56 bits per weight, ternary 8-vectors, attn_output IQ2_XXS (needs --imatrix)"},
      {FileType::TQ2_0, "TQ2_0", DType::TQ2_0, "2.06 bits per weight, ternary (for ternary-trained models)"},
      {FileType::TQ1_0, "TQ1_0", DType::TQ1_0, "1.69 bits per weight, ternary (for ternary-trained models)"},
      {FileType::NVFP4, "NVFP4", DType::NVFP4, "4.5 bits per weight: E2M1, an E4M3 scale per 16, a factor per tensor"},
      {FileType::MXFP4_MOE, "MXFP4_MOE", DType::MXFP4, "MXFP4 (4.25 bits) for MoE experts, Q8_0 for the rest"},
  };
  return types;
}

const FileTypeInfo& file_type_info(FileType type) {
  for (const auto& t : file_types())
    if (t.type == type) return t;
  fail("unknown file type {}", uint32_t(type));
}

std::optional<FileType> file_type_from_name(std::string_view name) {
  const auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
  };
  for (const auto& t : file_types())
    if (same(t.name, name)) return t.type;
  return std::nullopt;
}

}  // namespace ridge::quant
