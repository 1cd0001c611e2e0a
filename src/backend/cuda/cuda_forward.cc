#include "backend/cuda/cuda_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "backend/cuda/device_weights.h"
#include "backend/launch_shapes.h"
#include "backend/rope_table.h"
#include "backend/step_inputs.h"
#include "core/error.h"
#include "model/rope_freqs.h"

namespace ridge::cuda {
namespace {

// The step's integers on the device: sections of one buffer, filled by one copy per step.
struct InputSections {
  int32_t* tokens = nullptr;      // (cap_tokens)
  int32_t* positions = nullptr;   // (cap_tokens)
  int32_t* slots = nullptr;       // (cap_tokens)
  int32_t* offsets = nullptr;     // (cap_tokens)
  int32_t* logit_rows = nullptr;  // (cap_tokens)
  int32_t* tables = nullptr;      // (cap_tables)
};
constexpr int64_t kTokenSections = 5;

struct MatmulOut {
  const DeviceWeight* w;
  float* y;  // (n_tokens, w->m.rows)
};

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

int bucket_index(int64_t bucket) {
  for (size_t i = 0; i < kDecodeBuckets.size(); ++i)
    if (kDecodeBuckets[i] == bucket) return int(i);
  fail("no decode bucket of {}", bucket);
}

}  // namespace

struct CudaForward::Impl {
  Impl(const Model& model, const CudaForwardOptions& options);
  ~Impl();

  void check(const TokenBatch& batch, const KvLayout& kv) const;
  void step(const TokenBatch& batch, DeviceKvStore& store, std::vector<float>* logits, std::vector<int32_t>* ids);
  void reserve(int64_t n_tokens, int64_t n_out, int64_t n_tables, int64_t n_partials);
  void upload(const StepInputs& in);
  void run_layers(const DeviceKvStore& store, int64_t n, int64_t n_out, const int32_t* out_rows, AttentionSplit split);
  void matmul(std::initializer_list<MatmulOut> outs, const float* x, int64_t n, bool accumulate);
  void drop_graphs();
  template <typename F>
  void launch(KernelKind kind, const KernelCost& cost, F&& f);

  const Model& model;
  const ModelSpec& s;
  CudaForwardOptions opt;
  DeviceProps props;
  Stream stream = nullptr;
  std::unique_ptr<GemmLt> gemm;
  std::unique_ptr<DeviceModel> w;
  DeviceBuffer rope_buf;
  RopeTable rope;
  float attn_scale = 1.0f;

  // Activations for up to cap_tokens tokens and cap_out logits rows (grown on demand; growing moves
  // device pointers, so the captured graphs are dropped).
  int64_t cap_tokens = 0, cap_out = 0, cap_tables = 0, cap_partials = 0;
  DeviceBuffer x, xn, q, k, v, attn, gate, up, act_q, act_meta, xbf, logits, ids, inputs, partials;
  PinnedBuffer inputs_host, logits_host, ids_host;
  InputSections in_dev;

  struct Graph {
    void* exec = nullptr;
    const DeviceKvStore* store = nullptr;
    CostLedger ledger;  // of the captured launches (attention is added per step)
  };
  std::array<Graph, kDecodeBuckets.size()> graphs{};

