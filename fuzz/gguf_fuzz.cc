// libFuzzer target for the GGUF parser and the reference dequantizers (see fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "gguf_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ridge::fuzz::exercise_gguf({data, size});
  return 0;
}
