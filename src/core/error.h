#pragma once
// One exception type for every user-facing failure (bad file, bad argument, bad request).
// Messages name the problem and where it was found; callers turn it into an exit code or an HTTP error.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ridge {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ridge
