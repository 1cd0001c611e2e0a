#pragma once
// Instruction sets the CPU kernels are compiled for; one binary picks the best at run time.
#include <string_view>

namespace ridge::cpu {

enum class Isa {
  Scalar,      // portable C++: the fallback and the reference of the fast paths' structure
  Avx2,        // AVX2 + FMA + F16C
  AvxVnni,     // AVX2 + AVX-VNNI (256-bit vpdpbusd)
  Avx512Vnni,  // AVX-512 F/BW/VL + VNNI
};

std::string_view isa_name(Isa isa);
Isa best_supported_isa();          // what this CPU runs best
bool isa_supported(Isa isa);
// The ISA the kernels use: the best supported, or $RIDGE_ISA (scalar, avx2, avxvnni, avx512vnni) when set
// and supported. Chosen once per process.
Isa active_isa();

}  // namespace ridge::cpu
