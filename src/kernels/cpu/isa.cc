#include "kernels/cpu/isa.h"

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::AvxVnni: return "avxvnni";
    case Isa::Avx512Vnni: return "avx512vnni";
  }
  return "?";
}

bool isa_supported(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return avx2;
    case Isa::AvxVnni: return avx2 && __builtin_cpu_supports("avxvnni");
    case Isa::Avx512Vnni:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }
  return false;
#else
  return isa == Isa::Scalar;
#endif
}

Isa best_supported_isa() {
  for (Isa isa : {Isa::Avx512Vnni, Isa::AvxVnni, Isa::Avx2})
    if (isa_supported(isa)) return isa;
  return Isa::Scalar;
}

Isa active_isa() {
  static const Isa chosen = [] {
    const char* env = std::getenv("RIDGE_ISA");
    if (!env || !*env) return best_supported_isa();
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni})
      if (isa_name(isa) == env) {
        if (!isa_supported(isa)) fail("RIDGE_ISA={} is not supported by this CPU", env);
        return isa;
      }
    fail("RIDGE_ISA={} is unknown (scalar, avx2, avxvnni, avx512vnni)", env);
  }();
  return chosen;
}

bool bf16_dot_usable() {
  static const bool usable = isa_supported(Isa::Avx512Vnni) && __builtin_cpu_supports("avx512bf16");
  return usable;
}

}  // namespace ridge::cpu
