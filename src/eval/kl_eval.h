#pragma once
// `ridge eval kl`: a model against a base over a text, as llama-perplexity --kl-divergence
// measures it. The text is tokenized once (the base's tokenizer, BOS as the file says), cut into
// chunks of n_ctx tokens, each run through both models from an empty cache; the second half of
// each chunk is scored (the first half is context), so every scored token sees at least
// n_ctx / 2 tokens before it.
#include <cstdint>
#include <string>

#include "eval/kl_stats.h"

namespace ridge::eval {

struct KlEvalOptions {
  std::string base, model;  // GGUF files (or model names)
  std::string text_file;
  int64_t n_ctx = 512;
  int64_t max_chunks = 0;   // 0: all the text holds
  int threads = 0;          // <= 0: one per core
  bool progress = true;
};

struct KlEvalReport {
  KlStats stats;
  int64_t n_chunks = 0;
  int64_t n_text_tokens = 0;
  double seconds = 0;
};

KlEvalReport run_kl_eval(const KlEvalOptions& options);

}  // namespace ridge::eval
