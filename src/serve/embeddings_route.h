#pragma once
// The embedding model's routes:
//   POST /v1/embeddings  OpenAI's: "input" as a string, a list of strings, token ids or lists of
//                        ids; "dimensions" (Matryoshka, renormalised); "encoding_format" float or
//                        base64 (little-endian f32); usage. ridge also takes "prompt_name" (a task
//                        prompt of the model) and "truncate" (cut texts past the model's length;
//                        default false: refused, as OpenAI refuses them).
//   POST /v1/rerank      Jina / Cohere's shape (as vLLM and llama.cpp answer it): "query",
//                        "documents" (strings or {"text"}), "top_n", "return_documents".
//   POST /v1/score       vLLM's: "text_1" and "text_2", each a string or a list (1:1, 1:N, N:N).
// A bi-encoder scores a pair by the cosine of the two vectors (the query through the model's
// "query" prompt and documents through its "document" prompt, where it has them).
#include <functional>
#include <string>
#include <string_view>

#include "embed/embedding_service.h"

namespace ridge {

// Each returns the reply's JSON text; throws ApiError (400, naming the field) for a bad body.
// client_gone: polled while waiting for the model (an empty reply then: nobody reads it).
std::string embeddings_reply(EmbeddingService& service, std::string_view body, const std::function<bool()>& client_gone);
std::string rerank_reply(EmbeddingService& service, std::string_view body, const std::function<bool()>& client_gone);
std::string score_reply(EmbeddingService& service, std::string_view body, const std::function<bool()>& client_gone);
// The embedding model's counters in Prometheus' text format (names under "ridge:", labelled by model).
std::string embedding_metrics(const EmbeddingService& service);

}  // namespace ridge
