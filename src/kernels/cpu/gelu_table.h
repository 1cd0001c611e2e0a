#pragma once
// GeGLU as llama.cpp's CPU backend computes it: GELU (tanh form) looked up from a table over every
// f16 value, the input rounded to f16 and the result stored as f16, exact outside (-10, 10). A
// table read instead of a tanh per element, and the rounding of the reference engine.
#include <cstdint>

namespace ridge::cpu {

// gate[i] = gelu(gate[i]) * up[i] over n values.
void geglu_table(float* gate, const float* up, int64_t n);

}  // namespace ridge::cpu
