#pragma once
// Splits a text/event-stream into events as bytes arrive, in pieces cut anywhere: lines end in
// \n, \r\n or \r, a blank line ends an event, several data lines join with \n, comments (":")
// are dropped. llama.cpp's server sends a failure mid-stream as an "error:" line; it arrives as an
// event of type "error".
#include <functional>
#include <string>
#include <string_view>

namespace ridge::loadgen {

struct SseEvent {
  std::string type = "message";
  std::string data;
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

  void feed(std::string_view bytes);
  void finish();  // the stream ended: a last event without its blank line still counts

 private:
  void line(std::string_view text);
  void dispatch();

  Handler on_event_;
  std::string pending_;  // an unfinished line
  bool after_cr_ = false;
  SseEvent event_;
  bool has_data_ = false;
};

}  // namespace ridge::loadgen
