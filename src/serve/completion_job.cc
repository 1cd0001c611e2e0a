#include "serve/completion_job.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "serve/api_error.h"
#include "serve/sse.h"

namespace ridge {
namespace {

// A choice that stopped after writing tool calls finished with "tool_calls", as OpenAI reports it.
template <typename Choice>
std::string finish_name(const Choice& c) {
  if (c.finish == FinishReason::Stop && c.tools && !c.tools->calls().empty()) return "tool_calls";
  return std::string(finish_reason_name(c.finish));
}

double seconds(CompletionJob::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const char* prompt_param(Endpoint endpoint) { return endpoint == Endpoint::Completions ? "prompt" : "messages"; }

ApiError submit_error(const SubmitError& e, Endpoint endpoint) {
  switch (e.kind) {
    case SubmitError::Kind::QueueFull:
      return ApiError(429, fmt::format("the server is busy: {}", e.what()), {}, "queue_full", error_type_for_status(429));
    case SubmitError::Kind::SloUnmeetable: {
      ApiError error(503, fmt::format("the server is overloaded: {}", e.what()), {}, "slo_unmeetable",
                     error_type_for_status(503));
      error.retry_after_s = std::max(1, int(std::ceil(e.retry_after_s)));
      return error;
    }
    case SubmitError::Kind::MemoryLimit: {
      ApiError error(503, e.what(), {}, "memory_limit", error_type_for_status(503));
      error.retry_after_s = std::max(1, int(std::ceil(e.retry_after_s)));
      return error;
    }
    case SubmitError::Kind::ContextExceeded:
      return ApiError(400, e.what(), prompt_param(endpoint), "context_length_exceeded");
    case SubmitError::Kind::BadRequest: break;
  }
  return ApiError(400, e.what());
}

}  // namespace

RenderedPrompt render_prompt(const CompletionBackend& backend, const OpenaiRequest& request, size_t index) {
  const char* param = prompt_param(request.endpoint);
  RenderedPrompt out;
  const bool completions = request.endpoint == Endpoint::Completions;
  if (completions && request.prompts.at(index).is_tokens) {
    const int32_t n_vocab = backend.n_vocab();
    for (int32_t t : request.prompts[index].tokens)
      if (t >= n_vocab) throw_bad_param(param, fmt::format("token id {} is out of range (the vocabulary has {})", t, n_vocab));
    out.tokens = request.prompts[index].tokens;
  } else {
    try {
      ChatRenderOptions render;
      render.enable_thinking = request.enable_thinking;
      if (completions) {
        out.text = request.prompts.at(index).text;
      } else if (request.uses_tools()) {
        if (!backend.tool_format())
          throw_bad_param("tools",
                          "this model's chat template has no tool-calling format (start the server with "
                          "--tool-call-parser NAME to choose one)");
        out.text = backend.apply_tool_template(request.messages, request.tools, render);
      } else {
        out.text = backend.apply_chat_template(request.messages, render);
      }
      out.tokens = backend.tokenize(out.text, /*add_special=*/true);
    } catch (const Error& e) {  // e.g. a conversation the chat format cannot express
      throw_bad_param(param, e.what());
    }
  }
  if (out.tokens.empty()) throw_bad_param(param, "the prompt is empty");
  return out;
}

CompletionJob::CompletionJob(CompletionBackend& backend, ServeMetrics& metrics, const OpenaiRequest& request,
                             Clock::time_point arrival)
    : backend_(backend), metrics_(metrics), request_(request), arrival_(arrival),
      writer_(make_response_writer(request, backend.model_id())) {
  const char* param = prompt_param(request.endpoint);
  const size_t n_prompts = request.endpoint == Endpoint::Completions ? request.prompts.size() : 1;
  if (n_prompts * size_t(request.n) > kMaxPrompts)
    throw_bad_param("n", fmt::format("{} prompts x n = {} choices; at most {} per request", n_prompts, n_prompts * size_t(request.n), kMaxPrompts));
  RenderedPrompt prompt;
  for (size_t p = 0; p < n_prompts; ++p) {
    RenderedPrompt rendered = render_prompt(backend, request, p);
    std::string echo = rendered.text;
    if (request.echo && request.prompts[p].is_tokens)
      for (int32_t t : rendered.tokens) echo += backend.token_piece(t);
    prompts_.push_back(rendered.tokens);
    echo_texts_.push_back(std::move(echo));
    // Leading tokens shared with the first prompt: a batch of continuations of one context.
    size_t shared = 0;
    while (p > 0 && shared < prompts_[0].size() && shared < prompts_[p].size() && prompts_[0][shared] == prompts_[p][shared]) ++shared;
    shared_with_first_.push_back(shared);
    if (p == 0) prompt = std::move(rendered);
  }
  stream_ = RequestStream::create(backend, int(n_prompts) * request.n);
  choices_ = std::vector<Choice>(n_prompts * size_t(request.n));
  const chat::ReasoningTags* tags = backend.reasoning_tags();
  if (tags && request.endpoint == Endpoint::ChatCompletions &&
      request.reasoning_format.value_or(chat::ReasoningFormat::kSeparate) == chat::ReasoningFormat::kSeparate) {
    const chat::PromptThinking thinking = chat::prompt_thinking(prompt.text, *tags);
    split_reasoning_ = thinking != chat::PromptThinking::kClosed;
    reasoning_open_ = thinking == chat::PromptThinking::kOpen;
  }
  for (const auto& [token, bias] : request.sampling.logit_bias)
    if (token >= backend.n_vocab())
      throw_bad_param("logit_bias", fmt::format("'logit_bias' names token {}, outside the vocabulary of {} tokens", token, backend.n_vocab()));
  if (split_reasoning_) {
    thinking_ = backend.thinking_gate();
    if (!thinking_ && request.reasoning_budget)
      throw_bad_param(request.api == Api::kAnthropic ? "thinking.budget_tokens" : "reasoning_budget",
                      "this model's thinking tags are not single tokens, so a thinking budget cannot be enforced");
  }

  // At least one token must fit after each prompt; a larger max_tokens is clamped, not refused.
  const int64_t n_ctx = backend.n_ctx();
  for (size_t i = 0; i < choices_.size(); ++i) {
    Choice& c = choices_[i];
    c.prompt = i / size_t(request.n);
    const int64_t room = n_ctx - int64_t(prompts_[c.prompt].size());
    if (room < 1)
      throw ApiError(400,
                     fmt::format("This model's maximum context length is {} tokens. However, your prompt has {} tokens, "
                                 "leaving no room for the completion. Please reduce the length of the {}.",
                                 n_ctx, prompts_[c.prompt].size(), param),
                     param, "context_length_exceeded");
    // Defaults as OpenAI's: 16 for completions, what the context leaves for chat.
    c.max_tokens = std::min(request.max_tokens.value_or(request.endpoint == Endpoint::Completions ? 16 : room), room);
  }
}

int64_t CompletionJob::prompt_tokens() const {
  int64_t n = 0;
  for (const auto& p : prompts_) n += int64_t(p.size());
  return n;
}

CompletionJob::~CompletionJob() {
  if (!all_finished()) cancel();
}

void CompletionJob::submit() {
  std::random_device entropy;
  const uint64_t base_seed = request_.seed ? *request_.seed : (uint64_t(entropy()) << 32 | entropy());
  std::shared_ptr<const grammar::CompiledGrammar> compiled;
  const grammar::GrammarSpec calls = tool_grammar();
  const grammar::GrammarSpec& spec = calls.empty() ? request_.structured : calls;
  if (!spec.empty()) {
    const auto t0 = Clock::now();
    try {
      compiled = backend_.compile_grammar(spec);
      metrics_.observe_grammar_compile(seconds(Clock::now() - t0), true);
    } catch (const grammar::GrammarError& e) {
      metrics_.observe_grammar_compile(seconds(Clock::now() - t0), false);
      choices_.clear();
      throw ApiError(400, e.what(), calls.empty() ? "response_format" : "tools");
    }
  }
  std::optional<ThinkingGate> thinking = thinking_;
  if (thinking) {
    thinking->starts_open = reasoning_open_;
    if (request_.reasoning_budget) thinking->budget = *request_.reasoning_budget;
    // Structured output and tool calls constrain the answer; a raw GBNF grammar the whole output.
    thinking->defer_grammar = !spec.empty() && spec.kind != grammar::GrammarSpec::Kind::kGbnf;
  }
  for (auto& c : choices_) {
    if (split_reasoning_) c.reasoning = std::make_unique<chat::ReasoningSplitter>(*backend_.reasoning_tags(), reasoning_open_);
    if (request_.tool_choice.mode != chat::ToolChoice::Mode::kNone && backend_.tool_format()) {
      std::vector<std::string> names;
      for (const auto& tool : request_.tools) names.push_back(tool.name);
      c.tools = std::make_unique<chat::ToolCallStream>(*backend_.tool_format(), std::move(names));
    }
  }
  group_first_.assign(prompts_.size(), -1);
  for (int i = 0; i < int(choices_.size()); ++i) {
    const size_t p = choices_[size_t(i)].prompt;
    const bool group_first = i % request_.n == 0;
    RequestOptions options;
    options.prompt = prompts_[p];
    options.sampling = request_.sampling;
    options.sampling.seed = base_seed + uint64_t(i);
    options.max_tokens = int32_t(choices_[size_t(i)].max_tokens);
    options.stop = request_.stop;
    options.ignore_eos = request_.ignore_eos;
    options.priority = request_.priority;
    options.logprobs = request_.logprobs;
    options.grammar = compiled;  // each choice walks the grammar with its own matcher
    options.jump_forward = request_.jump_forward;
    options.thinking = thinking;
    // Siblings wait for the first of their prompt to compute it, then share its blocks; the first of
    // a prompt that continues the first prompt's context waits for that one.
    options.after_prefill_of = group_first ? (shared_with_first_[p] >= 2 ? group_first_[0] : -1) : group_first_[p];
    if (group_first && wants_prompt_logprobs()) {
      // Only the first of each prompt asks (its siblings' prompt is the same); a continuation only
      // for its own tokens, the shared ones come from the first prompt.
      options.prompt_logprobs = request_.prompt_logprobs.value_or(request_.sampling.top_logprobs);
      options.prompt_logprobs_from = shared_with_first_[p] >= 2 ? int64_t(shared_with_first_[p]) : 1;
    }
    try {
      const RequestId id = backend_.submit(std::move(options), stream_->callback(i));
      stream_->set_request_id(i, id);
      if (i == 0) first_id_ = id;
      if (group_first) group_first_[p] = id;
    } catch (const SubmitError& e) {
      choices_.resize(size_t(i));  // the ones submitted are cancelled by the destructor
      throw submit_error(e, request_.endpoint);
    }
  }
}

// tool_choice "required" or a named function: the output is exactly calls, in the model's format.
grammar::GrammarSpec CompletionJob::tool_grammar() const {
  using Mode = chat::ToolChoice::Mode;
  const chat::ToolChoice& choice = request_.tool_choice;
  if (choice.mode != Mode::kRequired && choice.mode != Mode::kNamed) return {};
  if (choice.mode == Mode::kRequired) return backend_.tool_format()->calls_grammar(request_.tools, request_.parallel_tool_calls);
  for (const auto& tool : request_.tools)
    if (tool.name == choice.name) return backend_.tool_format()->calls_grammar({&tool, 1}, /*parallel=*/false);
  return {};
}

void CompletionJob::read_text(Choice& c, const TokenEvent& ev, ChoicePart& part) {
  c.text += ev.text;
  const bool final = ev.finish != FinishReason::None;
  std::string answer = ev.text;
  if (c.reasoning) {
    const bool was_closed = c.reasoning->closed();
    chat::ReasoningSplitter::Delta split = c.reasoning->push(ev.text, final);
    // A token read while thinking, or the one that closed it, is a reasoning token.
    if (ev.has_token && (c.reasoning->thinking() || c.reasoning->closed() != was_closed)) ++c.reasoning_tokens;
    part.reasoning = std::move(split.reasoning);
    answer = std::move(split.content);
  }
  if (!c.tools) {
    part.text = std::move(answer);
    return;
  }
  chat::StreamDelta delta = c.tools->push(answer, final);
  part.text = std::move(delta.content);
  part.call_deltas = std::move(delta.calls);
}

void CompletionJob::finish_choice(Choice& c, FinishReason reason, Clock::time_point at) {
  c.finish = reason;
  ServeMetrics::Finished f;
  f.reason = reason;
  f.e2e_seconds = seconds(at - arrival_);
  f.decode_seconds = c.first_token ? seconds(*c.last_token - *c.first_token) : 0.0;
  f.prompt_tokens = c.prompt_tokens;
  f.generation_tokens = c.completion_tokens;
  f.ttft_seconds = c.first_token ? seconds(*c.first_token - arrival_) : -1;
  f.max_itl_seconds = c.max_gap_s;
  metrics_.observe_finished(f);
}

std::optional<ChoicePart> CompletionJob::apply(const RequestStream::Event& e) {
  Choice& c = choices_[size_t(e.choice)];
  if (c.finish != FinishReason::None) return std::nullopt;  // cancelled here; the backend's Abort follows
  const TokenEvent& ev = e.event;
  if (!c.seen) {
    c.seen = true;
    c.prompt_tokens = ev.prompt_tokens ? ev.prompt_tokens : int64_t(prompts_[c.prompt].size());
    c.cached_tokens = ev.cached_prompt_tokens;
    metrics_.count_tokens(c.prompt_tokens, 0);
  }
  c.prompt_entries.insert(c.prompt_entries.end(), ev.prompt_logprobs.begin(), ev.prompt_logprobs.end());
  ChoicePart part;
  part.index = e.choice;
  part.with_logprobs = request_.logprobs;
  if (ev.has_token) {
    if (!c.first_token) {
      c.first_token = e.at;
      metrics_.observe_first_token(seconds(e.at - arrival_));
      metrics_.observe_queue_time(ev.queue_seconds);
    } else {
      const double gap = seconds(e.at - *c.last_token);
      metrics_.observe_inter_token(gap);
      c.max_gap_s = std::max(c.max_gap_s, gap);
    }
    c.last_token = e.at;
    c.completion_tokens = std::max(ev.completion_tokens, c.completion_tokens + 1);
    metrics_.count_tokens(0, 1);
    if (request_.logprobs) {
      LogprobEntry entry{backend_.token_piece(ev.sample.token), ev.sample.logprob, {}, c.text.size()};
      for (const auto& alt : ev.sample.top) entry.top.emplace_back(backend_.token_piece(alt.token), alt.logprob);
      part.logprobs.push_back(entry);
      c.logprobs.push_back(std::move(entry));
    }
  }
  c.draft_tokens = std::max(c.draft_tokens, ev.draft_tokens);
  c.accepted_tokens = std::max(c.accepted_tokens, ev.accepted_tokens);
  read_text(c, ev, part);
  if (!ev.stop_string.empty()) c.stop_string = part.stop_string = ev.stop_string;
  if (ev.finish != FinishReason::None) {
    finish_choice(c, ev.finish, e.at);
    // An abort the client did not ask for ends the whole stream with an error instead.
    if (ev.finish != FinishReason::Abort) part.finish_reason = finish_name(c);
  }
  if (part.text.empty() && part.reasoning.empty() && part.logprobs.empty() && part.finish_reason.empty() &&
      part.call_deltas.empty())
    return std::nullopt;
  return part;
}

bool CompletionJob::all_finished() const {
  return std::all_of(choices_.begin(), choices_.end(), [](const Choice& c) { return c.finish != FinishReason::None; });
}

bool CompletionJob::backend_aborted() const {
  return !cancelled_ && std::any_of(choices_.begin(), choices_.end(), [](const Choice& c) { return c.finish == FinishReason::Abort; });
}

Usage CompletionJob::usage() const {
  Usage u;
  u.prompt_tokens = prompt_tokens();  // each prompt once, however many choices (as OpenAI counts)
  for (const auto& c : choices_) {
    u.cached_tokens = std::max(u.cached_tokens, c.cached_tokens);
    u.completion_tokens += c.completion_tokens;
    u.draft_tokens += c.draft_tokens;
    u.accepted_tokens += c.accepted_tokens;
    if (split_reasoning_) u.reasoning_tokens = u.reasoning_tokens.value_or(0) + c.reasoning_tokens;
  }
  return u;
}

void CompletionJob::cancel() {
  cancelled_ = true;
  stream_->cancel();
  const auto now = Clock::now();
  for (auto& c : choices_)
    if (c.finish == FinishReason::None) finish_choice(c, FinishReason::Abort, now);
}

nlohmann::json CompletionJob::wait_response(Clock::time_point deadline, Clock::duration poll,
                                            const std::function<bool()>& client_gone) {
  auto next_check = Clock::now() + poll;
  while (!all_finished()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      cancel();
      throw ApiError(504, "the request timed out", {}, "timeout", error_type_for_status(504));
    }
    if (now >= next_check) {
      next_check = now + poll;
      if (client_gone()) {
        cancel();
        throw ApiError(499, "the client closed the connection");  // nobody reads it; for the record
      }
    }
    for (const auto& e : stream_->wait(std::min(deadline, next_check))) apply(e);
  }
  if (backend_aborted())
    throw ApiError(503, "the request was cancelled: the server is shutting down", {}, {}, error_type_for_status(503));
  std::vector<ChoicePart> parts;
  for (size_t i = 0; i < choices_.size(); ++i) parts.push_back(whole_choice(i));
  return writer_->body(parts, usage());
}

std::vector<SampleResult> CompletionJob::prompt_logprobs_of(size_t p) const {
  std::vector<SampleResult> out;
  if (p > 0 && shared_with_first_[p] >= 2) {  // the shared head, from the first prompt
    const auto& head = choices_[0].prompt_entries;
    out.assign(head.begin(), head.begin() + std::min(head.size(), shared_with_first_[p] - 1));
  }
  const auto& own = choices_[p * size_t(request_.n)].prompt_entries;
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

ChoicePart CompletionJob::whole_choice(size_t i) const {
  const Choice& c = choices_[i];
  ChoicePart part;
  part.index = int(i);
  part.text = c.tools ? c.tools->content() : c.reasoning ? c.reasoning->content() : c.text;
  if (c.reasoning) part.reasoning = c.reasoning->reasoning();
  part.stop_string = c.stop_string;
  part.with_logprobs = request_.logprobs;
  part.logprobs = c.logprobs;
  part.finish_reason = finish_name(c);
  if (c.tools) part.tool_calls = c.tools->calls();
  std::vector<LogprobEntry> prompt;
  if (wants_prompt_logprobs()) {
    const std::vector<int32_t>& tokens = prompts_[c.prompt];
    LogprobEntry first{backend_.token_piece(tokens[0]), 0.0f, {}, 0, tokens[0], {}, true};
    size_t offset = first.piece.size();
    prompt.push_back(std::move(first));
    for (const SampleResult& r : prompt_logprobs_of(c.prompt)) {
      LogprobEntry e{backend_.token_piece(r.token), r.logprob, {}, offset, r.token, {}, false};
      for (const auto& alt : r.top) {
        e.top.emplace_back(backend_.token_piece(alt.token), alt.logprob);
        e.top_tokens.push_back(alt.token);
      }
      offset += e.piece.size();
      prompt.push_back(std::move(e));
    }
  }
  if (request_.prompt_logprobs) {
    part.with_prompt_logprobs = true;
    part.prompt_logprobs = prompt;
  }
  if (request_.echo) {  // the prompt, then the completion (its offsets after the prompt's text)
    const std::string& echo = echo_texts_[c.prompt];
    part.text = echo + part.text;
    if (request_.logprobs) {
      for (auto& e : part.logprobs) e.text_offset += echo.size();
      part.logprobs.insert(part.logprobs.begin(), prompt.begin(), prompt.end());
    }
  }
  return part;
}

std::string CompletionJob::end_stream_with_error(const ApiError& error) {
  done_ = true;
  return writer_->stream_error(error);
}

std::string CompletionJob::next_sse(Clock::time_point until, Clock::time_point deadline) {
  std::string out;
  if (done_) return out;
  if (!opened_) {
    opened_ = true;
    Usage opening;
    opening.prompt_tokens = prompt_tokens();
    out = writer_->stream_open(opening);
    if (!out.empty()) return out;  // at once: the client sees the stream start before the first token
  }
  if (Clock::now() >= deadline) {
    cancel();
    return out + end_stream_with_error(ApiError(504, "the request timed out", {}, "timeout", error_type_for_status(504)));
  }
  for (const auto& e : stream_->wait(std::min(until, deadline)))
    if (auto part = apply(e)) out += writer_->stream_part(*part);
  if (backend_aborted()) {
    cancel();
    return out + end_stream_with_error(ApiError(503, "the request was cancelled: the server is shutting down", {}, {},
                                                error_type_for_status(503)));
  }
  if (!all_finished()) return out;
  done_ = true;
  return out + writer_->stream_close(usage());
}

}  // namespace ridge
