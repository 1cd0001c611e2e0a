#pragma once
// Compiled grammars by request spec, for one vocabulary: a schema sent by many requests is compiled
// once. Thread-safe; compiles run on the caller's thread (an HTTP handler), outside the lock, so a
// slow compile stalls only its own client. Least recently used entries go first.
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar_spec.h"

namespace ridge::grammar {

struct GrammarCacheStats {
  int64_t hits = 0;
  int64_t compiles = 0;
  int64_t errors = 0;                  // specs refused (bad, unsupported, too slow)
  std::vector<double> compile_seconds; // of each compile since the last take (for a histogram)
};

class GrammarCache {
 public:
  GrammarCache(std::shared_ptr<const TokenVocab> vocab, size_t capacity = 128, CompileLimits limits = {});

  // Throws GrammarError.
  std::shared_ptr<const CompiledGrammar> get(const GrammarSpec& spec);
  GrammarCacheStats take_stats();  // counters, and compile times since the last call
  const std::shared_ptr<const TokenVocab>& vocab() const { return vocab_; }

 private:
  std::shared_ptr<const TokenVocab> vocab_;
  size_t capacity_;
  CompileLimits limits_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const CompiledGrammar>>> lru_;  // most recent first
  std::unordered_map<std::string, decltype(lru_)::iterator> by_key_;
  GrammarCacheStats stats_;
};

}  // namespace ridge::grammar