  CostLedger ledger;
  CostLedger* sink = &ledger;
  bool profiling = false;
  std::array<double, kKernelKinds> profile{};
  void* ev_start = nullptr;
  void* ev_end = nullptr;
};

CudaForward::Impl::Impl(const Model& m, const CudaForwardOptions& options) : model(m), s(m.spec), opt(options) {
  if (s.is_moe() || s.is_mla()) fail("CUDA backend: dense Llama-family models only ({} has experts or latent attention)", s.name);
  if ((s.arch != "llama" && s.arch != "mistral" && s.arch != "qwen2") || s.qk_norm != QkNorm::None || s.post_norms ||
      s.sliding_window > 0 || s.ffn_activation != FfnActivation::SwiGlu || s.embedding_scale != 1.0f ||
      s.final_logit_softcap > 0.0f || s.attention_scale > 0.0f)
    fail("CUDA backend: dense llama, mistral and qwen2 models only, not {} (use --device cpu)", s.arch);
  if (!attention_head_dim_supported(s.head_dim)) fail("CUDA backend: head dim {} (kernels for 64, 128, 256)", s.head_dim);
  if (s.n_head % s.n_head_kv != 0 || s.gqa_group() > kAttentionMaxGroup)
    fail("CUDA backend: {} query heads over {} kv heads (groups of at most {})", s.n_head, s.n_head_kv, kAttentionMaxGroup);
  if (s.n_embd % 32 != 0 || s.n_ff % 32 != 0 || s.q_dim() % 32 != 0)
    fail("CUDA backend: widths must be multiples of 32 (n_embd {}, n_ff {}, q_dim {})", s.n_embd, s.n_ff, s.q_dim());
  if (opt.gemv_max_tokens < 1 || opt.gemv_max_tokens > kGemvMaxTokens)
    fail("CUDA backend: the GEMV handles 1..{} tokens, not {}", kGemvMaxTokens, opt.gemv_max_tokens);
  if (device_count() <= opt.device) fail("CUDA backend: no CUDA device {} (found {})", opt.device, device_count());
  set_device(opt.device);
  props = device_props(opt.device);
  stream = stream_create();
  gemm = std::make_unique<GemmLt>();
  w = std::make_unique<DeviceModel>(model, opt.gemm_copies);

  // RoPE as ModelForward applies it, tabulated for every position of the context.
  const int64_t n_ctx = opt.n_ctx > 0 ? opt.n_ctx : s.n_ctx_train > 0 ? s.n_ctx_train : 4096;
  const WeightRef& freqs = model.weights.rope_freqs;
  const std::vector<float> factors =
      rope_freq_factors(s, freqs.present() ? static_cast<const float*>(freqs.data) : nullptr);
  ref::RopeArgs args{s.n_head, s.head_dim, s.rope_dim, s.rope_style == RopeStyle::NeoX, rope_theta_scale(s),
                     factors.empty() ? nullptr : factors.data()};
  if (s.rope_scaling.type == RopeScaling::Type::Linear) args.position_scale = 1.0f / s.rope_scaling.factor;
  const std::vector<float> table = rope_cos_sin_table(args, n_ctx);
  rope_buf = DeviceBuffer(int64_t(table.size() * sizeof(float)));
  copy_to_device(rope_buf.get(), table.data(), rope_buf.bytes(), stream);
  stream_sync(stream);
  rope = {rope_buf.as<float>(), n_ctx, s.head_dim, s.rope_dim, s.rope_style == RopeStyle::NeoX};
  attn_scale = 1.0f / std::sqrt(float(s.head_dim));
  ev_start = event_create();
  ev_end = event_create();
}

CudaForward::Impl::~Impl() {
  try {
    if (stream) stream_sync(stream);
  } catch (const Error&) {  // a failed step left an error behind: free what we can
  }
  drop_graphs();
  event_destroy(ev_start);
  event_destroy(ev_end);
  stream_destroy(stream);
}

void CudaForward::Impl::drop_graphs() {
  for (Graph& g : graphs) {
    graph_destroy(g.exec);
    g = Graph{};
  }
}

template <typename F>
void CudaForward::Impl::launch(KernelKind kind, const KernelCost& cost, F&& f) {
  if (profiling) event_record(ev_start, stream);
  f();
  if (profiling) {
    event_record(ev_end, stream);
    profile[size_t(kind)] += event_elapsed_ms(ev_start, ev_end);
  }
  if (sink) sink->add(kind, cost);
}

// The runs themselves are checked by build_step_inputs.
void CudaForward::Impl::check(const TokenBatch& batch, const KvLayout& kv) const {
  if (kv.n_layer != s.n_layer || kv.n_kv_heads != s.n_head_kv || kv.head_dim != s.head_dim)
    fail("the KV store's shape does not match the model");
  for (const SequenceRun& run : batch.runs)
    if (run.first_position + run.n_tokens > rope.n_positions)
      fail("position {} is past the {} positions the CUDA pass was built for (n_ctx)", run.first_position + run.n_tokens - 1,
           rope.n_positions);
}

void CudaForward::Impl::reserve(int64_t n_tokens, int64_t n_out, int64_t n_tables, int64_t n_partials) {
  bool moved = false;
  if (n_tokens > cap_tokens || n_tables > cap_tables) {
    cap_tokens = std::max(cap_tokens, round_up(n_tokens, 64));
    cap_tables = std::max(cap_tables, round_up(n_tables, 1024));
    const int64_t n = cap_tokens, widest = std::max({s.n_embd, s.q_dim(), s.n_ff});
    moved |= x.reserve(n * s.n_embd * 4);
    moved |= xn.reserve(n * s.n_embd * 4);
    moved |= q.reserve(n * s.q_dim() * 4);
    moved |= k.reserve(n * s.kv_dim() * 4);
    moved |= v.reserve(n * s.kv_dim() * 4);
    moved |= attn.reserve(n * s.q_dim() * 4);
    moved |= gate.reserve(n * s.n_ff * 4);
    moved |= up.reserve(n * s.n_ff * 4);
    moved |= act_q.reserve(n * widest);
    moved |= act_meta.reserve(n * widest / 32 * 16);
    moved |= xbf.reserve(n * widest * 2);
    const int64_t input_bytes = (kTokenSections * cap_tokens + cap_tables) * 4;
    moved |= inputs.reserve(input_bytes);
    inputs_host.reserve(input_bytes);
    int32_t* base = inputs.as<int32_t>();
    in_dev = {base, base + cap_tokens, base + 2 * cap_tokens, base + 3 * cap_tokens, base + 4 * cap_tokens,
              base + kTokenSections * cap_tokens};
  }
  if (n_out > cap_out) {
    cap_out = std::max(cap_out, round_up(n_out, 64));
    moved |= logits.reserve(cap_out * s.n_vocab * 4);
    moved |= ids.reserve(cap_out * 4);
    logits_host.reserve(cap_out * s.n_vocab * 4);
    ids_host.reserve(cap_out * 4);
  }
  if (n_partials > cap_partials) {
    cap_partials = n_partials;
    moved |= partials.reserve(n_partials * 4);
  }
  if (moved) drop_graphs();
}

void CudaForward::Impl::upload(const StepInputs& in) {
  auto* h = inputs_host.as<int32_t>();
  auto put = [&](const std::vector<int32_t>& values, int64_t section) {
    std::copy(values.begin(), values.end(), h + section * cap_tokens);
  };
  put(in.tokens, 0);
  put(in.positions, 1);
  put(in.slots, 2);
  put(in.table_offsets, 3);
  put(in.logit_rows, 4);
  std::copy(in.tables.begin(), in.tables.end(), h + kTokenSections * cap_tokens);
  copy_to_device(inputs.get(), h, (kTokenSections * cap_tokens + int64_t(in.tables.size())) * 4, stream);
}

void CudaForward::Impl::matmul(std::initializer_list<MatmulOut> outs, const float* xin, int64_t n, bool accumulate) {
  const int64_t cols = outs.begin()->w->m.cols;
  if (opt.gemm_copies && matmul_path(n, opt.gemm_min_tokens) == MatmulPath::Gemm) {
    launch(KernelKind::Copy, elementwise_cost(n * cols, 1, 0, 0), [&] { round_to_bf16(xin, n * cols, xbf.as<uint16_t>(), stream); });
    for (const MatmulOut& o : outs) {
      const DeviceMatrix& m = o.w->m;
      launch(KernelKind::Gemm, matmul_cost(m.rows * m.cols * 2, m.rows, cols, n, 2, accumulate),
             [&] { gemm->bf16(o.w->bf16, xbf.as<uint16_t>(), o.y, m.rows, cols, n, accumulate, stream); });
    }
    return;
  }
  // The GEMV, kGemvMaxTokens tokens at a time.
  bool any_quant = false;
  for (const MatmulOut& o : outs) any_quant = any_quant || gemv_quantized(o.w->m.type);
  const ActBlocks acts{act_q.as<int8_t>(), act_meta.as<float>()};
  for (int64_t t0 = 0; t0 < n; t0 += opt.gemv_max_tokens) {
    const int64_t nt = std::min(opt.gemv_max_tokens, n - t0);
    const float* xt = xin + t0 * cols;
    if (any_quant)
      launch(KernelKind::QuantizeAct, elementwise_cost(nt * cols, 1, 0, 4),
             [&] { quantize_activations(xt, nt, cols, acts, stream); });
    const MatmulOut* o = outs.begin();
    while (o != outs.end()) {
      GemvArgs a;
      a.n_out = 0;
      const DType type = o->w->m.type;
      int64_t weight_bytes = 0, rows = 0;
      while (o != outs.end() && o->w->m.type == type && a.n_out < 3) {
        a.out[a.n_out++] = {o->w->m, o->y + t0 * o->w->m.rows};
        weight_bytes += o->w->bytes();
        rows += o->w->m.rows;
        ++o;
      }
      a.x = xt;
      a.acts = acts;
      a.n_tokens = nt;
      a.accumulate = accumulate;
      const int64_t act_bytes = gemv_quantized(type) ? 1 : 4;
      launch(KernelKind::Gemv, matmul_cost(weight_bytes, rows, cols, nt, act_bytes, accumulate), [&] { gemv(a, stream); });
    }
  }
}

void CudaForward::Impl::run_layers(const DeviceKvStore& store, int64_t n, int64_t n_out, const int32_t* out_rows,
                                   AttentionSplit split) {
  const int64_t E = s.n_embd;
  const KvLayout& kvl = store.layout();
  const DeviceWeight& embd = w->token_embd;
  launch(KernelKind::Embed, {double(n) * double(embd.bytes()) / double(embd.m.rows) + double(n * E * 4), 0, 1},
         [&] { dequantize_rows(embd.m, in_dev.tokens, n, x.as<float>(), stream); });
  const KernelCost norm_cost = elementwise_cost(n * E, 1, 1, 4);
  const KernelCost kv_cost{double(n) * double(2 * kvl.kv_dim()) * (4.0 + double(kvl.element_bytes())), 0, 1};
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const DeviceLayer& L = w->layers[size_t(l)];
    const KvLayerDevice kv = store.layer(l);
    float *X = x.as<float>(), *XN = xn.as<float>(), *Q = q.as<float>(), *K = k.as<float>(), *V = v.as<float>();
    launch(KernelKind::Norm, norm_cost, [&] { rms_norm(X, nullptr, L.attn_norm, n, E, s.rms_eps, XN, stream); });
    matmul({{&L.wq, Q}, {&L.wk, K}, {&L.wv, V}}, XN, n, false);
    if (L.bq) launch(KernelKind::Add, elementwise_cost(n * s.q_dim(), 1, 1, 1), [&] { add_bias(Q, L.bq, n, s.q_dim(), stream); });
    if (L.bk) launch(KernelKind::Add, elementwise_cost(n * s.kv_dim(), 1, 1, 1), [&] { add_bias(K, L.bk, n, s.kv_dim(), stream); });
    if (L.bv) launch(KernelKind::Add, elementwise_cost(n * s.kv_dim(), 1, 1, 1), [&] { add_bias(V, L.bv, n, s.kv_dim(), stream); });
    launch(KernelKind::Rope, elementwise_cost(n * s.n_head * s.rope_dim, 1, 1, 6),
           [&] { cuda::rope(rope, in_dev.positions, n, s.n_head, Q, stream); });
    launch(KernelKind::Rope, elementwise_cost(n * s.n_head_kv * s.rope_dim, 1, 1, 6),
           [&] { cuda::rope(rope, in_dev.positions, n, s.n_head_kv, K, stream); });
    launch(KernelKind::KvWrite, kv_cost, [&] { kv_write(kv, K, V, in_dev.slots, n, stream); });
    AttentionArgs a;
    a.n_heads = s.n_head;
    a.n_kv_heads = s.n_head_kv;
    a.head_dim = s.head_dim;
    a.scale = attn_scale;
    a.n_tokens = n;
    a.positions = in_dev.positions;
    a.table_offsets = in_dev.offsets;
    a.tables = in_dev.tables;
    a.n_splits = split.n_splits;
    a.split_size = split.split_size;
    a.partials = partials.as<float>();
    // Attention's bytes depend on the histories, so the step adds them (graphs replay other costs).
    launch(KernelKind::Attention, {}, [&] { attention(a, kv, Q, attn.as<float>(), stream); });
    matmul({{&L.wo, X}}, attn.as<float>(), n, true);  // the residual add folded into the projection
    launch(KernelKind::Norm, norm_cost, [&] { rms_norm(X, nullptr, L.ffn_norm, n, E, s.rms_eps, XN, stream); });
    matmul({{&L.w_gate, gate.as<float>()}, {&L.w_up, up.as<float>()}}, XN, n, false);
    launch(KernelKind::Swiglu, elementwise_cost(n * s.n_ff, 2, 1, 5),
           [&] { swiglu(gate.as<float>(), up.as<float>(), n * s.n_ff, stream); });
    matmul({{&L.w_down, X}}, gate.as<float>(), n, true);
  }
  if (n_out == 0) return;
  launch(KernelKind::Norm, elementwise_cost(n_out * E, 1, 1, 4),
         [&] { rms_norm(x.as<float>(), out_rows, w->output_norm, n_out, E, s.rms_eps, xn.as<float>(), stream); });
  matmul({{&w->output, logits.as<float>()}}, xn.as<float>(), n_out, false);
  launch(KernelKind::Argmax, elementwise_cost(n_out * s.n_vocab, 1, 0, 1),
         [&] { argmax_rows(logits.as<float>(), n_out, s.n_vocab, ids.as<int32_t>(), stream); });
}

