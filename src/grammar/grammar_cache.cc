#include "grammar/grammar_cache.h"

namespace ridge::grammar {

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocab> vocab, size_t capacity, CompileLimits limits)
    : vocab_(std::move(vocab)), capacity_(capacity), limits_(limits) {}

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const GrammarSpec& spec) {
  const std::string key = spec.cache_key();
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.hits;
      return it->second->second;
    }
  }
  std::shared_ptr<const CompiledGrammar> compiled;
  try {
    compiled = std::make_shared<const CompiledGrammar>(build_grammar(spec), vocab_, limits_);
  } catch (const GrammarError&) {
    std::lock_guard lock(mutex_);
    ++stats_.errors;
    throw;
  }
  std::lock_guard lock(mutex_);
  ++stats_.compiles;
  stats_.compile_seconds.push_back(compiled->compile_seconds());
  if (by_key_.count(key)) return compiled;  // another thread compiled it meanwhile
  lru_.emplace_front(key, compiled);
  by_key_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    by_key_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

GrammarCacheStats GrammarCache::take_stats() {
  std::lock_guard lock(mutex_);
  GrammarCacheStats out = stats_;
  stats_.compile_seconds.clear();
  return out;
}

}  // namespace ridge::grammar
