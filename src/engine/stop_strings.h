#pragma once
// Stop strings over streamed text. Text is released as soon as it cannot be the start of a stop
// string; a tail that could be is held back until the next piece decides it. On a match, the text
// before the stop string is released and the stop string itself never is (as OpenAI does).
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);  // empty strings are ignored

  struct Result {
    std::string text;  // safe to emit now
    bool stopped;      // a stop string was found: generation ends, later pushes release nothing
  };
  Result push(std::string_view text);

  // The held-back tail, when generation ends for another reason (EOS, max tokens).
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }  // the stop string found, once stopped

 private:
  // Length of the longest suffix of pending_ that is a proper prefix of some stop string.
  size_t held_back_length() const;

  std::vector<std::string> stops_;
  std::string pending_;  // text not yet released
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace ridge
