#pragma once
// One completion request from prompt to response: tokenize (or apply the chat template), check the
// context, submit the n choices to the backend, then turn their events into either one response
// body or a sequence of SSE chunks, recording latency metrics from the events' timestamps.
//
// A job is used by one HTTP handler thread; only its RequestStream is shared (with the backend's
// callbacks and with the shutdown path, which may cancel it).
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "serve/completion_backend.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"
#include "serve/request_stream.h"
#include "serve/response_writer.h"
#include "serve/serve_metrics.h"

namespace ridge {

// The prompt of a request as the model reads it: the text as given, or the conversation through
// the model's chat template (with its tools), tokenized. Throws ApiError (400) naming the field.
struct RenderedPrompt {
  std::string text;  // empty for a prompt of token ids
  std::vector<int32_t> tokens;
};
// `index`: which prompt of a completions batch.
RenderedPrompt render_prompt(const CompletionBackend& backend, const OpenaiRequest& request, size_t index = 0);

class CompletionJob {
 public:
  using Clock = std::chrono::steady_clock;

  // Builds the prompt tokens and checks them; throws ApiError (400: empty prompt, token id out of
  // range, context_length_exceeded).
  CompletionJob(CompletionBackend& backend, ServeMetrics& metrics, const OpenaiRequest& request, Clock::time_point arrival);
  ~CompletionJob();  // cancels choices still running
  CompletionJob(const CompletionJob&) = delete;
  CompletionJob& operator=(const CompletionJob&) = delete;

  // Submits the n choices (seeds seed + i). Throws ApiError: 429 queue full, 400 refused.
  void submit();
  const std::shared_ptr<RequestStream>& stream() const { return stream_; }
  int64_t prompt_tokens() const;  // of every prompt

  // Non-streamed: waits for every choice and returns the body, asking `client_gone` every `poll`.
  // Throws ApiError 504 at `deadline` and 499 when the client has gone (the choices are cancelled),
  // 503 when the backend aborted them (shutdown).
  nlohmann::json wait_response(Clock::time_point deadline, Clock::duration poll, const std::function<bool()>& client_gone);

  // Streamed: the SSE text ready by `until` (empty when nothing happened). At `deadline` the choices
  // are cancelled and the stream ends with an error event. done() once "data: [DONE]" was returned.
  std::string next_sse(Clock::time_point until, Clock::time_point deadline);
  bool done() const { return done_; }

  // The client went away (or the request timed out): cancel what runs, count it as aborted.
  void cancel();
  // Something that must outlive the job's use of the backend (the model's registry lease).
  void hold(std::shared_ptr<void> keep) { hold_ = std::move(keep); }

 private:
  std::shared_ptr<void> hold_;  // first: released after everything else (the destructor cancels through backend_)
  struct Choice {
    size_t prompt = 0;       // its prompt in a completions batch
    int64_t max_tokens = 0;  // what the context leaves after its prompt, at most what was asked
    std::vector<SampleResult> prompt_entries;  // prompt log-probabilities, of tokens 1 .. as they arrive
    std::string text;
    std::vector<LogprobEntry> logprobs;
    FinishReason finish = FinishReason::None;
    bool seen = false;  // any event arrived
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t draft_tokens = 0, accepted_tokens = 0;  // speculative decoding
    std::optional<Clock::time_point> first_token, last_token;
    double max_gap_s = 0;  // the longest wait between two tokens
    std::unique_ptr<chat::ReasoningSplitter> reasoning;  // a thinking model's output: reasoning, then the answer
    int64_t reasoning_tokens = 0;
    std::string stop_string;
    std::unique_ptr<chat::ToolCallStream> tools;  // the answer read as content and tool calls
  };

  // Applies one event to its choice and the metrics; returns the part of the choice it adds
  // (for a stream chunk), or nullopt when it adds nothing visible.
  std::optional<ChoicePart> apply(const RequestStream::Event& e);
  void finish_choice(Choice& c, FinishReason reason, Clock::time_point at);
  // The text of an event as the client sees it: content, and the tool calls it adds.
  void read_text(Choice& c, const TokenEvent& ev, ChoicePart& part);
  grammar::GrammarSpec tool_grammar() const;
  bool all_finished() const;
  bool backend_aborted() const;
  Usage usage() const;
  std::string end_stream_with_error(const ApiError& error);

  CompletionBackend& backend_;
  ServeMetrics& metrics_;
  OpenaiRequest request_;
  Clock::time_point arrival_;
  // Whether the response carries prompt log-probabilities, and the prompts: tokens, echoed text,
  // and how many leading tokens each shares with the first (whose log-probabilities it reuses).
  bool wants_prompt_logprobs() const { return (request_.echo && request_.logprobs) || request_.prompt_logprobs; }
  std::vector<SampleResult> prompt_logprobs_of(size_t prompt) const;
  ChoicePart whole_choice(size_t i) const;
  std::vector<std::vector<int32_t>> prompts_;
  std::vector<std::string> echo_texts_;
  std::vector<size_t> shared_with_first_;
  std::unique_ptr<ResponseWriter> writer_;
  // A thinking model's output is split (its prompt did not close the thinking); whether the
  // prompt opened it.
  bool split_reasoning_ = false;
  bool reasoning_open_ = false;
  std::optional<ThinkingGate> thinking_;  // the tags as tokens, when the output is split
  std::shared_ptr<RequestStream> stream_;
  std::vector<Choice> choices_;
  RequestId first_id_ = -1;  // the backend's id of choice 0
  std::vector<RequestId> group_first_;  // per prompt: the backend's id of its first choice
  bool cancelled_ = false;  // by this job: later events of its choices are dropped
  bool opened_ = false;     // streamed: the opening chunks went out
  bool done_ = false;       // streamed: [DONE] went out
};

}  // namespace ridge
