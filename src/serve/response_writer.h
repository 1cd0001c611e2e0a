#pragma once
// How one API writes what a completion job produced: a whole response body, or the events of a
// stream, and its errors. One implementation per API (OpenAI's completions and chat in
// openai_writer.cc, Anthropic Messages in anthropic_writer.cc, the Responses API in
// responses_writer.cc); CompletionJob knows none of their shapes. A writer is made per request
// and may keep state (the content block a stream is in).
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"

namespace ridge {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // Non-streamed: every choice whole (text, reasoning, calls, finish reason) and the usage.
  virtual nlohmann::json body(const std::vector<ChoicePart>& choices, const Usage& usage) = 0;

  // Streamed, as SSE text: what opens the stream (usage holds the prompt's tokens), each part a
  // choice adds, the end (the final usage), and an error that ends the stream early.
  virtual std::string stream_open(const Usage& usage) = 0;
  virtual std::string stream_part(const ChoicePart& part) = 0;
  virtual std::string stream_close(const Usage& usage) = 0;
  virtual std::string stream_error(const ApiError& error) = 0;
};

// The writer of the request's API (request.api), with the response's id and model.
std::unique_ptr<ResponseWriter> make_response_writer(const OpenaiRequest& request, const std::string& model);

// An error as the body of a reply of `api` (OpenAI's {"error": {...}}, Anthropic's {"type": "error", ...}).
nlohmann::json error_body(Api api, const ApiError& error);

// Per-API writers (one file each).
std::unique_ptr<ResponseWriter> make_openai_writer(const OpenaiRequest& request, const std::string& model);
std::unique_ptr<ResponseWriter> make_anthropic_writer(const OpenaiRequest& request, const std::string& model);
std::unique_ptr<ResponseWriter> make_responses_writer(const OpenaiRequest& request, const std::string& model);
nlohmann::json anthropic_error_json(const ApiError& error);

}  // namespace ridge
