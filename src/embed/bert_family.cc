// BERT as an embedding family: the WordPiece tokenizer (tokenizer.json, vocab.txt or the GGUF's
// vocabulary) and EncoderForward over the weights of either layout.
#include <filesystem>

#include "core/error.h"
#include "embed/encoder_family.h"
#include "embed/encoder_forward.h"
#include "embed/encoder_recode.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/wordpiece.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

class WordPieceEmbeddingTokenizer final : public EmbeddingTokenizer {
 public:
  explicit WordPieceEmbeddingTokenizer(WordPieceTokenizer t) : t_(std::move(t)) {}
  std::vector<int32_t> encode(std::string_view text, bool add_special, int64_t max_tokens) const override {
    return t_.encode(text, add_special, max_tokens);
  }
  void encode_pair(std::string_view a, std::string_view b, int64_t max_tokens, std::vector<int32_t>& ids,
                   std::vector<int32_t>& type_ids) const override {
    t_.encode_pair(a, b, max_tokens, ids, type_ids);
  }
  std::string decode(std::span<const int32_t> ids) const override { return t_.decode(ids); }
  int32_t n_vocab() const override { return t_.n_vocab(); }
  std::string token_text(int32_t id) const override { return t_.token_text(id); }

 private:
  WordPieceTokenizer t_;
};

// llama.cpp's pooling types (LLAMA_POOLING_TYPE_*): 1 mean, 2 cls, 3 last.
PoolingMode gguf_pooling(const gguf::GgufFile& file) {
  const int64_t type = file.get_int("bert.pooling_type").value_or(1);
  switch (type) {
    case 1: return PoolingMode::Mean;
    case 2: return PoolingMode::Cls;
    case 3: return PoolingMode::LastToken;
    default: fail("bert.pooling_type {} is not one ridge runs (1 mean, 2 cls, 3 last)", type);
  }
}

}  // namespace

EncoderParts load_bert_family(const std::string& path, int n_threads, const std::string& dtype) {
  const std::optional<DType> to = parse_encoder_dtype(dtype);
  if (!to) fail("--dtype '{}' is not one of f32, bf16, f16, q8_0", dtype);
  auto model = std::make_shared<EncoderModel>();
  EncoderParts parts;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    *model = load_bert_safetensors(path);
    parts.pipeline = read_embedding_pipeline(path, model->spec.n_embd);
    const fs::path tokenizer_json = fs::path(path) / "tokenizer.json";
    parts.tokenizer = std::make_unique<WordPieceEmbeddingTokenizer>(
        fs::exists(tokenizer_json) ? WordPieceTokenizer::from_tokenizer_json(tokenizer_json.string())
                                   : WordPieceTokenizer::from_vocab_txt((fs::path(path) / "vocab.txt").string()));
    parts.name = fs::path(path).filename().string();
    if (parts.name.empty()) parts.name = fs::path(path).parent_path().filename().string();
  } else {
    *model = load_bert_gguf(path);
    const gguf::GgufFile file = gguf::GgufFile::open(path);
    try {
      parts.pipeline.pooling = gguf_pooling(file);
      parts.tokenizer = std::make_unique<WordPieceEmbeddingTokenizer>(WordPieceTokenizer::from_gguf(file));
    } catch (const Error& e) {
      fail("{}: {}", path, e.what());
    }
    parts.pipeline.normalize = true;  // as llama.cpp's server returns them
    parts.name = fs::path(path).stem().string();
  }
  if (parts.tokenizer->n_vocab() > model->spec.n_vocab)
    fail("{}: the tokenizer has {} tokens, the model's embeddings {}", path, parts.tokenizer->n_vocab(), model->spec.n_vocab);
  if (*to != DType::F32) recode_encoder(*model, *to);
  parts.encoder = std::make_unique<EncoderForward>(*model, n_threads);
  parts.weights = model;
  return parts;
}

}  // namespace ridge
