#include "quant/tensor_types.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <regex>

#include "core/error.h"

namespace ridge::quant {
namespace {

enum class Category { Output, TokenEmbd, AttnQkv, AttnKvB, AttnV, AttnK, AttnQ, AttnOutput, FfnUp, FfnGate, FfnDown, Other };

bool has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

Category category_of(const std::string& name) {
  if (name == "output.weight") return Category::Output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::TokenEmbd;
  if (has(name, "attn_qkv.weight")) return Category::AttnQkv;
  if (has(name, "attn_kv_b.weight")) return Category::AttnKvB;
  if (has(name, "attn_v.weight")) return Category::AttnV;
  if (has(name, "attn_k.weight")) return Category::AttnK;
  if (has(name, "attn_q.weight")) return Category::AttnQ;
  if (has(name, "attn_output.weight")) return Category::AttnOutput;
  if (has(name, "ffn_up")) return Category::FfnUp;
  if (has(name, "ffn_gate")) return Category::FfnGate;
  if (has(name, "ffn_down")) return Category::FfnDown;
  return Category::Other;
}

// attn_v and the tensors that hold it: the most sensitive to low bits.
bool is_attn_v_like(Category c) { return c == Category::AttnV || c == Category::AttnQkv || c == Category::AttnKvB; }

int layer_of(const std::string& name) {
  int layer = -1;
  std::sscanf(name.c_str(), "blk.%d.", &layer);
  return layer;
}

// The layers that get more bits in the _M mixes: the first and last eighth, and every third between.
bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

int64_t dims(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1) n = int64_t(i) + 1;
  return n;
}

struct Counters {
  int64_t n_attn_v = 0, i_attn_v = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
};

// The layer of an ffn tensor for the layer-dependent rules: how many of its kind came before it,
// or in a MoE model (whose expert tensors need not come in layer order) the layer its name says.
int64_t ffn_layer(int64_t count, const TensorDesc& tensor, const ModelHints& h) {
  if (h.n_expert <= 1) return count;
  const int layer = layer_of(tensor.name);
  if (layer < 0 || layer >= h.n_layer)
    fail("cannot tell the layer of tensor '{}' (expected blk.N. within {} layers)", tensor.name, h.n_layer);
  return layer;
}

// The row length does not fit a 256-block type: the 32-block type of about the same bits. A
// 32-block type that does not fit (IQ4_NL) has nothing smaller to go to: F16.
DType fallback(DType t, const TensorDesc& tensor, bool& fell_back) {
  const int64_t row = tensor.shape[0];
  if (row % dtype_info(t).block_size == 0) return t;
  fell_back = true;
  DType f = DType::F16;
  switch (t) {
    case DType::Q2_K: case DType::Q3_K: f = DType::Q4_0; break;
    case DType::Q4_K: f = DType::Q5_0; break;
    case DType::Q5_K: f = DType::Q5_1; break;
    case DType::Q6_K: f = DType::Q8_0; break;
    case DType::IQ4_XS: case DType::IQ4_NL: f = DType::IQ4_NL; break;
    case DType::IQ3_XXS: case DType::IQ3_S: f = DType::IQ4_NL; break;
    case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ1_S: case DType::IQ1_M: f = DType::IQ4_NL; break;
    case DType::TQ1_0: case DType::TQ2_0: f = DType::Q4_0; break;
    case DType::NVFP4: f = DType::MXFP4; break;  // 32-value blocks of 4-bit floats
    default:
      fail("tensor '{}': rows of {} are no multiple of the {}-element {} block", tensor.name, row,
           dtype_info(t).block_size, dtype_name(t));
  }
  return row % dtype_info(f).block_size == 0 ? f : DType::F16;
}

bool is_very_low_bit(FileType ft) {
  using F = FileType;
  return ft == F::IQ2_XXS || ft == F::IQ2_XS || ft == F::IQ2_S || ft == F::IQ2_M || ft == F::IQ1_S || ft == F::IQ1_M;
}

// The IQ2 / IQ1 mixes below the output and token_embd (llama.cpp's branch for them stands in for
// every other rule): attn_v, the first eighth of ffn_down and attn_output get more bits. Its
// ffn_down counts tensors even in a MoE model.
DType very_low_bit_rule(DType t, Category c, const ModelHints& h, FileType ft, int64_t gqa, Counters& k) {
  using F = FileType;
  const DType more = ft == F::IQ2_S || ft == F::IQ2_M ? DType::IQ3_S : DType::Q2_K;
  if (is_attn_v_like(c)) {
    ++k.i_attn_v;
    return gqa >= 4 || h.n_expert >= 4 ? DType::Q4_K : more;
  }
  if (c == Category::AttnK) return h.n_expert == 8 ? DType::Q4_K : t;
  if (c == Category::FfnDown) return k.i_ffn_down++ < h.n_layer / 8 ? more : t;
  if (c == Category::AttnOutput) {
    if (h.n_expert == 8) return DType::Q5_K;
    if (ft == F::IQ1_S || ft == F::IQ1_M) return DType::IQ2_XXS;
    if (ft == F::IQ2_S || ft == F::IQ2_M) return DType::IQ3_S;
  }
  return t;
}

DType mix_rule(DType t, const TensorDesc& tensor, Category c, const ModelHints& h, const TypeRules& r, bool tied, Counters& k) {
  using F = FileType;
  const F ft = r.file_type;
  const int64_t gqa = h.n_head_kv > 0 ? h.n_head / h.n_head_kv : 1;
  const bool moe8 = h.n_expert == 8;
  const bool iq4 = ft == F::IQ4_NL || ft == F::IQ4_XS;
  if (c == Category::Output || (tied && c == Category::TokenEmbd)) {
    if (r.output_type) return *r.output_type;
    if (ft == F::MXFP4_MOE) return DType::Q8_0;
    if (tensor.shape[0] % dtype_info(t).block_size != 0) return DType::Q8_0;
    if (is_very_low_bit(ft)) return DType::Q5_K;
    if (ft == F::IQ3_XXS) return DType::Q5_K;  // as for the IQ2 / IQ1 types
    return t == DType::Q8_0 ? t : DType::Q6_K;
  }
  if (ft == F::MXFP4_MOE)  // experts (stacked: a third dimension) in MXFP4, the rest in Q8_0
    return tensor.shape.size() > 2 && tensor.shape[2] > 1 ? DType::MXFP4 : DType::Q8_0;
  // NVFP4's token embedding is a table lookup, not a matmul: llama.cpp applies no per-tensor factor
  // to it, so it gets the nearest K type instead (as Q4_K_M's does); the ternary types' gets Q4_K
  // as in llama.cpp (an untied embedding table is not ternary even in a ternary-trained model).
  if (c == Category::TokenEmbd) {
    if (r.token_embedding_type) return *r.token_embedding_type;
    if (ft == F::NVFP4 || ft == F::TQ1_0 || ft == F::TQ2_0) return DType::Q4_K;
    if (ft == F::IQ3_XXS) return DType::IQ3_S;
    if (ft == F::IQ2_S || ft == F::IQ2_M) return DType::IQ3_S;
    if (is_very_low_bit(ft)) return DType::Q2_K;
    return t;
  }
  if (is_very_low_bit(ft)) return very_low_bit_rule(t, c, h, ft, gqa, k);
  if (is_attn_v_like(c)) {
    if (ft == F::Q2_K) t = gqa >= 4 ? DType::Q4_K : DType::Q3_K;
    else if (ft == F::Q2_K_S && gqa >= 4) t = DType::Q4_K;
    else if (ft == F::IQ3_XXS) t = gqa >= 4 ? DType::Q4_K : r.has_imatrix ? DType::IQ3_XXS : DType::IQ3_S;
    else if ((ft == F::IQ3_XS || ft == F::IQ3_S) && gqa >= 4) t = DType::Q4_K;
    else if (ft == F::IQ3_M) t = DType::Q4_K;
    else if (ft == F::Q3_K_M) t = k.i_attn_v < 2 ? DType::Q5_K : DType::Q4_K;
    else if (ft == F::Q3_K_L) t = DType::Q5_K;
    else if (iq4 && gqa >= 4) t = DType::Q5_K;
    else if ((ft == F::Q4_K_M || ft == F::Q5_K_M) && use_more_bits(k.i_attn_v, k.n_attn_v)) t = DType::Q6_K;
    else if (ft == F::Q4_K_S && k.i_attn_v < 4) t = DType::Q5_K;
    if (moe8) t = DType::Q8_0;  // eight heads' worth of experts share it: cheap to keep at 8 bits
    ++k.i_attn_v;
    return t;
  }
  if (c == Category::AttnK || c == Category::AttnQ) {
    if (c == Category::AttnK && moe8) return DType::Q8_0;
    if (ft == F::IQ3_XS) return DType::IQ3_XXS;
    if (ft == F::IQ3_XXS) return DType::IQ2_S;
    return t;
  }
  if (c == Category::FfnDown) {
    int64_t i = k.i_ffn_down;
    if (h.n_expert > 1) {
      i = layer_of(tensor.name);
      if (i < 0 || i >= h.n_layer) fail("cannot tell the layer of tensor '{}' (expected blk.N. within {} layers)", tensor.name, h.n_layer);
    }
    const int64_t n = h.n_layer;
    if (ft == F::Q2_K) t = DType::Q3_K;
    else if (ft == F::Q2_K_S) { if (i < n / 8) t = DType::Q4_K; }
    else if (ft == F::IQ3_XXS && !r.has_imatrix) t = i < n / 8 ? DType::Q4_K : DType::Q3_K;
    else if (ft == F::Q3_K_M) t = i < n / 16 ? DType::Q5_K : DType::Q4_K;
    else if (ft == F::IQ3_M && (i < n / 8 || (moe8 && use_more_bits(i, n)))) t = DType::Q4_K;
    else if (ft == F::Q3_K_L) t = DType::Q5_K;
    else if (ft == F::Q4_K_M) { if (use_more_bits(i, n)) t = DType::Q6_K; }
    else if (iq4 && !r.has_imatrix && i < n / 8) t = DType::Q5_K;
    else if (ft == F::Q5_K_M && use_more_bits(i, n)) t = DType::Q6_K;
    else if (ft == F::Q4_K_S && i < n / 8) t = DType::Q5_K;
    else if ((ft == F::Q4_0 || ft == F::Q5_0) && r.has_imatrix && i < n / 8)
      t = ft == F::Q4_0 ? DType::Q4_1 : DType::Q5_1;  // the first ffn_down layers misbehave even with an imatrix
    ++k.i_ffn_down;
    return t;
  }
  if (c == Category::AttnOutput) {
    if (moe8) {
      if (ft == F::Q2_K || ft == F::Q3_K_S || ft == F::Q3_K_M || ft == F::Q4_K_S || ft == F::Q4_K_M || iq4 ||
          ft == F::IQ3_XXS || ft == F::IQ3_XS || ft == F::IQ3_S || ft == F::IQ3_M)
        t = DType::Q5_K;
    } else if (ft == F::Q2_K) t = DType::Q3_K;
    else if (ft == F::Q3_K_M) t = DType::Q4_K;
    else if (ft == F::Q3_K_L) t = DType::Q5_K;
    else if (ft == F::IQ3_XXS) t = DType::IQ3_S;
    else if (ft == F::IQ3_M) t = DType::Q4_K;
  }
  // IQ3_XS keeps the first and last eighth of the ffn_gate / ffn_up layers at IQ3_S, the rest IQ3_XXS.
  if (c == Category::FfnGate || c == Category::FfnUp) {
    const int64_t i = ffn_layer(c == Category::FfnGate ? k.i_ffn_gate++ : k.i_ffn_up++, tensor, h);
    if (ft == F::IQ3_XS && i >= h.n_layer / 8 && i < 7 * h.n_layer / 8) t = DType::IQ3_XXS;
  }
  return t;
}

bool is_block_quantized(DType t) { return dtype_info(t).block_size > 1; }

// llama-quantize's tensor_requires_imatrix: the types whose searches go wrong without importance
// weights (it refuses to write them), except in the embedding and output tables.
bool needs_importance(const std::string& name, DType type, FileType ft) {
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight" || name == "output.weight") return false;
  switch (type) {
    case DType::IQ1_S: case DType::IQ1_M: case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S:
    case DType::IQ3_XXS:
      return true;
    case DType::Q2_K:
      return ft == FileType::Q2_K_S;
    default:
      return false;
  }
}

}  // namespace

