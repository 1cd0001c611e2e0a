#include "engine/generator.h"

#include <chrono>

#include "core/error.h"
#include "engine/stop_strings.h"

namespace ridge {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Generator::Generator(ModelForward& forward, const Tokenizer& tokenizer, int64_t n_ctx)
    : forward_(forward), tokenizer_(tokenizer), cache_(forward.make_cache(n_ctx)) {}

GenerationResult Generator::generate(const GenerationRequest& request, const TextCallback& on_text) {
  const auto n_prompt = int64_t(request.prompt.size());
  if (n_prompt == 0) fail("the prompt is empty");
  if (n_prompt >= cache_.capacity())
    fail("the prompt has {} tokens, which leaves no room in the context of {} tokens", n_prompt, cache_.capacity());
  if (request.max_tokens < 0) fail("max_tokens must not be negative, got {}", request.max_tokens);

  GenerationResult result;
  result.prompt_tokens = n_prompt;
  Sampler sampler(request.sampling);
  StopStringMatcher stops(request.stop);
  StreamingDecoder decoder(tokenizer_);
  std::vector<int32_t> history = request.prompt;
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    if (on_text) on_text(text);
  };

  cache_.clear();
  auto start = std::chrono::steady_clock::now();
  forward_.forward(request.prompt, cache_, /*all_logits=*/false, logits_, /*prompt=*/true);
  bool end_of_generation = false, stop_string_hit = false;
  for (int32_t step = 0; step < request.max_tokens; ++step) {
    if (step > 0) forward_.forward(std::span(&history.back(), 1), cache_, /*all_logits=*/false, logits_);
    SampleResult sample = sampler.sample(logits_, history);
    if (step == 0) {
      result.prefill_seconds = seconds_since(start);
      start = std::chrono::steady_clock::now();
    }
    if (!request.ignore_eos && tokenizer_.is_end_of_generation(sample.token)) {
      end_of_generation = true;
      break;
    }
    history.push_back(sample.token);
    result.tokens.push_back(sample.token);
    result.samples.push_back(std::move(sample));
    auto [text, hit] = stops.push(decoder.push(history.back()));
    emit(text);
    if (hit) {
      stop_string_hit = true;
      break;
    }
    if (cache_.size() + 1 > cache_.capacity()) break;  // context full: the next token has no slot
  }
  if (!stop_string_hit) {  // release what the decoder and the stop matcher still hold
    auto [text, hit] = stops.push(decoder.flush());
    emit(text);
    stop_string_hit = hit;
    if (!hit) emit(stops.flush());
  }
  result.finish_reason = end_of_generation || stop_string_hit ? FinishReason::Stop : FinishReason::Length;
  if (!result.tokens.empty()) result.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace ridge
