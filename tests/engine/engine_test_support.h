#pragma once
// What the engine tests share: a request's output, random prompts, and a request run alone (the
// single-sequence generator) or through an engine with others.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/generator.h"

namespace ridge::testing_support {

struct Output {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::string text;
  FinishReason finish = FinishReason::None;
  int64_t cached = 0;
  bool operator==(const Output& o) const { return tokens == o.tokens && logprobs == o.logprobs && text == o.text; }
};
inline void PrintTo(const Output& o, std::ostream* os) { *os << ::testing::PrintToString(o.tokens); }

// `length` ids in 5 .. 504.
inline std::vector<int32_t> random_prompt(uint32_t seed, int length) {
  std::mt19937 rng(seed);
  std::vector<int32_t> p(static_cast<size_t>(length));
  for (auto& t : p) t = int32_t(rng() % 500) + 5;
  return p;
}

inline RequestOptions greedy_request(std::vector<int32_t> tokens, int max_tokens) {
  RequestOptions o;
  o.prompt = std::move(tokens);
  o.max_tokens = max_tokens;
  o.ignore_eos = true;
  o.logprobs = true;
  return o;
}

// The same request through the single-sequence path.
inline Output run_alone(const Model& model, const Tokenizer& tokenizer, const RequestOptions& o, int64_t n_ctx) {
  ModelForward forward(model, 2);
  Generator generator(forward, tokenizer, n_ctx);
  GenerationRequest r;
  r.prompt = o.prompt;
  r.max_tokens = o.max_tokens;
  r.ignore_eos = o.ignore_eos;
  r.stop = o.stop;
  r.sampling = o.sampling;
  const GenerationResult g = generator.generate(r);
  Output out;
  out.tokens = g.tokens;
  for (const auto& s : g.samples) out.logprobs.push_back(s.logprob);
  out.text = g.text;
  return out;
}

// Submits every request, steps the engine until idle, and collects the outputs.
inline std::vector<Output> run_through(Engine& engine, const std::vector<RequestOptions>& requests) {
  std::vector<Output> outputs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    engine.submit(requests[i], [&outputs, i](const TokenEvent& e) {
      Output& out = outputs[i];
      if (e.has_token) {
        out.tokens.push_back(e.sample.token);
        out.logprobs.push_back(e.sample.logprob);
      }
      out.text += e.text;
      if (e.finish != FinishReason::None) {
        out.finish = e.finish;
        out.cached = e.cached_prompt_tokens;
      }
    });
  }
  engine.run_until_idle();
  return outputs;
}

}  // namespace ridge::testing_support
