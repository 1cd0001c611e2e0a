#pragma once
// `ridge quantize` for a GGUF input: every tensor is read (dequantized to f32 when it is not f32
// already), given the block type the file type's rules choose, quantized on all threads and
// streamed into a new GGUF with the input's metadata. The output appears under its name only
// when complete (the writer's .part file and rename), so a failure leaves nothing half-written.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "quant/awq.h"
#include "quant/tensor_types.h"

namespace ridge::quant {

class ImportanceMatrix;  // quant/importance_matrix.h

// Changes the f32 rows of some tensors before they are (re)quantized: a LoRA merge adds its
// scale * B * A (cli/lora_merge). A tensor it applies to is written anew even when its type stays.
struct RowTransform {
  std::function<bool(const std::string& tensor)> applies;
  std::function<void(const std::string& tensor, int64_t row, float* values, int64_t n)> apply;
};

struct QuantizeOptions {
  std::string input;   // a GGUF file
  std::string output;  // the GGUF to write
  TypeRules rules;
  const ImportanceMatrix* imatrix = nullptr;  // per-column weights from `ridge imatrix`, or none
  std::string imatrix_file;                   // its path, recorded in the output's metadata
  int threads = 0;                            // <= 0: one per core
  bool progress = true;                       // a progress bar on stderr
  bool dry_run = false;                       // choose types and sizes, write nothing
  bool awq = false;                           // activation-aware scaling from the imatrix (quant/awq.h)
  bool awq_weighted_rounding = true;          // with awq: round with the imatrix's weights too (false: plain rounding)
  const RowTransform* transform = nullptr;    // null: rows as read
};

struct TensorOutcome {
  std::string name;
  DType from = DType::F32, to = DType::F32;
  int64_t bytes_in = 0, bytes_out = 0;
  bool quantized = false;   // false: bytes copied as they were
  bool fell_back = false;   // the row length forced a 32-block or F16 type
  bool used_imatrix = false;
  bool factor = false;      // a "<weight>.scale" tensor ridge writes: the per-matrix factors of an NVFP4 weight
};

struct QuantizeReport {
  std::vector<TensorOutcome> tensors;  // in the output's order
  int64_t bytes_in = 0, bytes_out = 0;  // tensor data only
  int64_t n_params = 0;
  double seconds = 0;
  std::map<DType, int> type_counts;  // tensors of each type in the output
  std::vector<AwqGroup> awq_groups;  // with --awq: each group's α and the search's errors
};

QuantizeReport quantize_gguf(const QuantizeOptions& options);

}  // namespace ridge::quant
