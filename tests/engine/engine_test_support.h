#pragma once
// What the engine tests share: a request's output, random prompts, and a request run alone (the
// single-sequence generator) or through an engine with others.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>
#include <memory>

#include "engine/engine.h"
#include "engine/generator.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"

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

// A small random Llama, written to a temporary file that goes with it (the default stddev makes
// peaked distributions, so greedy choices are not near-ties).
struct TinyModel {
  std::string path;
  Model model;
  Tokenizer tokenizer;
  ~TinyModel() { std::filesystem::remove(path); }
};
inline std::unique_ptr<TinyModel> make_tiny_model(const std::string& tag, int64_t n_layer, float stddev = 0.15f) {
  const std::string path = (std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(getpid()) + ".gguf")).string();
  synth::SynthOptions o;
  o.spec.arch = "llama";
  o.spec.name = "tiny";
  o.spec.n_vocab = 512;
  o.spec.n_embd = 64;
  o.spec.n_layer = n_layer;
  o.spec.n_head = 4;
  o.spec.n_head_kv = 2;
  o.spec.head_dim = 16;
  o.spec.rope_dim = 16;
  o.spec.n_ff = 160;
  o.spec.n_ctx_train = 256;
  o.type = DType::Q8_0;
  o.stddev = stddev;
  synth::write_synth_model(o, path);
  Model model = load_model(path);
  Tokenizer tokenizer = Tokenizer::from_gguf(gguf::GgufFile::open(path));
  return std::unique_ptr<TinyModel>(new TinyModel{path, std::move(model), std::move(tokenizer)});
}

}  // namespace ridge::testing_support
