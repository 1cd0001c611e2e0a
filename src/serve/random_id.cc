#include "serve/random_id.h"

#include <random>

#include <fmt/format.h>

namespace ridge {

std::string random_id(std::string_view prefix, int hex_digits) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out(prefix);
  while (int(out.size() - prefix.size()) < hex_digits) out += fmt::format("{:016x}", rng());
  out.resize(prefix.size() + size_t(hex_digits));
  return out;
}

}  // namespace ridge
