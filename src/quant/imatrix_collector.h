#pragma once
// `ridge imatrix`: runs a calibration text through a model and sums the square of every dense
// matmul's input per column (ImportanceMatrix), named by the GGUF tensor each matmul reads.
// Chunks of n_ctx tokens from an empty cache, BOS first, as llama-imatrix runs them; it reports
// the text's perplexity on the way, as llama-imatrix does.
#include <cstdint>
#include <string>

#include "quant/importance_matrix.h"

namespace ridge::quant {

struct ImatrixOptions {
  std::string model;      // GGUF path or model name
  std::string text_file;  // calibration text
  int64_t n_ctx = 512;
  int64_t max_chunks = 0;       // 0: the whole text
  bool process_output = false;  // also collect output.weight (llama-imatrix leaves it out by default)
  int threads = 0;
  bool progress = true;
};

struct ImatrixReport {
  int64_t n_chunks = 0, n_tokens = 0;
  double perplexity = 0;
  double seconds = 0;
};

ImportanceMatrix collect_imatrix(const ImatrixOptions& options, ImatrixReport& report);

}  // namespace ridge::quant