void CudaForward::Impl::step(const TokenBatch& batch, DeviceKvStore& store, std::vector<float>* out_logits,
                             std::vector<int32_t>* out_ids) {
  set_device(opt.device);
  check(batch, store.layout());
  const auto bucket = opt.graphs && !profiling && is_decode_batch(batch) ? decode_bucket(int64_t(batch.runs.size()))
                                                                          : std::nullopt;
  const StepInputs in =
      build_step_inputs(batch, store.layout().block_size, store.layout().n_blocks, s.n_vocab, bucket.value_or(0));
  const int64_t n = in.n_tokens();
  // A graph computes every row it was captured with; an eager pass only the wanted ones.
  const int64_t n_out = bucket ? n : int64_t(in.logit_rows.size());
  const AttentionSplit split = bucket ? attention_split(rope.n_positions, n, s.n_head_kv, props.n_sms)
                                      : attention_split(in.max_position + 1, n, s.n_head_kv, props.n_sms);
  reserve(n, n_out, int64_t(in.tables.size()), attention_partial_floats(n, s.n_head, s.head_dim, split.n_splits));
  upload(in);

  if (bucket) {
    Graph& g = graphs[size_t(bucket_index(*bucket))];
    if (g.exec && g.store == &store) {
      graph_launch(g.exec, stream);
      ledger.add(g.ledger);
    } else {
      // First step of this bucket: run it (which also plans the cuBLASLt calls), then capture the
      // same launches for the steps to come.
      run_layers(store, n, n_out, nullptr, split);
      graph_destroy(g.exec);
      g = Graph{};
      sink = &g.ledger;
      capture_begin(stream);
      try {
        run_layers(store, n, n_out, nullptr, split);
      } catch (...) {
        sink = &ledger;
        try {
          graph_destroy(capture_end(stream));
        } catch (...) {
        }
        throw;
      }
      g.exec = capture_end(stream);
      g.store = &store;
      sink = &ledger;
    }
  } else {
    run_layers(store, n, n_out, in_dev.logit_rows, split);
  }
  const KvLayout& kvl = store.layout();
  KernelCost attn_cost = attention_cost(in.n_real, s.n_head, s.head_dim, in.attended,
                                        in.kv_positions * kvl.bytes_per_token_per_layer());
  attn_cost.bytes *= double(s.n_layer);
  attn_cost.flops *= double(s.n_layer);
  attn_cost.launches = s.n_layer;
  ledger.add(KernelKind::Attention, attn_cost);

  // Rows of the device output that are wanted, in run order: all of them for an eager pass.
  const auto n_wanted = int64_t(in.logit_rows.size());
  bool contiguous = true;  // the graph's wanted rows are usually its first ones
  for (int64_t i = 0; bucket && i < n_wanted; ++i) contiguous = contiguous && in.logit_rows[size_t(i)] == i;
  auto copy_rows = [&](const void* dev, void* host, int64_t row_bytes) {
    if (contiguous) {
      copy_to_host(host, dev, n_wanted * row_bytes, stream);
      return;
    }
    for (int64_t i = 0; i < n_wanted; ++i)
      copy_to_host(static_cast<uint8_t*>(host) + i * row_bytes,
                   static_cast<const uint8_t*>(dev) + in.logit_rows[size_t(i)] * row_bytes, row_bytes, stream);
  };
  if (out_logits) copy_rows(logits.get(), logits_host.get(), s.n_vocab * 4);
  if (out_ids) copy_rows(ids.get(), ids_host.get(), 4);
  stream_sync(stream);
  if (out_logits) out_logits->assign(logits_host.as<float>(), logits_host.as<float>() + n_wanted * s.n_vocab);
  if (out_ids) out_ids->assign(ids_host.as<int32_t>(), ids_host.as<int32_t>() + n_wanted);
}

