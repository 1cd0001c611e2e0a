#include "engine/stop_strings.h"

#include <algorithm>
#include <utility>

namespace ridge {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopStringMatcher::Result StopStringMatcher::push(std::string_view text) {
  if (stopped_) return {"", true};
  pending_ += text;
  // The earliest match wins: text after it was never meant to be seen.
  size_t match = std::string::npos;
  for (const auto& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at < match) {
      match = at;
      matched_ = stop;
    }
  }
  if (match != std::string::npos) {
    stopped_ = true;
    std::string released = pending_.substr(0, match);
    pending_.clear();
    return {std::move(released), true};
  }
  const size_t keep = held_back_length();
  std::string released = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return {std::move(released), false};
}

std::string StopStringMatcher::flush() {
  if (stopped_) return "";
  return std::exchange(pending_, {});
}

size_t StopStringMatcher::held_back_length() const {
  size_t longest = 0;
  for (const auto& stop : stops_) {
    // A full occurrence was ruled out by push(), so only proper prefixes can be pending.
    const size_t most = std::min(pending_.size(), stop.size() - 1);
    for (size_t n = most; n > longest; --n) {
      if (std::string_view(pending_).substr(pending_.size() - n) == std::string_view(stop).substr(0, n)) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace ridge
