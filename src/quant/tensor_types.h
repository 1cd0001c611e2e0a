#pragma once
// Which block type each tensor of a model gets under a file type: llama.cpp's rules
// (llama_tensor_get_type in its quantizer), so a ridge Q4_K_M file has the tensor types a
// llama-quantize Q4_K_M file has. Pure: names, shapes and a few hyperparameters in, types out.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "quant/file_type.h"

namespace ridge::quant {

struct TensorDesc {
  std::string name;
  DType type;                  // as stored in the input
  std::vector<int64_t> shape;  // GGUF order: shape[0] is the row
};

struct ModelHints {
  std::string arch;       // general.architecture
  int64_t n_layer = 0;    // {arch}.block_count
  int64_t n_head = 0, n_head_kv = 0;
  int64_t n_expert = 0;   // 0 or 1: dense
};

struct TypeChoice {
  bool quantize = false;  // false: the tensor is copied as it is (norms, biases, 1-D tensors)
  DType type = DType::F32;
  bool fell_back = false;  // the row length does not fit the chosen type; a 32-block or F16 type took its place
  // The type is one llama-quantize refuses to write without importance weights (IQ1_S, IQ1_M,
  // IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS; Q2_K in a Q2_K_S file), except for token_embd and output.
  bool needs_imatrix = false;
};

struct TypeRules {
  FileType file_type = FileType::Q4_K_M;
  bool has_imatrix = false;
  std::optional<DType> output_type;           // --output-tensor-type
  std::optional<DType> token_embedding_type;  // --token-embedding-type
  bool pure = false;                          // --pure: the default type everywhere, no mix rules
  // --tensor-type PATTERN=TYPE: the first pattern found in a tensor's name (ECMAScript regex, as
  // llama-quantize searches it) gives its type in place of the mix rules.
  std::vector<std::pair<std::string, DType>> tensor_types;
};

// The order llama.cpp writes tensors in (by layer, then name; non-layer tensors first). The
// counters behind the mix rules advance in this order, so callers should visit tensors in it.
std::vector<size_t> quantize_order(const std::vector<TensorDesc>& tensors);

// One choice per tensor, in the input's order.
std::vector<TypeChoice> choose_types(const std::vector<TensorDesc>& tensors, const ModelHints& hints, const TypeRules& rules);

// Whether llama.cpp would quantize this tensor at all (2-D or more, a ".weight", not a norm, ...).
bool is_quantizable(const TensorDesc& t);

}  // namespace ridge::quant
