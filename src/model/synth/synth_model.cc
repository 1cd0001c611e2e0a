#include "model/synth/synth_model.h"

#include <algorithm>
#include <vector>

#include "bench/progress.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/rope_freqs.h"
#include "model/synth/random_weights.h"
#include "model/synth/synth_arch.h"
#include "model/synth/synth_vocab.h"

namespace ridge::synth {
namespace {

constexpr int64_t kChunkBytes = int64_t(32) << 20;  // rows generated (in parallel) per write

// general.file_type (llama_ftype) of a file whose layers are `type`.
uint32_t file_type(DType type) {
  switch (type) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return 2;
    case DType::Q4_1: return 3;
    case DType::Q8_0: return 7;
    case DType::Q5_0: return 8;
    case DType::Q5_1: return 9;
    case DType::Q4_K: return 15;  // Q4_K_M
    case DType::Q5_K: return 17;  // Q5_K_M
    case DType::Q6_K: return 18;
    case DType::BF16: return 32;
    default: return 0;
  }
}

// llama_expert_gating_func_type.
uint32_t gating_func(ExpertGating g) { return g == ExpertGating::Sigmoid ? 2 : 1; }

// Llama 3 scaling as per-pair divisors of the base frequencies (GGUF's rope_freqs tensor).
std::vector<float> rope_factors(const ModelSpec& spec) { return rope_freq_factors(spec, nullptr); }

void add_general(gguf::GgufWriter& w, const SynthOptions& o) {
  const ModelSpec& s = o.spec;
  w.add_string("general.architecture", s.arch);
  w.add_string("general.name", "synthetic " + (s.name.empty() ? s.arch : s.name));
  w.add_u32("general.file_type", file_type(o.type));
  w.add_u32("general.quantization_version", 2);
}

void add_shape(gguf::GgufWriter& w, const ModelSpec& s) {
  const std::string a = s.arch + ".";
  w.add_u32(a + "context_length", uint32_t(s.n_ctx_train > 0 ? s.n_ctx_train : 2048));
  w.add_u32(a + "embedding_length", uint32_t(s.n_embd));
  w.add_u32(a + "block_count", uint32_t(s.n_layer));
  w.add_u32(a + "feed_forward_length", uint32_t(s.n_ff));
  w.add_u32(a + "attention.head_count", uint32_t(s.n_head));
  if (!s.is_mla()) {
    w.add_u32(a + "attention.head_count_kv", uint32_t(s.n_head_kv));
    if (s.head_dim != s.n_embd / s.n_head) {
      w.add_u32(a + "attention.key_length", uint32_t(s.head_dim));
      w.add_u32(a + "attention.value_length", uint32_t(s.head_dim));
    }
  }
  w.add_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_f32(a + "rope.freq_base", s.rope_theta);
  w.add_u32(a + "rope.dimension_count", uint32_t(s.rope_dim > 0 ? s.rope_dim : s.head_dim));
  w.add_u32(a + "vocab_size", uint32_t(s.n_vocab));
}

void add_rope_scaling(gguf::GgufWriter& w, const ModelSpec& s) {
  const std::string a = s.arch + ".rope.scaling.";
  const RopeScaling& r = s.rope_scaling;
  if (r.type == RopeScaling::Type::Linear) {
    w.add_string(a + "type", "linear");
    w.add_f32(a + "factor", r.factor);
  }
  if (r.type != RopeScaling::Type::Yarn) return;
  w.add_string(a + "type", "yarn");
  w.add_f32(a + "factor", r.factor);
  w.add_u32(a + "original_context_length", uint32_t(r.original_context));
  w.add_f32(a + "yarn_beta_fast", r.yarn_beta_fast);
  w.add_f32(a + "yarn_beta_slow", r.yarn_beta_slow);
  if (r.attn_factor != 1.0f) w.add_f32(a + "attn_factor", r.attn_factor);
  // DeepSeek's converter stores 0.1 x mscale_all_dim, and llama.cpp divides it back out.
  if (r.yarn_log_multiplier != 0.0f) w.add_f32(a + "yarn_log_multiplier", 0.1f * r.yarn_log_multiplier);
}

void add_experts(gguf::GgufWriter& w, const ModelSpec& s, const ArchRules& rules) {
  if (!s.is_moe()) return;
  const std::string a = s.arch + ".";
  w.add_u32(a + "expert_count", uint32_t(s.n_expert));
  w.add_u32(a + "expert_used_count", uint32_t(s.n_expert_used));
  if (rules.expert_width_key) w.add_u32(a + "expert_feed_forward_length", uint32_t(s.n_ff_expert));
  if (!rules.mla) {
    // Qwen2-MoE reads its shared expert's width; DeepSeek counts shared experts of the routed width.
    if (rules.shared_experts) w.add_u32(a + "expert_shared_feed_forward_length", uint32_t(s.shared_ff()));
    return;
  }
  w.add_u32(a + "leading_dense_block_count", uint32_t(s.n_layer_dense_lead));
  w.add_u32(a + "expert_shared_count", uint32_t(s.n_shared_expert));
  w.add_f32(a + "expert_weights_scale", s.expert_weights_scale);
  w.add_bool(a + "expert_weights_norm", s.expert_weights_norm);
  w.add_u32(a + "expert_gating_func", gating_func(s.expert_gating));
}

// MLA as llama.cpp's converter writes it: one KV head whose key is the latent plus the RoPE key
// and whose value is the latent, and the per-head sizes after decompression as the *_mla lengths.
void add_latent_attention(gguf::GgufWriter& w, const ModelSpec& s) {
  if (!s.is_mla()) return;
  const std::string a = s.arch + ".attention.";
  w.add_u32(a + "head_count_kv", 1);
  w.add_u32(a + "key_length", uint32_t(s.kv_lora_rank + s.qk_rope_head_dim));
  w.add_u32(a + "value_length", uint32_t(s.kv_lora_rank));
  w.add_u32(a + "key_length_mla", uint32_t(s.qk_nope_head_dim + s.qk_rope_head_dim));
  w.add_u32(a + "value_length_mla", uint32_t(s.v_head_dim));
  w.add_u32(a + "q_lora_rank", uint32_t(s.q_lora_rank));  // read unless the model is a "lite" one
  w.add_u32(a + "kv_lora_rank", uint32_t(s.kv_lora_rank));
}

// Gemma 3: without a pattern key llama.cpp slides five layers of six, with a separate RoPE base.
void add_sliding_window(gguf::GgufWriter& w, const ModelSpec& s) {
  const std::string a = s.arch + ".";
  if (s.final_logit_softcap > 0.0f) w.add_f32(a + "final_logit_softcapping", s.final_logit_softcap);
  if (s.sliding_window <= 0) return;
  w.add_u32(a + "attention.sliding_window", uint32_t(s.sliding_window));
  if (s.swa_pattern != 6) w.add_u32(a + "attention.sliding_window_pattern", uint32_t(s.swa_pattern));
  // Always written: llama.cpp's default (10000) is not the spec's (rope_theta).
  w.add_f32(a + "rope.freq_base_swa", s.rope_theta_swa > 0.0f ? s.rope_theta_swa : s.rope_theta);
}

void add_model_metadata(gguf::GgufWriter& w, const SynthOptions& o) {
  const ArchRules& rules = arch_rules(o.spec.arch);
  add_general(w, o);
  add_shape(w, o.spec);
  add_rope_scaling(w, o.spec);
  add_experts(w, o.spec, rules);
  add_latent_attention(w, o.spec);
  if (rules.sliding_window) add_sliding_window(w, o.spec);
}

// Rows of one tensor (all its stacked matrices), generated in parallel a chunk at a time and
// streamed out.
void write_tensor_data(gguf::GgufWriter& w, const SynthTensor& t, const SynthOptions& o, uint64_t seed,
                       bench::ProgressBar& progress) {
  const int64_t row_bytes = dtype_row_bytes(t.type, t.cols);
  if (t.fill != SynthTensor::Fill::Random) {
    std::vector<float> values(size_t(t.cols), t.fill == SynthTensor::Fill::Ones ? 1.0f : 0.0f);
    if (t.fill == SynthTensor::Fill::RopeFactors) values = rope_factors(o.spec);
    w.write_tensor_data(values.data(), size_t(row_bytes));
    progress.advance(row_bytes);
    return;
  }
  const int64_t rows = t.total_rows();
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunkBytes / row_bytes);
  std::vector<uint8_t> chunk(size_t(std::min(rows_per_chunk, rows) * row_bytes));
  for (int64_t first = 0; first < rows; first += rows_per_chunk) {
    const int64_t n = std::min(rows_per_chunk, rows - first);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; ++r)
      random_row(t.type, t.cols, o.stddev, seed, uint64_t(first + r), chunk.data() + r * row_bytes);
    w.write_tensor_data(chunk.data(), size_t(n * row_bytes));
    progress.advance(n * row_bytes, t.name);
  }
}

}  // namespace

