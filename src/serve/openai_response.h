#pragma once
// Response bodies and stream chunks in OpenAI's shapes, for both endpoints:
//   completions: object "text_completion", choices[].text, logprobs {tokens, token_logprobs, top_logprobs, text_offset}
//   chat:        object "chat.completion" / "chat.completion.chunk", choices[].message / delta,
//                logprobs {content: [{token, logprob, bytes, top_logprobs}]}
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/tool_call_stream.h"

#include "serve/openai_request.h"

namespace ridge {

// What every body of one request shares.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::Completions;
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};
ResponseHeader make_response_header(Endpoint endpoint, const std::string& model);

struct LogprobEntry {
  std::string piece;  // the token's bytes (possibly part of a UTF-8 character)
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // alternatives, most likely first
  size_t text_offset = 0;  // completions: where the token's text starts in the choice's text
  // Prompt tokens: the ids (vLLM's prompt_logprobs are keyed by them); the first has no log-probability.
  int32_t token = -1;
  std::vector<int32_t> top_tokens;
  bool none = false;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // of the prompt, served from the prefix cache
  int64_t draft_tokens = 0;     // speculative decoding: drafts verified (extension field, when any)
  int64_t accepted_tokens = 0;  // ... and kept
  std::optional<int64_t> reasoning_tokens;  // of the completion, thinking (when the output was split)
};

// One choice: a whole one (non-streamed), or one chunk's part of it (streamed).
struct ChoicePart {
  int index = 0;
  std::string text;             // content (the answer, when reasoning is split off)
  std::string reasoning;        // chat: the thinking (reasoning_content)
  std::string stop_string;      // the stop string that ended the choice, if one did
  bool with_logprobs = false;  // the client asked for logprobs (then "logprobs" is an object, else null)
  std::vector<LogprobEntry> logprobs;
  std::string finish_reason;   // empty: null (not finished yet)
  bool role = false;           // chat chunk: the opening delta {"role": "assistant", "content": ""}
  std::vector<chat::FinishedCall> tool_calls;  // chat response: message.tool_calls (content null when empty)
  std::vector<chat::CallDelta> call_deltas;    // chat chunk: delta.tool_calls
  bool with_prompt_logprobs = false;           // vLLM's prompt_logprobs: one entry per prompt token
  std::vector<LogprobEntry> prompt_logprobs;
};

nlohmann::json usage_json(const Usage& usage);
nlohmann::json response_json(const ResponseHeader& header, const std::vector<ChoicePart>& choices, const Usage& usage);
// usage_null: the client asked for usage in the stream, so chunks carry "usage": null until the last.
nlohmann::json chunk_json(const ResponseHeader& header, const ChoicePart& choice, bool usage_null);
nlohmann::json usage_chunk_json(const ResponseHeader& header, const Usage& usage);  // "choices": []

// Log-probabilities of -inf (masked tokens) as vLLM reports them; JSON has no infinity.
inline constexpr float kLogprobFloor = -9999.0f;

}  // namespace ridge
