#pragma once
// The completion side of a server whose only model is an embedding model: it lists the model,
// tokenizes with it (/tokenize, /detokenize), and refuses generation with a 400 that points at
// /v1/embeddings, as vLLM does for a pooling model.
#include "embed/embedding_service.h"
#include "serve/completion_backend.h"

namespace ridge {

class EmbeddingOnlyBackend final : public CompletionBackend {
 public:
  explicit EmbeddingOnlyBackend(const EmbeddingService& service) : service_(service) {}
  RequestId submit(RequestOptions options, EventCallback on_event) override;
  void cancel(RequestId) override {}
  EngineStats stats() const override { return {}; }
  std::vector<int32_t> tokenize(std::string_view text, bool add_special) const override;
  std::string apply_chat_template(std::span<const ChatMessage> messages, const ChatRenderOptions& options) const override;
  std::string token_piece(int32_t token) const override;
  int32_t n_vocab() const override;
  int64_t n_ctx() const override { return service_.model().max_tokens(); }
  std::string model_id() const override { return service_.id(); }

 private:
  std::string refusal() const;
  const EmbeddingService& service_;
};

}  // namespace ridge
