#pragma once
// What `ridge quantize --type` names: a GGUF file type (llama.cpp's llama_ftype: a default block
// type plus, for the _S/_M/_L mixes, rules that give some tensors more bits). The ids are the
// values written to general.file_type, so llama.cpp reads the same name back.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace ridge::quant {

enum class FileType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 7, Q5_0 = 8, Q5_1 = 9,
  Q2_K = 10, Q3_K_S = 11, Q3_K_M = 12, Q3_K_L = 13, Q4_K_S = 14, Q4_K_M = 15,
  Q5_K_S = 16, Q5_K_M = 17, Q6_K = 18, IQ2_XXS = 19, IQ2_XS = 20, Q2_K_S = 21, IQ3_XS = 22, IQ3_XXS = 23,
  IQ1_S = 24, IQ4_NL = 25, IQ3_S = 26, IQ3_M = 27, IQ2_S = 28, IQ2_M = 29, IQ4_XS = 30, IQ1_M = 31,
  BF16 = 32, TQ1_0 = 36, TQ2_0 = 37, MXFP4_MOE = 38, NVFP4 = 39,
};

struct FileTypeInfo {
  FileType type;
  std::string_view name;   // as llama-quantize spells it: "Q4_K_M"
  DType default_type;      // the block type of tensors no rule singles out
  std::string_view about;  // one line for --help
};

const std::vector<FileTypeInfo>& file_types();
const FileTypeInfo& file_type_info(FileType type);
// Case-insensitive ("q4_k_m"); nullopt when unknown.
std::optional<FileType> file_type_from_name(std::string_view name);

}  // namespace ridge::quant
