#include "model/synth/synth_model.h"

#include <algorithm>
#include <vector>

#include "bench/progress.h"
#include "core/error.h"
#include "model/gguf/gguf_writer.h"
#include "model/rope_freqs.h"
#include "model/synth/random_weights.h"
#include "model/synth/synth_vocab.h"

namespace ridge::synth {
namespace {

constexpr int64_t kChunkBytes = int64_t(32) << 20;  // rows generated (in parallel) per write

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// llama.cpp's quantizer keeps K types only on rows of whole super-blocks.
DType fit_type(DType type, int64_t cols) {
  if (cols % dtype_info(type).block_size == 0) return type;
  if (type == DType::Q4_K) return fit_type(DType::Q5_0, cols);
  if (type == DType::Q5_K) return fit_type(DType::Q5_1, cols);
  if (type == DType::Q6_K) return fit_type(DType::Q8_0, cols);
  if (cols % 32 == 0) return DType::Q8_0;
  return DType::F16;
}

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

void check_supported(const SynthOptions& o) {
  const ModelSpec& s = o.spec;
  validate(s);
  if (s.arch != "llama" && s.arch != "mistral" && s.arch != "qwen2")
    fail("ridge synth writes llama, mistral and qwen2 models, not '{}'", s.arch);
  if (s.is_moe() || s.is_mla()) fail("ridge synth writes dense models only ('{}' has experts or latent attention)", s.name);
  for (const std::optional<DType>& t : {std::optional<DType>(o.type), o.embd_type, o.output_type})
    if (t && !can_make_random(*t)) fail("ridge synth cannot make {} weights", dtype_name(*t));
}

// Llama 3 scaling as per-pair divisors of the base frequencies (GGUF's rope_freqs tensor).
std::vector<float> rope_factors(const ModelSpec& spec) { return rope_freq_factors(spec, nullptr); }

void add_model_metadata(gguf::GgufWriter& w, const SynthOptions& o) {
  const ModelSpec& s = o.spec;
  const std::string& a = s.arch;
  w.add_string("general.architecture", a);
  w.add_string("general.name", "synthetic " + (s.name.empty() ? a : s.name));
  w.add_u32("general.file_type", file_type(o.type));
  w.add_u32("general.quantization_version", 2);
  w.add_u32(a + ".context_length", uint32_t(s.n_ctx_train > 0 ? s.n_ctx_train : 2048));
  w.add_u32(a + ".embedding_length", uint32_t(s.n_embd));
  w.add_u32(a + ".block_count", uint32_t(s.n_layer));
  w.add_u32(a + ".feed_forward_length", uint32_t(s.n_ff));
  w.add_u32(a + ".attention.head_count", uint32_t(s.n_head));
  w.add_u32(a + ".attention.head_count_kv", uint32_t(s.n_head_kv));
  if (s.head_dim != s.n_embd / s.n_head) {
    w.add_u32(a + ".attention.key_length", uint32_t(s.head_dim));
    w.add_u32(a + ".attention.value_length", uint32_t(s.head_dim));
  }
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_f32(a + ".rope.freq_base", s.rope_theta);
  w.add_u32(a + ".rope.dimension_count", uint32_t(s.rope_dim > 0 ? s.rope_dim : s.head_dim));
  if (s.rope_scaling.type == RopeScaling::Type::Linear) {
    w.add_string(a + ".rope.scaling.type", "linear");
    w.add_f32(a + ".rope.scaling.factor", s.rope_scaling.factor);
  }
  w.add_u32(a + ".vocab_size", uint32_t(s.n_vocab));
}

// Rows of one tensor, generated in parallel a chunk at a time and streamed out.
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
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunkBytes / row_bytes);
  std::vector<uint8_t> chunk(size_t(std::min(rows_per_chunk, t.rows) * row_bytes));
  for (int64_t first = 0; first < t.rows; first += rows_per_chunk) {
    const int64_t n = std::min(rows_per_chunk, t.rows - first);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; ++r)
      random_row(t.type, t.cols, o.stddev, seed, uint64_t(first + r), chunk.data() + r * row_bytes);
    w.write_tensor_data(chunk.data(), size_t(n * row_bytes));
    progress.advance(n * row_bytes, t.name);
  }
}

}  // namespace

