#include "eval/kl_eval.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>

#include "bench/progress.h"
#include "core/error.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "tokenizer/tokenizer.h"

namespace ridge::eval {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read the text file '{}'", path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// All logits of one chunk, from an empty cache.
void chunk_logits(ModelForward& forward, std::span<const int32_t> tokens, std::vector<float>& logits) {
  KvCache cache = forward.make_cache(int64_t(tokens.size()));
  forward.forward(tokens, cache, /*all_logits=*/true, logits, /*prompt=*/true);
}

}  // namespace

KlEvalReport run_kl_eval(const KlEvalOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.n_ctx < 4) fail("--ctx-size {} is too small to score anything (at least 4)", o.n_ctx);
  const std::string base_path = resolve_model_path(o.base), model_path = resolve_model_path(o.model);
  const Tokenizer tokenizer = Tokenizer::from_gguf(gguf::GgufFile::open(base_path));
  const Model base = load_model(base_path);
  const Model model = load_model(model_path);
  if (base.spec.n_vocab != model.spec.n_vocab)
    fail("{} has {} tokens in its vocabulary, {} has {}: KL needs one vocabulary", o.base, base.spec.n_vocab, o.model,
         model.spec.n_vocab);
  if (o.n_ctx > base.spec.n_ctx_train || o.n_ctx > model.spec.n_ctx_train)
    fail("--ctx-size {} is beyond a model's trained context", o.n_ctx);

  const std::vector<int32_t> tokens = tokenizer.encode(read_text(o.text_file), true, false);
  KlEvalReport report;
  report.n_text_tokens = int64_t(tokens.size());
  int64_t n_chunks = int64_t(tokens.size()) / o.n_ctx;
  if (o.max_chunks > 0) n_chunks = std::min(n_chunks, o.max_chunks);
  if (n_chunks == 0)
    fail("'{}' has {} tokens, fewer than one chunk of {} (--ctx-size)", o.text_file, tokens.size(), o.n_ctx);

  ModelForward base_forward(base, o.threads), model_forward(model, o.threads);
  std::optional<bench::ProgressBar> bar;
  if (o.progress) bar.emplace("eval kl", n_chunks);
  const int64_t n_vocab = base.spec.n_vocab, first = o.n_ctx / 2;
  std::vector<float> base_logits, model_logits;
  std::vector<int32_t> chunk(size_t(o.n_ctx));
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::copy_n(tokens.begin() + c * o.n_ctx, o.n_ctx, chunk.begin());
    if (tokenizer.add_bos() && tokenizer.bos_id() >= 0) chunk[0] = tokenizer.bos_id();  // as llama-perplexity does
    chunk_logits(base_forward, chunk, base_logits);
    chunk_logits(model_forward, chunk, model_logits);
    for (int64_t j = first; j + 1 < o.n_ctx; ++j) {
      const auto row = [&](const std::vector<float>& l) { return std::span(l).subspan(size_t(j * n_vocab), size_t(n_vocab)); };
      report.stats.add(row(base_logits), row(model_logits), chunk[size_t(j + 1)]);
    }
    if (bar) bar->advance(1, fmt::format("KL {:.4f}, top-1 {:.1f}%", report.stats.mean_kl(), 100 * report.stats.top1_agreement()));
  }
  if (bar) bar->finish();
  report.n_chunks = n_chunks;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ridge::eval
