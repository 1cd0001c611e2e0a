#pragma once
// What the GGUF fuzz target does with one input, shared with the unit test that replays the
// corpus in the normal build: parse, and when the file parses, format every metadata value and
// decode the first and last row of every tensor (a few thousand elements at most) so tensor bounds
// are exercised too, and check every block's scale as loading does.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/block_scales.h"
#include "model/gguf/gguf_file.h"

namespace ridge::fuzz {

// Returns true when the input parsed; a rejected input is not a failure.
inline bool exercise_gguf(std::span<const uint8_t> bytes) {
  gguf::GgufFile file;
  try {
    file = gguf::GgufFile::parse(bytes);
  } catch (const Error&) {
    return false;
  }
  // What `ridge info` reads: every value's display form and the typed accessors.
  for (const auto& [key, value] : file.metadata()) {
    (void)value.to_display_string();
    try {
      (void)value.as_double(key);
    } catch (const Error&) {
    }
  }
  std::vector<float> out;
  for (const auto& t : file.tensors()) {
    if (!ref::can_dequantize(t.type)) continue;
    const auto& info = dtype_info(t.type);
    const int64_t row_len = t.shape[0];
    const int64_t n_rows = t.n_elements / row_len;
    const int64_t row_bytes = row_len / info.block_size * info.block_bytes;
    const int64_t n = std::min(row_len, std::max<int64_t>(1, 4096 / info.block_size) * info.block_size);
    out.resize(size_t(n));
    (void)first_nonfinite_scale(t.type, t.data, t.n_elements / info.block_size);  // what loading checks
    ref::dequantize_row(t.type, t.data, out.data(), n);
    ref::dequantize_row(t.type, t.data + (n_rows - 1) * row_bytes + row_bytes - n / info.block_size * info.block_bytes,
                        out.data(), n);
  }
  return true;
}

}  // namespace ridge::fuzz