std::vector<SynthTensor> synth_tensors(const SynthOptions& o) {
  check_supported(o);
  const ModelSpec& s = o.spec;
  using Fill = SynthTensor::Fill;
  const DType embd = o.embd_type.value_or(is_float_type(o.type) ? o.type : DType::Q8_0);
  const DType output = o.output_type.value_or(is_float_type(o.type) || o.type == DType::Q8_0 ? o.type : DType::Q6_K);
  std::vector<SynthTensor> t;
  auto matrix = [&](std::string name, DType type, int64_t rows, int64_t cols) {
    t.push_back({std::move(name), fit_type(type, cols), rows, cols, Fill::Random});
  };
  auto vector = [&](std::string name, int64_t n, Fill fill) { t.push_back({std::move(name), DType::F32, 1, n, fill}); };

  matrix("token_embd.weight", embd, s.n_vocab, s.n_embd);
  vector("output_norm.weight", s.n_embd, Fill::Ones);
  if (!s.tied_embeddings) matrix("output.weight", output, s.n_vocab, s.n_embd);
  if (s.rope_scaling.type == RopeScaling::Type::Llama3)
    vector("rope_freqs.weight", (s.rope_dim > 0 ? s.rope_dim : s.head_dim) / 2, Fill::RopeFactors);
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    vector(p + "attn_norm.weight", s.n_embd, Fill::Ones);
    matrix(p + "attn_q.weight", o.type, s.q_dim(), s.n_embd);
    matrix(p + "attn_k.weight", o.type, s.kv_dim(), s.n_embd);
    matrix(p + "attn_v.weight", o.type, s.kv_dim(), s.n_embd);
    if (s.qkv_bias) {
      vector(p + "attn_q.bias", s.q_dim(), Fill::Zeros);
      vector(p + "attn_k.bias", s.kv_dim(), Fill::Zeros);
      vector(p + "attn_v.bias", s.kv_dim(), Fill::Zeros);
    }
    matrix(p + "attn_output.weight", o.type, s.n_embd, s.q_dim());
    vector(p + "ffn_norm.weight", s.n_embd, Fill::Ones);
    matrix(p + "ffn_gate.weight", o.type, s.n_ff, s.n_embd);
    matrix(p + "ffn_up.weight", o.type, s.n_ff, s.n_embd);
    matrix(p + "ffn_down.weight", o.type, s.n_embd, s.n_ff);
  }
  for (const SynthTensor& x : t)
    if (x.cols % dtype_info(x.type).block_size != 0)
      fail("tensor '{}': {} columns do not fit {} blocks", x.name, x.cols, dtype_name(x.type));
  return t;
}

void write_synth_model(const SynthOptions& o, const std::string& path) {
  const std::vector<SynthTensor> tensors = synth_tensors(o);
  gguf::GgufWriter w(path);
  add_model_metadata(w, o);
  add_vocab_metadata(w, make_synth_vocab(o.spec.n_vocab));
  int64_t total_bytes = 0;
  for (const SynthTensor& t : tensors) {
    // Vectors are 1-D in GGUF, as llama.cpp expects them.
    w.add_tensor(t.name, t.type, t.rows == 1 ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.cols, t.rows});
    total_bytes += t.rows * dtype_row_bytes(t.type, t.cols);
  }
  w.write_header();
  bench::ProgressBar progress("synth", total_bytes, bench::ProgressBar::Unit::Bytes);
  for (size_t i = 0; i < tensors.size(); ++i) write_tensor_data(w, tensors[i], o, mix_seed(o.seed, i), progress);
  w.finish();
  progress.finish();
}

}  // namespace ridge::synth