bool is_quantizable(const TensorDesc& t) {
  if (dims(t.shape) < 2) return false;
  const std::string& n = t.name;
  if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  for (const char* keep : {"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
                           "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "time_mix_", "attn_rel_b.weight",
                           ".position_embd", ".rel_pos", ".patch_embd", ".patch_merger"})
    if (has(n, keep)) return false;
  return n != "position_embd.weight" && n != "token_types.weight";
}

std::vector<size_t> quantize_order(const std::vector<TensorDesc>& tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    if (la != lb) return la < lb;
    return tensors[a].name < tensors[b].name;
  });
  return order;
}

std::vector<TypeChoice> choose_types(const std::vector<TensorDesc>& tensors, const ModelHints& hints, const TypeRules& rules) {
  const DType base = file_type_info(rules.file_type).default_type;
  Counters k;
  bool tied = true;  // token_embd doubles as the output unless the file has output.weight
  for (const auto& t : tensors) {
    const Category c = category_of(t.name);
    if (is_attn_v_like(c)) ++k.n_attn_v;
    if (c == Category::Output) tied = false;
  }
  std::vector<std::pair<std::regex, DType>> patterns;
  for (const auto& [pattern, type] : rules.tensor_types) {
    try {
      patterns.emplace_back(std::regex(pattern), type);
    } catch (const std::regex_error& e) {
      fail("--tensor-type: '{}' is not a regular expression ({})", pattern, e.what());
    }
  }
  std::vector<TypeChoice> out(tensors.size());
  for (size_t i : quantize_order(tensors)) {
    const TensorDesc& t = tensors[i];
    if (t.shape.empty()) fail("tensor '{}' has no shape", t.name);
    TypeChoice& choice = out[i];
    choice.type = t.type;
    if (!is_quantizable(t)) continue;
    const Category c = category_of(t.name);
    DType type = base;
    if (c == Category::TokenEmbd && rules.token_embedding_type) {
      type = *rules.token_embedding_type;
    } else if (c == Category::Output && rules.output_type) {
      type = *rules.output_type;
    } else if (is_block_quantized(base)) {
      const auto manual = std::find_if(patterns.begin(), patterns.end(),
                                       [&](const auto& p) { return std::regex_search(t.name, p.first); });
      if (manual != patterns.end()) type = manual->second;
      else if (!rules.pure) type = mix_rule(type, t, c, hints, rules, tied, k);
      type = fallback(type, t, choice.fell_back);
    }
    if (t.shape[0] % dtype_info(type).block_size != 0)
      fail("tensor '{}': rows of {} do not fit {} blocks of {}", t.name, t.shape[0], dtype_name(type), dtype_info(type).block_size);
    choice.quantize = true;
    choice.type = type;
    choice.needs_imatrix = needs_importance(t.name, type, rules.file_type);
  }
  return out;
}

}  // namespace ridge::quant
