// A decoder (any GGUF architecture ridge runs: Qwen3, Llama, Gemma 3, ...) as an embedding model, as
// llama.cpp's --embeddings runs it: causal attention over each text, the final norm's output pooled
// (last token for Qwen3-Embedding-style models, or mean / first), then L2-normalised. The pooling comes
// from the file's "<arch>.pooling_type" or the caller (--pooling).
#include <filesystem>

#include "core/error.h"
#include "embed/encoder_family.h"
#include "kernels/ref/norm.h"
#include "kv/kv_cache.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/load_gguf.h"
#include "tokenizer/tokenizer.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

class GgufEmbeddingTokenizer final : public EmbeddingTokenizer {
 public:
  explicit GgufEmbeddingTokenizer(Tokenizer t) : t_(std::move(t)) {}
  std::vector<int32_t> encode(std::string_view text, bool add_special, int64_t max_tokens) const override {
    std::vector<int32_t> ids = t_.encode(text, add_special, /*parse_special=*/false);
    if (max_tokens > 0 && int64_t(ids.size()) > max_tokens) {
      // Cut the text's tokens, keeping a closing EOS the file adds (last-token pooling reads it).
      const bool eos = add_special && t_.add_eos() && !ids.empty() && ids.back() == t_.eos_id();
      ids.resize(size_t(max_tokens));
      if (eos) ids.back() = t_.eos_id();
    }
    return ids;
  }
  void encode_pair(std::string_view, std::string_view, int64_t, std::vector<int32_t>&, std::vector<int32_t>&) const override {
    fail("a decoder embedding model scores no pairs of its own (it embeds each text)");
  }
  std::string decode(std::span<const int32_t> ids) const override { return t_.decode(ids); }
  int32_t n_vocab() const override { return t_.n_vocab(); }
  std::string token_text(int32_t id) const override { return t_.token_text(id); }

 private:
  Tokenizer t_;
};

// Each text through the decoder on its own single-sequence cache (causal, as the model was trained),
// its final-norm states out.
class DecoderEncoder final : public Encoder {
 public:
  DecoderEncoder(std::shared_ptr<const Model> model, int n_threads) : model_(std::move(model)), forward_(*model_, n_threads) {
    const ModelSpec& s = model_->spec;
    shape_ = {s.arch, s.n_vocab, s.n_embd, s.n_layer, s.n_ctx_train};
  }
  const EncoderShape& shape() const override { return shape_; }
  int n_threads() const override { return forward_.n_threads(); }
  double flops(const EncoderBatch& batch) const override {
    const ModelSpec& s = model_->spec;
    const double per_token = 2.0 * double(s.n_layer) *
                             (double(s.n_embd) * double(s.q_dim() * 2 + s.kv_dim() * 2) + 3.0 * double(s.n_embd) * double(s.n_ff));
    return per_token * double(batch.tokens.size());
  }
  void forward(const EncoderBatch& batch, std::vector<float>& hidden) override {
    const ModelSpec& s = model_->spec;
    hidden.resize(batch.tokens.size() * size_t(s.n_embd));
    if (!batch.type_ids.empty()) fail("a decoder takes no token types");
    for (int64_t i = 0; i < batch.n_texts(); ++i) {
      const int64_t first = batch.begin[size_t(i)], n = batch.begin[size_t(i) + 1] - first;
      if (n > shape_.n_positions) fail("a text of {} tokens is longer than the model's {} positions", n, shape_.n_positions);
      KvCache cache = forward_.make_cache(n);
      const SequenceRun run{n, 0, cache.block_table(), LogitsWanted::Last, n};
      forward_.run_layers(TokenBatch{std::span(batch.tokens).subspan(size_t(first), size_t(n)), std::span(&run, 1)},
                          cache.store(), nullptr);
      ref::rms_norm(forward_.residual().data(), static_cast<const float*>(model_->weights.output_norm.data), n, s.n_embd,
                    s.rms_eps, hidden.data() + first * s.n_embd);
    }
  }

 private:
  std::shared_ptr<const Model> model_;
  ModelForward forward_;
  EncoderShape shape_;
};

}  // namespace

EncoderParts load_decoder_family(const std::string& path, int n_threads, const std::string& pooling) {
  EncoderParts parts;
  auto file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  const std::string arch = file->get_string("general.architecture").value_or("");
  if (pooling == "last") parts.pipeline.pooling = PoolingMode::LastToken;
  else if (pooling == "mean") parts.pipeline.pooling = PoolingMode::Mean;
  else if (pooling == "cls") parts.pipeline.pooling = PoolingMode::Cls;
  else if (const auto type = file->get_int(arch + ".pooling_type")) parts.pipeline.pooling = pooling_from_llama_type(*type);
  else fail("{}: a {} model with no pooling type: pass --pooling last (or mean, cls) to embed with it", path, arch);
  parts.pipeline.normalize = true;  // as llama.cpp's embeddings are returned
  parts.tokenizer = std::make_unique<GgufEmbeddingTokenizer>(Tokenizer::from_gguf(*file));
  auto model = std::make_shared<const Model>(load_gguf_model(file));
  parts.encoder = std::make_unique<DecoderEncoder>(model, n_threads);
  parts.weights = model;
  parts.name = fs::path(path).stem().string();
  return parts;
}

}  // namespace ridge
