#include "quant/imatrix_collector.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <unordered_map>

#include "bench/progress.h"
#include "core/error.h"
#include "eval/kl_stats.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "tokenizer/tokenizer.h"

namespace ridge::quant {
namespace {

// Names each dense matrix of the model by its data pointer, with the GGUF tensor name.
class Collector final : public MatmulObserver {
 public:
  Collector(const Model& model, bool process_output, ImportanceMatrix& out) : out_(out) {
    const ModelWeights& w = model.weights;
    for (size_t i = 0; i < w.layers.size(); ++i) {
      const LayerWeights& l = w.layers[i];
      const std::string p = fmt::format("blk.{}.", i);
      for (const auto& [ref, name] : {std::pair{&l.wq, "attn_q"}, {&l.wk, "attn_k"}, {&l.wv, "attn_v"},
                                      {&l.wo, "attn_output"}, {&l.w_gate, "ffn_gate"}, {&l.w_up, "ffn_up"},
                                      {&l.w_down, "ffn_down"}, {&l.shared_gate, "ffn_gate_shexp"},
                                      {&l.shared_up, "ffn_up_shexp"}, {&l.shared_down, "ffn_down_shexp"},
                                      {&l.wq_a, "attn_q_a"}, {&l.wq_b, "attn_q_b"}, {&l.wkv_a, "attn_kv_a_mqa"}})
        if (ref->present()) names_[ref->data] = p + name + ".weight";
    }
    // A tied model's output is its token embedding, under that name (as llama-imatrix sees it).
    const bool tied = w.output.data == w.token_embd.data;
    if (tied || process_output) names_[w.output.data] = tied ? "token_embd.weight" : "output.weight";
  }

  void observe(const void* weight_data, const float* x, int64_t n_tokens, int64_t cols) override {
    auto it = names_.find(weight_data);
    if (it != names_.end()) out_.accumulate(it->second, x, n_tokens, cols);
  }

 private:
  ImportanceMatrix& out_;
  std::unordered_map<const void*, std::string> names_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read the calibration text '{}'", path);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

ImportanceMatrix collect_imatrix(const ImatrixOptions& o, ImatrixReport& report) {
  const auto start = std::chrono::steady_clock::now();
  if (o.n_ctx < 4) fail("--ctx-size {} is too small (at least 4)", o.n_ctx);
  const std::string path = resolve_model_path(o.model);
  const Tokenizer tokenizer = Tokenizer::from_gguf(gguf::GgufFile::open(path));
  const Model model = load_model(path);
  if (o.n_ctx > model.spec.n_ctx_train) fail("--ctx-size {} is beyond the model's trained context", o.n_ctx);
  const std::vector<int32_t> tokens = tokenizer.encode(read_text(o.text_file), true, false);
  int64_t n_chunks = int64_t(tokens.size()) / o.n_ctx;
  if (o.max_chunks > 0) n_chunks = std::min(n_chunks, o.max_chunks);
  if (n_chunks == 0) fail("'{}' has {} tokens, fewer than one chunk of {}", o.text_file, tokens.size(), o.n_ctx);

  ImportanceMatrix m;
  m.datasets = {std::filesystem::path(o.text_file).filename().string()};
  m.chunk_size = o.n_ctx;
  Collector collector(model, o.process_output, m);
  ModelForward forward(model, o.threads);
  forward.set_matmul_observer(&collector);

  std::optional<bench::ProgressBar> bar;
  if (o.progress) bar.emplace("imatrix", n_chunks);
  const int64_t n_vocab = model.spec.n_vocab;
  std::vector<int32_t> chunk(size_t(o.n_ctx));
  std::vector<float> logits;
  std::vector<double> logp;
  double nll = 0;
  int64_t scored = 0;
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::copy_n(tokens.begin() + c * o.n_ctx, o.n_ctx, chunk.begin());
    if (tokenizer.add_bos() && tokenizer.bos_id() >= 0) chunk[0] = tokenizer.bos_id();
    KvCache cache = forward.make_cache(o.n_ctx);
    forward.forward(chunk, cache, /*all_logits=*/true, logits, /*prompt=*/true);
    for (int64_t j = o.n_ctx / 2; j + 1 < o.n_ctx; ++j) {
      eval::log_softmax(std::span(logits).subspan(size_t(j * n_vocab), size_t(n_vocab)), logp);
      nll -= logp[size_t(chunk[size_t(j + 1)])];
      ++scored;
    }
    m.chunk_count = c + 1;
    if (bar) bar->advance(1, fmt::format("ppl {:.3f}", std::exp(nll / double(scored))));
  }
  if (bar) bar->finish();
  report.n_chunks = n_chunks;
  report.n_tokens = n_chunks * o.n_ctx;
  report.perplexity = std::exp(nll / double(scored));
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace ridge::quant
