#pragma once
// A checkpoint's tensors by their Hugging Face names -> ridge's weight views, for every model_type
// hf_config.h reads. Per-expert tensors (mlp.experts.N.gate_proj, Mixtral's
// block_sparse_moe.experts.N.w1) become one ExpertWeights each; DeepSeek's kv_b_proj is split
// into the per-head absorbed key and value matrices; Gemma's norm weights get their +1.
#include "model/safetensors/hf_config.h"
#include "model/safetensors/hf_weight_binder.h"

namespace ridge {

void bind_hf_weights(const HfConfig& c, HfWeightBinder& b, ModelWeights& w);

}  // namespace ridge
