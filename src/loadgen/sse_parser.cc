#include "loadgen/sse_parser.h"

namespace ridge::loadgen {

void SseParser::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (after_cr_ && c == '\n') {  // the \n of a \r\n
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      line(pending_);
      pending_.clear();
    } else {
      pending_ += c;
    }
  }
}

void SseParser::finish() {
  if (!pending_.empty()) line(pending_);
  pending_.clear();
  dispatch();
}

void SseParser::line(std::string_view text) {
  if (text.empty()) {
    dispatch();
    return;
  }
  if (text[0] == ':') return;
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "data" || field == "error") {
    if (has_data_) event_.data += '\n';
    event_.data += value;
    has_data_ = true;
    if (field == "error") event_.type = "error";
  } else if (field == "event") {
    event_.type = value;
  }
}

void SseParser::dispatch() {
  if (has_data_) on_event_(event_);
  event_ = SseEvent();
  has_data_ = false;
}

}  // namespace ridge::loadgen
