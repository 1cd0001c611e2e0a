// BERT as an embedding family: the WordPiece tokenizer (tokenizer.json, vocab.txt or the GGUF's
// vocabulary) and EncoderForward over the weights of either layout.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "embed/encoder_family.h"
#include "embed/encoder_forward.h"
#include "embed/encoder_recode.h"
#include "model/gguf/gguf_file.h"
#include "model/safetensors/safetensors_checkpoint.h"
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

// BertForSequenceClassification's number of labels (id2label, else num_labels, else 2), or 0 for
// another architecture.
int64_t sequence_classification_labels(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "config.json");
  const auto config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || !config.contains("architectures") || !config["architectures"].is_array()) return 0;
  bool classifier = false;
  for (const auto& a : config["architectures"]) classifier |= a.is_string() && a.get<std::string>() == "BertForSequenceClassification";
  if (!classifier) return 0;
  if (config.contains("id2label") && config["id2label"].is_object() && !config["id2label"].empty())
    return int64_t(config["id2label"].size());
  const auto n = config.value("num_labels", int64_t(2));
  if (n < 1 || n > 4096) fail("{}: config.json: num_labels {} is out of range", dir, n);
  return n;
}

// The pooler (dense + tanh on [CLS]) and the classifier as Dense layers after CLS pooling.
void add_classification_head(const std::string& dir, int64_t n_embd, int64_t labels, EmbeddingPipeline& p) {
  const SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir);
  const auto dense = [&](const std::string& name, int64_t out, int64_t in, DenseLayer::Activation act) {
    DenseLayer d;
    d.in = in, d.out = out, d.activation = act;
    d.weight = tensor_floats(checked_tensor(c, name + ".weight", {out, in}));
    d.bias = tensor_floats(checked_tensor(c, name + ".bias", {out}));
    return d;
  };
  p = EmbeddingPipeline{};
  p.pooling = PoolingMode::Cls;
  p.dense.push_back(dense("bert.pooler.dense", n_embd, n_embd, DenseLayer::Activation::Tanh));
  p.dense.push_back(dense("classifier", labels, n_embd,
                          labels == 1 ? DenseLayer::Activation::Sigmoid : DenseLayer::Activation::Identity));
  p.cross_encoder = true;
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
    if (const int64_t labels = sequence_classification_labels(path); labels > 0)
      add_classification_head(path, model->spec.n_embd, labels, parts.pipeline);
    const fs::path tokenizer_json = fs::path(path) / "tokenizer.json";
    parts.tokenizer = std::make_unique<WordPieceEmbeddingTokenizer>(
        fs::exists(tokenizer_json) ? WordPieceTokenizer::from_tokenizer_json(tokenizer_json.string())
                                   : WordPieceTokenizer::from_vocab_txt((fs::path(path) / "vocab.txt").string()));
    parts.name = fs::path(path).filename().string();
    if (parts.name.empty()) parts.name = fs::path(path).parent_path().filename().string();
  } else {
    const auto opened = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
    *model = load_bert_gguf(opened, path);
    const gguf::GgufFile& file = *opened;
    try {
      parts.pipeline.pooling = pooling_from_llama_type(file.get_int("bert.pooling_type").value_or(1));
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
