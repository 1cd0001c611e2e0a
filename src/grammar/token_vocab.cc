#include "grammar/token_vocab.h"

#include <algorithm>
#include <atomic>

namespace ridge::grammar {

TokenVocab::TokenVocab(std::vector<std::string> token_bytes, std::vector<int32_t> stop_tokens)
    : bytes_(std::move(token_bytes)), stop_tokens_(std::move(stop_tokens)), plain_(bytes_) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < n_vocab(); ++id)
    if (!bytes_[id].empty()) {
      ids.push_back(id);
      max_token_bytes_ = std::max(max_token_bytes_, static_cast<int32_t>(bytes_[id].size()));
    }
  trie_ = TokenTrie::of(bytes_, std::move(ids));
}

}  // namespace ridge::grammar
