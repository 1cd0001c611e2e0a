#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ridge {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kText};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "info";
}

// The whole line in one write() (stderr is unbuffered; a short write is continued, never mixed).
void write_line(std::string line) {
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= size_t(n);
  }
}

std::string_view without_newline(std::string_view message) {
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  return message;
}

// time, level and message first (ordered_json keeps insertion order), then the fields.
std::string line_of(std::string_view level, std::string_view message, const nlohmann::json& fields) {
  nlohmann::ordered_json line;
  line["time"] = iso8601_now();
  line["level"] = level;
  line["message"] = message;
  if (fields.is_object())
    for (const auto& [key, value] : fields.items()) line[key] = nlohmann::ordered_json(value);
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

void set_log_format(LogFormat format) { g_format.store(format, std::memory_order_relaxed); }
LogFormat log_format() { return g_format.load(std::memory_order_relaxed); }

LogFormat log_format_from_name(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  fail("unknown log format '{}' (text or json)", name);
}

std::string iso8601_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", text, int(ms));
}

void log_line(LogLevel level, std::string_view message) { log_line(level, message, nlohmann::json::object()); }

void log_line(LogLevel level, std::string_view message, const nlohmann::json& fields) {
  message = without_newline(message);
  if (log_format() == LogFormat::kText) return write_line(std::string(message));
  write_line(line_of(level_name(level), message, fields));
}

}  // namespace ridge
