#pragma once
// Q4_K/Q5_K pack eight 6-bit scales and eight 6-bit mins into 12 bytes: sub-blocks 0..3 sit in
// the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); sub-blocks 4..7 take their low 4 bits
// from bytes 8..11 and their top 2 bits from the spare top bits of bytes 0..7. Shared by the
// reference dequantizer and the CPU's integer kernels.
#include <cstdint>

namespace ridge::ref {

inline void unpack_scale_min_k4(const uint8_t* packed, int sub, uint8_t& scale, uint8_t& min) {
  if (sub < 4) {
    scale = packed[sub] & 63;
    min = packed[sub + 4] & 63;
  } else {
    scale = uint8_t((packed[sub + 4] & 0x0f) | ((packed[sub - 4] >> 6) << 4));
    min = uint8_t((packed[sub + 4] >> 4) | ((packed[sub] >> 6) << 4));
  }
}

}  // namespace ridge::ref
