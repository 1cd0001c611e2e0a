#pragma once
// One sequence from prompt to finish: prefill the prompt in one batched pass, then decode one
// token per step, sample, detokenize incrementally, stop on EOG / stop string / max tokens.
// (The continuous-batching engine generalises this loop to many sequences per step.)
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/finish_reason.h"
#include "engine/sampler.h"
#include "model/forward.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

struct GenerationRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int32_t max_tokens = 128;
  std::vector<std::string> stop;  // stop strings (not included in the output)
  bool ignore_eos = false;
};


struct GenerationResult {
  std::vector<int32_t> tokens;       // generated ids (the stop token excluded)
  std::vector<SampleResult> samples; // per generated token, with logprobs
  std::string text;
  FinishReason finish_reason = FinishReason::Length;
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0;  // prompt forward pass and first sample: time to first token
  double decode_seconds = 0;   // every later step
};

// Called with each piece of text as soon as it is complete UTF-8 and clear of stop strings.
using TextCallback = std::function<void(std::string_view text)>;

class Generator {
 public:
  Generator(ModelForward& forward, const Tokenizer& tokenizer, int64_t n_ctx);

  // Error when the prompt is empty or does not leave room for one token in the context.
  GenerationResult generate(const GenerationRequest& request, const TextCallback& on_text = {});

 private:
  ModelForward& forward_;
  const Tokenizer& tokenizer_;
  KvCache cache_;
  std::vector<float> logits_;  // (n_vocab)
};

}  // namespace ridge
