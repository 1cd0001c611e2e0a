#pragma once
// The body of POST /v1/completions and /v1/chat/completions, parsed and checked field by field.
// Every mistake is an ApiError (400) naming the field, so a client learns what to fix; fields this
// server does not know are ignored, fields it knows but cannot honour (echo, logit_bias, functions,
// best_of > 1) are refused rather than silently dropped.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reasoning.h"
#include "chat/tools.h"
#include "engine/sampler.h"
#include "grammar/grammar_spec.h"
#include "tokenizer/chat_template.h"

namespace ridge {

enum class Endpoint { Completions, ChatCompletions };
// The API a request came through: it decides the shapes of the response and of errors
// (serve/response_writer.h); every API is read into this one request.
enum class Api { kOpenai, kAnthropic, kResponses };
struct ResponsesContext;  // serve/responses_request.h

struct OpenaiRequest {
  Endpoint endpoint = Endpoint::Completions;
  Api api = Api::kOpenai;
  std::string model;  // empty when the client sent none

  // Completions: one prompt or a batch of them (n choices each, in order); each text, or token ids
  // when the client sent them.
  struct Prompt {
    std::string text;
    std::vector<int32_t> tokens;
    bool is_tokens = false;
  };
  std::vector<Prompt> prompts;
  bool echo = false;                      // completions: the prompt precedes the completion (and its logprobs)
  std::optional<int32_t> prompt_logprobs; // vLLM's: every prompt token's log-probability and this many alternatives
  // Chat: the conversation ("developer" is read as "system").
  std::vector<ChatMessage> messages;

  SamplingParams sampling;         // seed and top_logprobs included
  std::optional<uint64_t> seed;    // absent: each choice draws its own
  std::optional<int64_t> max_tokens;  // absent: the endpoint's default
  std::vector<std::string> stop;
  int32_t n = 1;
  bool logprobs = false;           // report logprobs (sampling.top_logprobs alternatives per token)
  bool stream = false;
  bool include_usage = false;      // stream_options.include_usage
  bool ignore_eos = false;
  int32_t priority = 0;            // vLLM's: smaller first, with --priorities
  std::string user;
  bool jump_forward = true;        // ridge extension: append grammar-forced text without decoding it
  grammar::GrammarSpec structured;  // response_format, guided_*, grammar, json_schema (serve/structured_output)
  // Chat: tools offered (serve/tool_request); tool_choice is "auto" when tools are given, else "none".
  std::vector<chat::Tool> tools;
  chat::ToolChoice tool_choice{chat::ToolChoice::Mode::kNone, {}};
  bool parallel_tool_calls = true;
  // Thinking models: chat_template_kwargs.enable_thinking (absent: the template's default), the
  // thinking budget in tokens (absent: the server's), and reasoning_format (absent: the server's).
  std::optional<bool> enable_thinking;
  std::optional<int32_t> reasoning_budget;
  std::optional<chat::ReasoningFormat> reasoning_format;
  // The Responses API: the response's id, what it echoes, where it is stored.
  std::shared_ptr<const ResponsesContext> responses;

  // The conversation speaks of tools: tools are offered, or its history holds calls or results.
  bool uses_tools() const;
};

inline constexpr int32_t kMaxChoices = 128;     // n, as OpenAI allows
inline constexpr int32_t kMaxTopLogprobs = 20;  // top_logprobs (and completions' logprobs)
inline constexpr size_t kMaxPrompts = 1024;      // prompts in one completions request

// Throws ApiError (400) for malformed JSON, invalid UTF-8, wrong types or values out of range.
OpenaiRequest parse_openai_request(Endpoint endpoint, std::string_view body);

}  // namespace ridge