int64_t vocab_size_of(const std::string& gguf_path) {
  return int64_t(gguf::GgufFile::open(gguf_path).get("tokenizer.ggml.tokens").as_array().size());
}

void write_synth_model(const SynthOptions& o, const std::string& path) {
  const std::vector<SynthTensor> tensors = synth_tensors(o);
  gguf::GgufWriter w(path);
  add_model_metadata(w, o);
  if (o.vocab_from.empty()) {
    add_vocab_metadata(w, make_synth_vocab(o.spec.n_vocab));
  } else {
    const gguf::GgufFile source = gguf::GgufFile::open(o.vocab_from);
    if (vocab_size_of(o.vocab_from) != o.spec.n_vocab)
      fail("synth: the vocabulary of {} has {} tokens, the shape {}", o.vocab_from, vocab_size_of(o.vocab_from), o.spec.n_vocab);
    for (const auto& [key, value] : source.metadata())
      if (key.rfind("tokenizer.", 0) == 0) w.add_value(key, value);
  }
  int64_t total_bytes = 0;
  for (const SynthTensor& t : tensors) {
    w.add_tensor(t.name, t.type, t.gguf_shape());
    total_bytes += t.total_rows() * dtype_row_bytes(t.type, t.cols);
  }
  w.write_header();
  bench::ProgressBar progress("synth", total_bytes, bench::ProgressBar::Unit::Bytes);
  for (size_t i = 0; i < tensors.size(); ++i) write_tensor_data(w, tensors[i], o, mix_seed(o.seed, i), progress);
  w.finish();
  progress.finish();
}

}  // namespace ridge::synth
