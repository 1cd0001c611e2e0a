#pragma once
// The Responses API's memory of earlier responses (previous_response_id): each stored response's
// conversation -- its input items read as chat messages (instructions excluded: they are not
// carried over) and its output as the assistant turn -- under its id, in RAM, the oldest dropped
// past the bound. A request with store: false is not kept. Shared by the HTTP threads.
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/chat_template.h"

namespace ridge {

class ResponseStore {
 public:
  explicit ResponseStore(size_t capacity = 1024) : capacity_(capacity) {}

  void put(const std::string& id, std::vector<ChatMessage> conversation);
  // nullopt: never stored, or dropped since.
  std::optional<std::vector<ChatMessage>> get(const std::string& id) const;
  size_t size() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<ChatMessage>> conversations_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace ridge
