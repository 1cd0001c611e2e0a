#pragma once
// A byte-level BPE vocabulary ("gpt2" model, "gpt-2" pre-tokenizer) of any size, for synthetic
// models: two control tokens (begin / end of text), the 256 byte tokens, then tokens built by
// merges of lowercase words ("Ġ" marks a leading space), each merge joining two existing tokens.
// Both ridge and llama.cpp load it, and English text tokenizes into multi-letter pieces.
#include <cstdint>
#include <string>
#include <vector>

#include "model/gguf/gguf_writer.h"

namespace ridge::synth {

struct SynthVocab {
  std::vector<std::string> tokens;  // (n_vocab) GPT-2 byte-encoded text
  std::vector<int32_t> types;       // (n_vocab) llama_token_type: 1 normal, 3 control
  std::vector<std::string> merges;  // "left right", in rank order
  int32_t bos = 0;
  int32_t eos = 1;
};

// Exactly `n_vocab` tokens; Error when n_vocab < 258 (the controls and bytes alone).
SynthVocab make_synth_vocab(int64_t n_vocab);

// The tokenizer.ggml.* keys.
void add_vocab_metadata(gguf::GgufWriter& writer, const SynthVocab& vocab);

}  // namespace ridge::synth
