#pragma once
// A progress bar on stderr for the long-running tools (probe, synth, bench). On a terminal it
// redraws one line at most ten times a second; otherwise it prints a line per tenth of the work.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace ridge::bench {

class ProgressBar {
 public:
  enum class Unit { Steps, Bytes };

  ProgressBar(std::string label, int64_t total, Unit unit = Unit::Steps);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Move forward by `n` units; `note` says what is happening now (kept until the next note).
  void advance(int64_t n, std::string_view note = {});
  void set_note(std::string_view note);
  // Draw the final state and end the line (also done by the destructor).
  void finish();

 private:
  void draw(bool force);
  std::string amount(int64_t n) const;

  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  Unit unit_;
  std::string note_;
  bool tty_;
  bool finished_ = false;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace ridge::bench
