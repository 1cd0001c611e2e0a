#include "serve/embedding_only_backend.h"

#include <fmt/format.h>

#include "core/error.h"

namespace ridge {

std::string EmbeddingOnlyBackend::refusal() const {
  return fmt::format("'{}' is an embedding model: use /v1/embeddings, /v1/rerank or /v1/score", service_.id());
}

RequestId EmbeddingOnlyBackend::submit(RequestOptions, EventCallback) {
  throw SubmitError(SubmitError::Kind::BadRequest, refusal());
}

std::vector<int32_t> EmbeddingOnlyBackend::tokenize(std::string_view text, bool add_special) const {
  return service_.model().tokenizer().encode(text, add_special);
}

std::string EmbeddingOnlyBackend::apply_chat_template(std::span<const ChatMessage>, const ChatRenderOptions&) const {
  fail("{}", refusal());
}

std::string EmbeddingOnlyBackend::token_piece(int32_t token) const { return service_.model().tokenizer().token_text(token); }

int32_t EmbeddingOnlyBackend::n_vocab() const { return service_.model().tokenizer().n_vocab(); }

}  // namespace ridge
