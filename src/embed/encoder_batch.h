#pragma once
// Texts packed for one encoder pass: text i is tokens[begin[i] .. begin[i + 1]).
#include <cstdint>
#include <vector>

namespace ridge {

struct EncoderBatch {
  std::vector<int32_t> tokens;
  std::vector<int32_t> type_ids;  // parallel to tokens, or empty (all type 0)
  std::vector<int64_t> begin{0};  // n_texts + 1 offsets
  int64_t n_texts() const { return int64_t(begin.size()) - 1; }
  // Error when `types` differs in length from `ids`, or when texts with and without types are mixed.
  void add(const std::vector<int32_t>& ids, const std::vector<int32_t>* types = nullptr);
};

}  // namespace ridge
