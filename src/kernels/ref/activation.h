#pragma once
#include <cstdint>

namespace ridge::ref {

// SwiGLU: gate[i] = silu(gate[i]) * up[i], in place over n values.
void swiglu(float* gate, const float* up, int64_t n);

}  // namespace ridge::ref
