#include "bench/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ridge::bench {

ProgressBar::ProgressBar(std::string label, int64_t total, Unit unit)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      unit_(unit),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {
  draw(true);
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(int64_t n, std::string_view note) {
  done_ = std::min(total_, done_ + n);
  if (!note.empty()) note_ = note;
  draw(false);
}

void ProgressBar::set_note(std::string_view note) {
  note_ = note;
  draw(false);
}

void ProgressBar::finish() {
  if (finished_) return;
  draw(tty_ || last_tenth_ < 10);  // a log file already has its 100% line
  if (tty_) std::fputc('\n', stderr);
  finished_ = true;
}

std::string ProgressBar::amount(int64_t n) const {
  if (unit_ == Unit::Steps) return std::to_string(n);
  if (total_ >= 1'000'000'000) return fmt::format("{:.2f} GB", double(n) / 1e9);
  return fmt::format("{:.1f} MB", double(n) / 1e6);
}

void ProgressBar::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double fraction = double(done_) / double(total_);
  const int tenth = int(fraction * 10);
  if (tty_) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  } else {
    if (!force && tenth == last_tenth_) return;  // a log file gets about ten lines
  }
  last_draw_ = now;
  last_tenth_ = tenth;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 28;
  const int filled = int(fraction * kWidth);
  const std::string bar = std::string(size_t(filled), '=') + (filled < kWidth ? ">" : "") +
                          std::string(size_t(std::max(0, kWidth - filled - 1)), ' ');
  const std::string line = fmt::format("{} [{}] {:3.0f}% {}/{} {:.1f}s {}", label_, bar, fraction * 100,
                                       amount(done_), amount(total_), seconds, note_);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace ridge::bench
