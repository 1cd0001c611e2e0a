#pragma once
// The individual splitting passes pre-tokenizers are built from. Each pass refines a list of
// chunks (lengths in codepoints) into smaller chunks; a pass never looks across a chunk border,
// just as a regex applied to each earlier match would not.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ridge::pretok {

using Chunks = std::vector<size_t>;  // consecutive chunk lengths, in codepoints

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
Chunks split_gpt2(const std::vector<uint32_t>& cpts, const Chunks& chunks);

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
Chunks split_llama3(const std::vector<uint32_t>& cpts, const Chunks& chunks, size_t max_digits);

// Regex-iterator style isolation: every match of a simple pattern becomes its own chunk, and so
// does each stretch between matches.
enum class Isolate {
  kEachNumber,        // \p{N}
  kNumberRuns,        // \p{N}+
  kPunctuationRuns,   // [\p{P}\$\+<=>\^~\|]+
  kAsciiDigitTriples  // [0-9][0-9][0-9]
};
Chunks isolate(const std::vector<uint32_t>& cpts, const Chunks& chunks, Isolate what);

}  // namespace ridge::pretok
