#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

#include "core/error.h"
#include "kernels/ref/activation.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "model/arch/registry.h"
#include "model/kv_shape.h"
#include "model/llama_mirror.h"
#include "model/rope_freqs.h"
#include "model/shard.h"

namespace ridge {

ModelForward::ModelForward(const Model& model, int n_threads)
    : model_(model), spec_(model.shard ? model.shard->local_spec(model.spec) : model.spec),
      arch_(architecture_of(model.spec.arch)) {
  set_threads(n_threads);
  const auto& freqs = model.weights.rope_freqs;
  rope_freq_factors_ = rope_freq_factors(model.spec, freqs.present() ? static_cast<const float*>(freqs.data) : nullptr);
  if (model.spec.is_moe()) moe_stats_.reset(model.spec.n_layer, model.spec.n_expert);
}

ModelForward::~ModelForward() = default;

std::optional<Numerics> parse_numerics(std::string_view name) {
  if (name == "native") return Numerics::Native;
  if (name == "ggml") return Numerics::Ggml;
  return std::nullopt;
}

void ModelForward::set_numerics(Numerics numerics) {
  const std::string& a = model_.spec.arch;
  if (numerics == Numerics::Ggml && ((a != "llama" && a != "mistral" && a != "qwen2") || model_.spec.is_moe()))
    fail("--numerics ggml covers dense llama, mistral and qwen2 models, not {}", a);
  if (numerics == Numerics::Ggml && model_.shard) fail("--numerics ggml runs the whole model in one process");
  mirror_ = numerics == Numerics::Ggml ? std::make_unique<LlamaMirrorForward>(model_) : nullptr;
}

void ModelForward::set_threads(int n_threads) {
  pool_ = std::make_unique<ThreadPool>(n_threads > 0 ? n_threads : omp_get_max_threads());
}

KvCache ModelForward::make_cache(int64_t n_ctx, KvDtype dtype) const {
  return KvCache(kv_layout_of(spec_, 16, 1, dtype), n_ctx);
}

KvLayout ModelForward::kv_layout(int32_t block_size, int32_t n_blocks, KvDtype dtype) const {
  return kv_layout_of(spec_, block_size, n_blocks, dtype);
}

int64_t logits_rows(const TokenBatch& batch) {
  int64_t rows = 0;
  for (const SequenceRun& run : batch.runs)
    rows += run.logits == LogitsWanted::All ? run.n_tokens : run.logits == LogitsWanted::Last ? 1 : 0;
  return rows;
}

void for_each_logits_rows(const TokenBatch& batch, const std::function<void(int64_t first, int64_t n)>& rows) {
  for (int64_t r = 0, t0 = 0; r < int64_t(batch.runs.size()); t0 += batch.runs[size_t(r)].n_tokens, ++r) {
    const SequenceRun& run = batch.runs[size_t(r)];
    if (run.logits == LogitsWanted::All) rows(t0, run.n_tokens);
    if (run.logits == LogitsWanted::Last) rows(t0 + run.n_tokens - 1, 1);
  }
}

void embed_batch(const Model& model, const TokenBatch& batch, std::vector<float>& x, std::vector<int32_t>& positions,
                 std::vector<int32_t>& run_of) {
  const ModelSpec& s = model.spec;
  const WeightRef& embd = model.weights.token_embd;
  const auto n = int64_t(batch.tokens.size());
  x.resize(size_t(n * s.n_embd));
  positions.resize(size_t(n));
  run_of.resize(size_t(n));
  for (int64_t r = 0, t = 0; r < int64_t(batch.runs.size()); ++r) {
    const SequenceRun& run = batch.runs[size_t(r)];
    for (int64_t i = 0; i < run.n_tokens; ++i, ++t) {
      const int32_t id = batch.tokens[size_t(t)];
      if (id < 0 || id >= s.n_vocab) fail("token id {} is outside the vocabulary of {}", id, s.n_vocab);
      float* row = x.data() + t * s.n_embd;
      if (embd.packed) {
        cpu::dequantize_packed_row(embd.type, embd.data, embd.rows, s.n_embd, id, row);
      } else {
        ref::dequantize_row(embd.type, embd.row(id), row, s.n_embd);
        ref::apply_group_scales(as_matrix(embd), id, row);
      }
      if (const float scale = s.embedding_scale * embd.scale; scale != 1.0f)  // the tensor's factor too (NVFP4)
        for (int64_t d = 0; d < s.n_embd; ++d) row[d] *= scale;
      positions[size_t(t)] = int32_t(run.first_position + i);
      run_of[size_t(t)] = int32_t(r);
    }
  }
}

void ModelForward::forward(std::span<const int32_t> tokens, KvCache& cache, bool all_logits, std::vector<float>& logits,
                           bool prompt) {
  const auto n = int64_t(tokens.size());
  if (cache.size() + n > cache.capacity())
    fail("{} tokens at position {} exceed the context of {} tokens", n, cache.size(), cache.capacity());
  const SequenceRun run{n, cache.size(), cache.block_table(), all_logits ? LogitsWanted::All : LogitsWanted::Last,
                        prompt ? cache.size() + n : 0, adapter_};
  forward(TokenBatch{tokens, std::span(&run, 1)}, cache.store(), logits);
  cache.resize(cache.size() + n);
}

void ModelForward::check(const TokenBatch& batch, const KvStore& store) const {
  const KvLayout& kv = store.layout();
  if (!kv_shape_matches(spec_, kv)) fail("the KV store's shape does not match the model");
  const int64_t block_size = table_block_size(store);
  int64_t n = 0;
  for (const SequenceRun& run : batch.runs) {
    if (run.n_tokens <= 0 || run.first_position < 0) fail("a sequence run needs tokens and a position >= 0");
    const int64_t end = run.first_position + run.n_tokens;
    if (int64_t(run.blocks.size()) * block_size < end)
      fail("{} KV blocks of {} tokens cannot hold position {}", run.blocks.size(), block_size, end - 1);
    for (int64_t b = 0; b < (end + block_size - 1) / block_size; ++b)
      if (run.blocks[size_t(b)] < 0 || run.blocks[size_t(b)] >= kv.n_blocks)
        fail("KV block {} is outside the pool of {}", run.blocks[size_t(b)], kv.n_blocks);
    n += run.n_tokens;
  }
  if (n == 0 && !dp_attention()) fail("forward needs at least one token");
  if (n != int64_t(batch.tokens.size())) fail("the batch has {} tokens but its runs cover {}", batch.tokens.size(), n);
}

void ModelForward::forward(const TokenBatch& batch, KvStore& store, std::vector<float>& logits) {
  if (mirror_) {
    check(batch, store);
    mirror_->forward(batch, store, logits, *pool_);
    return;
  }
  run_layers(batch, store, nullptr);
  project(batch, logits);
}

bool ModelForward::split_attention() const { return model_.shard && model_.shard->split() && model_.shard->attention_split; }
bool ModelForward::gather_mode() const { return model_.shard && model_.shard->gather(); }
bool ModelForward::dp_attention() const { return model_.shard && model_.shard->dp_attention(); }
bool ModelForward::reduce_attention() const { return split_attention() && model_.shard->reduce(); }
bool ModelForward::reduce_ffn() const { return model_.shard && model_.shard->reduce(); }

void ModelForward::gather_columns(const float* local, int64_t rows, const Partition& parts, std::vector<float>& full) {
  if (!tp_.gather_columns) fail("a tensor-parallel slice needs the other ranks' columns");
  full.resize(size_t(rows * parts.total()));
  tp_.gather_columns(local, rows, parts, full.data());
}

void ModelForward::output_rows(const WeightRef& w, const float* x, int64_t n, float* out,
                               const cpu::MatmulPrologue& prologue) {
  const ref::WeightMatrix m = as_matrix(w);
  if (!gather_mode()) return matmul({{m, out}}, x, n, prologue);
  part_.resize(size_t(n * w.rows));
  matmul({{m, part_.data()}}, x, n, prologue);
  if (!tp_.gather_columns) fail("a tensor-parallel slice needs the other ranks' columns");
  tp_.gather_columns(part_.data(), n, model_.shard->embd, out);
}
void ModelForward::append_segment(std::vector<RowSegment>& segments, const RowSegment& s) {
  if (s.n == 0) return;
  if (!segments.empty() && segments.back().prefill == s.prefill) segments.back().n += s.n;  // they adjoin
  else segments.push_back(s);
}

bool ModelForward::holds_expert(int64_t e) const { return !model_.shard || model_.shard->holds_expert(e); }

void ModelForward::run_layers(const TokenBatch& batch, KvStore& store, const float* x_in) {
  const ModelSpec& s = spec_;
  check(batch, store);
  batch_ = &batch;
  store_ = &store;
  if (x_in) {
    const auto n = int64_t(batch.tokens.size());
    x_.assign(x_in, x_in + n * s.n_embd);
    positions_.resize(size_t(n));
    run_of_.resize(size_t(n));
    for (int64_t r = 0, t = 0; r < int64_t(batch.runs.size()); ++r)
      for (int64_t i = 0; i < batch.runs[size_t(r)].n_tokens; ++i, ++t) {
        positions_[size_t(t)] = int32_t(batch.runs[size_t(r)].first_position + i);
        run_of_[size_t(t)] = int32_t(r);
      }
  } else {
    embed_batch(model_, batch, x_, positions_, run_of_);
  }
  xn_.resize(x_.size());
  group_lora_tokens(batch);
  token_segments_.clear();
  for (const SequenceRun& run : batch.runs) {
    // A short prompt stays on the int8 kernels: decoding every weight to bf16 pays from a few dozen
    // tokens on. The choice is the prompt's, not the chunk's, so it holds however the prompt is cut.
    constexpr int64_t kPrefillMinPrompt = 64;
    const int64_t prompt_end = run.prompt_end >= kPrefillMinPrompt ? run.prompt_end : 0;
    const int64_t n_prompt = std::clamp<int64_t>(prompt_end - run.first_position, 0, run.n_tokens);
    const int64_t begin = token_segments_.empty() ? 0 : token_segments_.back().begin + token_segments_.back().n;
    append_segment(token_segments_, {begin, n_prompt, true});
    append_segment(token_segments_, {begin + n_prompt, run.n_tokens - n_prompt, false});
  }
  segments_ = &token_segments_;
  const int64_t first = model_.shard ? model_.shard->layers.begin : 0;
  const int64_t end = model_.shard ? model_.shard->layers.end() : s.n_layer;
  for (int64_t l = first; l < end; ++l) arch_.layer(*this, s, model_.weights.layers[size_t(l)], l);
}

void ModelForward::project(const TokenBatch& batch, std::vector<float>& logits) {
  const ModelSpec& s = spec_;
  const auto& w = model_.weights;
  // Only the rows whose logits are wanted go through the final norm and the vocabulary projection.
  const int64_t n_out = logits_rows(batch);
  // A head of fewer rows than the vocabulary on a whole model is a draft's head cut to the first
  // tokens (spec/draft_model.h): its logits are that wide. On a rank it is the rank's slice.
  const bool head_prefix = !model_.shard && w.output.rows < s.n_vocab;
  const int64_t width = head_prefix ? w.output.rows : s.n_vocab;
  logits.resize(size_t(n_out * width));
  if (n_out == 0) return;
  int64_t out = 0;
  logits_segments_.clear();
  for_each_logits_rows(batch, [&](int64_t first, int64_t rows) {
    for (const RowSegment& seg : token_segments_) {  // the kinds of rows first .. first + rows - 1
      const int64_t b = std::max(first, seg.begin), e = std::min(first + rows, seg.begin + seg.n);
      // The head reads its weights with the decode kernels, prompt rows too: a prompt's one last
      // row would otherwise have the whole vocabulary matrix converted for the prefill kernels.
      if (b < e) append_segment(logits_segments_, {out + b - first, e - b, false});
    }
    ref::rms_norm(x_.data() + first * s.n_embd, static_cast<const float*>(w.output_norm.data), rows, s.n_embd,
                  s.rms_eps, xn_.data() + out * s.n_embd);
    out += rows;
  });
  // A tensor-parallel rank projects onto its slice of the vocabulary; the slices are gathered.
  const bool sliced = !head_prefix && w.output.rows != s.n_vocab;
  if (sliced) local_logits_.resize(size_t(n_out * w.output.rows));
  float* y = sliced ? local_logits_.data() : logits.data();
  segments_ = &logits_segments_;
  matmul({{as_matrix(w.output), y}},
         xn_.data(), n_out);
  segments_ = &token_segments_;
  if (s.final_logit_softcap > 0.0f) ref::softcap(y, n_out * w.output.rows, s.final_logit_softcap);
  if (sliced) {
    if (!tp_.gather_columns) fail("a vocabulary slice of {} rows needs the other ranks' slices", w.output.rows);
    tp_.gather_columns(local_logits_.data(), n_out, model_.shard->vocab, logits.data());
  }
}

void ModelForward::matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens,
                          const cpu::MatmulPrologue& prologue) {
  if (observer_ && jobs.size() > 0) {
    const int64_t cols = jobs.begin()->w.cols;
    const float* seen = x;
    if (prologue.kind != cpu::MatmulPrologue::Kind::None) {
      observed_.assign(x, x + n_tokens * cols);
      if (prologue.kind == cpu::MatmulPrologue::Kind::RmsNorm) {
        ref::rms_norm(x, prologue.norm_weight, n_tokens, cols, prologue.eps, observed_.data());
      } else if (prologue.kind == cpu::MatmulPrologue::Kind::SwiGlu) {
        cpu::swiglu(observed_.data(), prologue.up, n_tokens * cols);
      } else {
        ref::geglu(observed_.data(), prologue.up, n_tokens * cols);
      }
      seen = observed_.data();
    }
    for (const cpu::MatmulJob& job : jobs) observer_->observe(job.w.data, seen, n_tokens, cols);
  }
  // Rows of the batch (or of its logits) split by kind: prompt positions take the prefill kernels.
  const std::vector<RowSegment>* segments = segments_;
  if (segments && (segments->empty() || segments->back().begin + segments->back().n != n_tokens)) segments = nullptr;
  const bool any_prefill =
      segments && std::any_of(segments->begin(), segments->end(), [](const RowSegment& s) { return s.prefill; });
  if (!any_prefill || segments->size() == 1) {
    cpu::matmul(std::span(jobs.begin(), jobs.size()), x, n_tokens, *pool_, matmul_scratch_, cpu::active_isa(), prologue,
                any_prefill);
    return;
  }
  const int64_t cols = jobs.begin()->w.cols;
  segment_inputs_.clear();
  segment_jobs_.clear();
  for (const RowSegment& s : *segments) {
    cpu::MatmulPrologue p = prologue;
    if (p.up) p.up += s.begin * cols;
    const auto input = int32_t(segment_inputs_.size());
    segment_inputs_.push_back({x + s.begin * cols, s.n, p, s.prefill});
    for (const cpu::MatmulJob& job : jobs) segment_jobs_.push_back({{job.w, job.y + s.begin * job.w.rows}, input});
  }
  cpu::matmul_grouped(segment_inputs_, segment_jobs_, *pool_, matmul_scratch_);
}

}  // namespace ridge
