#pragma once
// A model the registry has loaded: a generative engine behind the server's CompletionBackend, or
// an embedding model's service. Destroying it stops its engine (the registry does so only when no
// request holds it).
#include <cstdint>
#include <string>

namespace ridge {
class CompletionBackend;
class EmbeddingService;
struct EngineStats;
}  // namespace ridge

namespace ridge::models {

class ServedModel {
 public:
  virtual ~ServedModel() = default;
  virtual CompletionBackend* completions() { return nullptr; }  // nullptr: an embedding model
  virtual EmbeddingService* embeddings() { return nullptr; }    // nullptr: a generative model
  virtual int64_t memory_bytes() const = 0;     // weights + KV pool (or an embedding model's matrices)
  virtual int64_t context_length() const = 0;   // tokens of one request, at most
  virtual const char* task() const = 0;          // "generate" or "embed"
};

}  // namespace ridge::models
