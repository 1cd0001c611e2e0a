#pragma once
// What every packed-layout kernel for AVX-512 VNNI shares (include only from files built with
// AVX-512 flags): the activation dword broadcast and the streaming constants.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace ridge::cpu::packed_vnni {

inline constexpr int64_t kTokenChunk = 64;       // activations of a chunk stay in L2 while the tiles stream by
inline constexpr int64_t kPrefetchBytes = 2048;  // how far ahead the first pass over a tile prefetches

// Four activation bytes broadcast to every dword: one VNNI step dots them with sixteen rows.
inline __m512i broadcast_dword(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

}  // namespace ridge::cpu::packed_vnni
