#include "serve/response_store.h"

namespace ridge {

void ResponseStore::put(const std::string& id, std::vector<ChatMessage> conversation) {
  std::lock_guard lock(mutex_);
  if (capacity_ == 0) return;
  if (conversations_.insert_or_assign(id, std::move(conversation)).second) order_.push_back(id);
  while (order_.size() > capacity_) {
    conversations_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<std::vector<ChatMessage>> ResponseStore::get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = conversations_.find(id);
  if (it == conversations_.end()) return std::nullopt;
  return it->second;
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return conversations_.size();
}

}  // namespace ridge
