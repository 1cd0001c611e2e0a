#pragma once
// The process's log on stderr: one line per call, written in one write() so lines from many threads
// never interleave. Text (the default) prints the message as it is; JSON (`ridge serve --log-format
// json`) prints one object a line for a log collector:
//   {"time":"2025-01-02T03:04:05.678Z","level":"info","message":"...", <fields>...}
// The format is the one piece of process-wide state here: set once at start-up, before threads log.
#include <fmt/format.h>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace ridge {

enum class LogFormat { kText, kJson };
enum class LogLevel { kInfo, kWarning, kError };

void set_log_format(LogFormat format);
LogFormat log_format();
// "text" or "json"; Error otherwise.
LogFormat log_format_from_name(std::string_view name);

// One line (a trailing newline in `message` is dropped; inner newlines stay inside the JSON string).
// `fields` (a JSON object) go into the JSON line beside time, level and message; text prints only
// the message.
void log_line(LogLevel level, std::string_view message);
void log_line(LogLevel level, std::string_view message, const nlohmann::json& fields);

// The current UTC time as ISO 8601 with milliseconds: "2025-01-02T03:04:05.678Z".
std::string iso8601_now();

template <typename... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::kWarning, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::kError, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ridge
