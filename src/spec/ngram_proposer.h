#pragma once
// Prompt lookup (n-gram) proposals: the longest suffix of a request's tokens (prompt and output)
// that occurred earlier in them, and the tokens that followed its latest earlier occurrence. Costs
// no model: what pays on input-grounded work (editing, summarising, extracting from a given text).
#include <cstdint>
#include <span>
#include <vector>

namespace ridge::spec {

struct NgramOptions {
  int32_t min_n = 2;  // shortest suffix that counts as a match (vLLM's prompt_lookup_min)
  int32_t max_n = 5;  // longest suffix tried first (prompt_lookup_max)
};

// Up to `k` tokens; none when no suffix of min_n..max_n tokens occurred before.
std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int32_t k, const NgramOptions& options);

}  // namespace ridge::spec
