#include "model/synth/synth_vocab.h"

#include "core/error.h"
#include "tokenizer/byte_encoding.h"

namespace ridge::synth {
namespace {

constexpr int32_t kNormal = 1;
constexpr int32_t kControl = 3;

}  // namespace

SynthVocab make_synth_vocab(int64_t n_vocab) {
  constexpr int64_t kFixed = 2 + 256;
  if (n_vocab < kFixed) fail("a synthetic vocabulary needs at least {} tokens, not {}", kFixed, n_vocab);
  SynthVocab v;
  v.tokens.reserve(size_t(n_vocab));
  v.tokens = {"<|begin_of_text|>", "<|end_of_text|>"};
  v.types = {kControl, kControl};
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_encoding::byte_to_text(uint8_t(b)));
    v.types.push_back(kNormal);
  }
  // Words grow one letter at a time: level 2 is (space or letter) + letter, level k + 1 is each
  // level-k token + letter. Every merge joins an existing token and a byte token.
  const std::string space = byte_encoding::byte_to_text(' ');
  std::vector<std::string> level;
  level.push_back(space);
  for (char c = 'a'; c <= 'z'; ++c) level.emplace_back(1, c);
  while (int64_t(v.tokens.size()) < n_vocab) {
    std::vector<std::string> next;
    for (const std::string& left : level) {
      for (char c = 'a'; c <= 'z' && int64_t(v.tokens.size()) < n_vocab; ++c) {
        v.merges.push_back(left + " " + c);
        next.push_back(left + c);
        v.tokens.push_back(next.back());
        v.types.push_back(kNormal);
      }
    }
    level = std::move(next);
  }
  return v;
}

void add_vocab_metadata(gguf::GgufWriter& writer, const SynthVocab& vocab) {
  writer.add_string("tokenizer.ggml.model", "gpt2");
  writer.add_string("tokenizer.ggml.pre", "gpt-2");
  writer.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  writer.add_i32_array("tokenizer.ggml.token_type", vocab.types);
  writer.add_string_array("tokenizer.ggml.merges", vocab.merges);
  writer.add_u32("tokenizer.ggml.bos_token_id", uint32_t(vocab.bos));
  writer.add_u32("tokenizer.ggml.eos_token_id", uint32_t(vocab.eos));
  writer.add_bool("tokenizer.ggml.add_bos_token", false);
}

}  // namespace ridge::synth
