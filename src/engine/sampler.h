#pragma once
// Choosing the next token from a step's logits. One Sampler per request: it owns the request's
// random stream, so a seed reproduces a run exactly (same logits in, same tokens out).
//
// Order of operations, on the logits of one step:
//   penalties (repetition, presence, frequency) -> logit_bias -> log-probabilities reported to the client
//   -> greedy argmax when temperature == 0, else
//   top-k -> top-p -> min-p -> temperature -> softmax -> seeded draw.
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace ridge {

struct Candidate;  // sampling_steps.h

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
  std::vector<std::pair<int32_t, float>> logit_bias;  // OpenAI's: added to a token's logit (-100..100)
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
  // The token sample() draws (the same draw from the same generator), without its log-probabilities:
  // a draft model's proposal, where nobody reads them.
  int32_t draw(std::span<const float> logits, std::span<const int32_t> history);

  // Speculative decoding, one draft token at a time: the token this step yields given that a
  // proposer guessed `draft` (a one-hot draft, or with `draft_probability` >= 0 the probability
  // the draft model gave it and `draft_distribution` its whole distribution over the vocabulary).
  // Greedy: the argmax, which accepts the draft when they agree. Otherwise modified rejection
  // sampling (Leviathan et al., Chen et al.): accept with min(1, p(draft) / q(draft)), else draw
  // from norm(max(p - q, 0)), where p is this sampler's own distribution (penalties, top-k/p, min-p,
  // temperature), so the tokens are distributed exactly as sample() would draw them.
  struct Verified {
    SampleResult result;
    bool accepted = false;  // result.token == draft, kept
  };
  Verified verify(std::span<const float> logits, std::span<const int32_t> history, int32_t draft,
                  std::span<const float> draft_distribution = {});

  // A draft model's turn: a token drawn as sample() draws it, and in `distribution` (n_vocab) the
  // probabilities it was drawn from (0 outside the candidates; one-hot on the argmax when greedy),
  // the q that verify() takes.
  SampleResult sample_with_distribution(std::span<const float> logits, std::span<const int32_t> history,
                                        std::vector<float>& distribution);

  const SamplingParams& params() const { return params_; }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<float> scratch_;  // (n_vocab) penalised logits, reused across steps

  void penalise(std::span<const float> logits, std::span<const int32_t> history);
  std::vector<Candidate> candidates() const;  // scratch_ after top-k, top-p and min-p
  void fill_logprobs(SampleResult& result) const;
};

}  // namespace ridge
