// libFuzzer target for tokenizer.json (see fuzz/README.md): the input, read as a tokenizer.json text
// (hf::parse_pipeline). When it reads, fixed texts are encoded with and without special tokens:
// every id must lie in the vocabulary, and decode and each token's piece must not fail.
// ridge::Error is the expected failure; anything else escaping aborts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "fuzz_common.h"
#include "tokenizer/hf/hf_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ridge::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ridge::hf::Pipeline p = ridge::hf::parse_pipeline(text, "fuzz");
    ridge::fuzz::accepted("tokenizer.json");
    for (const char* input : {"Hello, world! 123", "<s> a\xC3\xA9 \xF0\x9F\x98\x80\n\n  x", ""}) {
      for (bool special : {false, true}) {
        const std::vector<int32_t> ids = p.encode(input, special, special);
        for (int32_t id : ids) check(id >= 0 && id < p.n_tokens());
        p.decode(ids);
        for (int32_t id : ids) p.piece(id);
      }
    }
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  return 0;
}
