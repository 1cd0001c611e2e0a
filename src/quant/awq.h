#pragma once
// Activation-aware weight quantization (AWQ's idea) for `ridge quantize --awq`: a layer's input
// channels that carry large activations lose the most when their weights are rounded, so each
// column c of the matrices that read one input is multiplied by s_c = m_c^α (m_c the channel's RMS
// activation from the importance matrix) before rounding, and the input is divided by s_c where it
// is made: the RMSNorm's weight for attn_q/k/v and ffn_gate/up, the rows of ffn_up for ffn_down.
// The product is unchanged in exact arithmetic; rounding error moves off the salient channels.
// α is searched per group on a grid (α = 0 is plain quantization, so the search never loses by its
// own measure): the expected squared output error Σ_c m_c² (Q(W s)_c / s_c - W_c)² over sampled rows.
// The artifact is an ordinary GGUF of the chosen block types (llama.cpp runs it unchanged).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/gguf/gguf_file.h"

namespace ridge::quant {

class ImportanceMatrix;

// What AWQ does to one tensor: columns (or a norm's values) multiplied by `col_scale`, rows divided
// by `row_div`; empty vectors leave that side alone.
struct AwqTransform {
  std::vector<float> col_scale;
  std::vector<float> row_div;
};

struct AwqGroup {
  std::string name;  // "blk.3.attn_qkv", "blk.3.ffn_gate_up", "blk.3.ffn_down"
  float alpha = 0;
  double error_plain = 0, error_scaled = 0;  // the search's measure at α = 0 and at the chosen α
};

struct AwqPlan {
  std::map<std::string, AwqTransform> tensors;
  std::vector<AwqGroup> groups;
};

// `types`: the block type each weight will be quantized to (tensors missing are not quantized).
// `weighted_rounding`: the artifact's rounding weighs columns by the importance (llama.cpp's imatrix
// quantizers) rather than rounding plainly (AWQ's own), and the search rounds the same way.
AwqPlan plan_awq(const gguf::GgufFile& in, const ImportanceMatrix& imatrix, const std::map<std::string, DType>& types,
                 bool weighted_rounding, int threads);

// x_c * col_scale_c for c < n, then / row_div[row] (when the vectors are set).
void apply_awq(const AwqTransform& t, int64_t row, float* x, int64_t n);

}  // namespace ridge::quant
