#pragma once
// Choosing the next token from a step's logits. One Sampler per request: it owns the request's
// random stream, so a seed reproduces a run exactly (same logits in, same tokens out).
//
// Order of operations, on the logits of one step:
//   penalties (repetition, presence, frequency) -> log-probabilities reported to the client
//   -> greedy argmax when temperature == 0, else
//   top-k -> top-p -> min-p -> temperature -> softmax -> seeded draw.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace ridge {

struct SamplingParams {
  float temperature = 0.0f;  // 0 => greedy (argmax; ties -> lowest id)
  int32_t top_k = 0;         // 0 => off
  float top_p = 1.0f;        // nucleus: smallest set of tokens whose probability reaches top_p; 1 => off
  float min_p = 0.0f;        // drop tokens less likely than min_p times the most likely; 0 => off
  float repetition_penalty = 1.0f;  // llama.cpp / HF: positive logits divided by it, negative multiplied
  float presence_penalty = 0.0f;    // OpenAI: subtracted once from every token seen in the window
  float frequency_penalty = 0.0f;   // OpenAI: subtracted per occurrence in the window
  int32_t penalty_last_n = 64;      // window of recent tokens for penalties (-1 = all, 0 = none)
  uint64_t seed = 0;
  int32_t top_logprobs = 0;  // how many alternatives to report (0..20, as OpenAI)
};

// Error naming the field: negative temperature, top_p outside (0, 1], min_p outside [0, 1], ...
void validate(const SamplingParams& params);

struct TokenLogprob {
  int32_t token;
  float logprob;
};

struct SampleResult {
  int32_t token;
  // From the model's distribution after penalties, before temperature and truncation (as OpenAI reports).
  float logprob;
  std::vector<TokenLogprob> top;  // top_logprobs most likely tokens, most likely first (ties: lowest id)
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);  // validates

  // `logits` has one entry per vocabulary token (-inf masks a token); `history` is the prompt and
  // the tokens generated so far. Error when the logits hold a NaN or mask every token.
  SampleResult sample(std::span<const float> logits, std::span<const int32_t> history);

  const SamplingParams& params() const { return params_; }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<float> scratch_;  // (n_vocab) penalised logits, reused across steps
};

}  // namespace ridge
