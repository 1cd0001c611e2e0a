#pragma once
// The steps a Sampler runs, one function each, so each can be tested on its own.
// Candidates are kept in token order unless sorted by logit, highest first (ties: lowest id
// first); truncation steps always keep at least one candidate.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler.h"

namespace ridge {

struct Candidate {
  int32_t token;
  float logit;
};

// Repetition, presence and frequency penalties for the tokens in the last `penalty_last_n` of
// `history`, applied in place. Error on a history token outside the vocabulary.
void apply_penalties(std::span<float> logits, std::span<const int32_t> history, const SamplingParams& params);

// Highest logit, lowest id on ties. Error when every logit is -inf or one is NaN.
int32_t argmax_token(std::span<const float> logits);

// log(sum(exp(logits))), computed stably.
double log_sum_exp(std::span<const float> logits);

// The `n` most likely tokens with their log-probabilities (logit - log_sum_exp), most likely first.
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t n, double lse);

// Every token with a finite logit; top_k > 0 keeps only the top_k best, sorted. `sorted` asks for
// sorting in any case (top-p needs it; min-p and the draw do not, and sorting a vocabulary costs).
std::vector<Candidate> collect_candidates(std::span<const float> logits, int32_t top_k, bool sorted);

// Keep the shortest prefix of sorted candidates whose softmax mass reaches `top_p`.
void keep_top_p(std::vector<Candidate>& candidates, float top_p);

// Keep tokens whose probability is at least `min_p` times the best one's.
void keep_min_p(std::vector<Candidate>& candidates, float min_p);

// Softmax of logit / temperature over the candidates, then a draw with `uniform` in [0, 1).
int32_t draw_token(std::span<const Candidate> candidates, float temperature, double uniform);

}  // namespace ridge