CudaForward::CudaForward(const Model& model, const CudaForwardOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {}

CudaForward::~CudaForward() = default;

const ModelSpec& CudaForward::spec() const { return impl_->s; }

KvLayout CudaForward::kv_layout(int32_t block_size, int32_t n_blocks, KvDtype dtype) const {
  const ModelSpec& s = impl_->s;
  return {s.n_layer, s.n_head_kv, s.head_dim, block_size, n_blocks, dtype};
}

int64_t CudaForward::n_ctx() const { return impl_->rope.n_positions; }
Stream CudaForward::stream() const { return impl_->stream; }
int64_t CudaForward::weight_device_bytes() const { return impl_->w->device_bytes(); }

void CudaForward::forward(const TokenBatch& batch, DeviceKvStore& store, std::vector<float>& logits) {
  impl_->step(batch, store, &logits, nullptr);
}

void CudaForward::forward_argmax(const TokenBatch& batch, DeviceKvStore& store, std::vector<int32_t>& tokens) {
  impl_->step(batch, store, nullptr, &tokens);
}

const CostLedger& CudaForward::costs() const { return impl_->ledger; }
void CudaForward::reset_costs() { impl_->ledger.clear(); }

void CudaForward::set_profiling(bool on) {
  impl_->profiling = on;
  if (on) impl_->profile = {};
}

const std::array<double, kKernelKinds>& CudaForward::profile_ms() const { return impl_->profile; }

}  // namespace ridge::cuda
