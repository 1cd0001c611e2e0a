// Bidirectional Gemma 3 (EmbeddingGemma) as an embedding family: the SentencePiece tokenizer of
// the directory and GemmaEncoder over its safetensors, the sentence-transformers pipeline around them.
#include <filesystem>

#include "core/error.h"
#include "embed/encoder_family.h"
#include "embed/encoder_recode.h"
#include "embed/gemma_encoder.h"
#include "embed/gemma_tokenizer.h"

namespace ridge {

EncoderParts load_gemma_family(const std::string& path, int n_threads, const std::string& dtype) {
  namespace fs = std::filesystem;
  const std::optional<DType> to = parse_encoder_dtype(dtype);
  if (!to) fail("--dtype '{}' is not one of f32, bf16, f16, q8_0", dtype);
  auto model = std::make_shared<GemmaEncoderModel>(load_gemma_safetensors(path));
  EncoderParts parts;
  parts.pipeline = read_embedding_pipeline(path, model->spec.n_embd);
  parts.tokenizer = load_gemma_tokenizer(path);
  parts.name = fs::path(path).filename().string();
  if (parts.name.empty()) parts.name = fs::path(path).parent_path().filename().string();
  if (parts.tokenizer->n_vocab() > model->spec.n_vocab)
    fail("{}: the tokenizer has {} tokens, the model's embeddings {}", path, parts.tokenizer->n_vocab(),
         model->spec.n_vocab);
  if (*to != DType::F32) {
    // Under q8_0 the FFN's down projection and Q/K/V go to bf16: Q8_0's rounding compounds over 24
    // layers with Gemma 3's large activations (one French sentence fell to cosine 0.9974 against the
    // f32 vectors with every matrix Q8_0; 0.9992 with down in bf16, 0.99984 with down and Q/K/V).
    std::vector<WeightRef*> matrices, wider;
    for (GemmaLayerWeights& l : model->weights.layers) {
      for (WeightRef* w : {&l.wo, &l.w_gate, &l.w_up}) matrices.push_back(w);
      for (WeightRef* w : {&l.wq, &l.wk, &l.wv, &l.w_down}) (*to == DType::Q8_0 ? wider : matrices).push_back(w);
    }
    try {
      model->storage = recode_matrices(matrices, *to, model->storage);
      if (!wider.empty()) model->storage = recode_matrices(wider, DType::BF16, model->storage);
    } catch (const Error& e) {
      fail("{}: {}", path, e.what());
    }
  }
  parts.encoder = std::make_unique<GemmaEncoder>(*model, n_threads);
  parts.weights = model;
  return parts;
}

}  // namespace ridge
