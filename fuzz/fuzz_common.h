#pragma once
// Helpers shared by the fuzz targets (see README.md).
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace ridge::fuzz {

// A broken invariant: stop here, so libFuzzer reports the input as a crash and saves it.
inline void check(bool ok) {
  if (!ok) __builtin_trap();
}

// An input the code rejected with one of the project's own errors, as it should. With
// RIDGE_FUZZ_VERBOSE set (replaying a seed by hand: RIDGE_FUZZ_VERBOSE=1 build-fuzz/fuzz/T FILE),
// the message is printed, so one can tell a seed that parses from one that is rejected.
inline void rejected(const std::exception& e) {
  static const bool verbose = std::getenv("RIDGE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
}

// With RIDGE_FUZZ_VERBOSE set, says that an input was accepted (and what it was read as).
inline void accepted(const char* what) {
  static const bool verbose = std::getenv("RIDGE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "accepted: %s\n", what);
}

}  // namespace ridge::fuzz
