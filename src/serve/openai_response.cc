#include "serve/openai_response.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "serve/random_id.h"
#include "tokenizer/utf8.h"

namespace ridge {
namespace {

using nlohmann::json;

double finite_logprob(float logprob) { return std::isfinite(logprob) ? double(logprob) : double(kLogprobFloor); }

json token_bytes(const std::string& piece) {
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(int(c));
  return bytes;
}

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]}
json chat_logprobs(const std::vector<LogprobEntry>& tokens) {
  json content = json::array();
  for (const auto& t : tokens) {
    json top = json::array();
    for (const auto& [piece, logprob] : t.top)
      top.push_back({{"token", utf8::sanitize(piece)}, {"logprob", finite_logprob(logprob)}, {"bytes", token_bytes(piece)}});
    content.push_back({{"token", utf8::sanitize(t.piece)},
                       {"logprob", finite_logprob(t.logprob)},
                       {"bytes", token_bytes(t.piece)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}};
}

// Completions: parallel lists; top_logprobs maps token text to logprob and always holds the sampled
// token too (so up to logprobs + 1 entries, as OpenAI documents).
json completion_logprobs(const std::vector<LogprobEntry>& tokens) {
  json out = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const auto& t : tokens) {
    const std::string text = utf8::sanitize(t.piece);
    out["tokens"].push_back(text);
    out["text_offset"].push_back(t.text_offset);
    if (t.none) {  // an echoed prompt's first token: nothing before it to predict it
      out["token_logprobs"].push_back(nullptr);
      out["top_logprobs"].push_back(nullptr);
      continue;
    }
    out["token_logprobs"].push_back(finite_logprob(t.logprob));
    json top = json::object();
    for (const auto& [piece, logprob] : t.top) top[utf8::sanitize(piece)] = finite_logprob(logprob);
    top[text] = finite_logprob(t.logprob);
    out["top_logprobs"].push_back(std::move(top));
  }
  return out;
}

// vLLM's prompt_logprobs: per prompt token null (the first) or {"<id>": {"logprob", "rank", "decoded_token"}}
// for the token and its alternatives (rank: place among the alternatives; null when it is not one).
json prompt_logprobs_json(const std::vector<LogprobEntry>& tokens) {
  json out = json::array();
  for (const auto& t : tokens) {
    if (t.none) {
      out.push_back(nullptr);
      continue;
    }
    json entry = json::object();
    json rank = nullptr;
    for (size_t k = 0; k < t.top_tokens.size(); ++k) {
      entry[std::to_string(t.top_tokens[k])] = {{"logprob", finite_logprob(t.top[k].second)}, {"rank", k + 1},
                                                {"decoded_token", utf8::sanitize(t.top[k].first)}};
      if (t.top_tokens[k] == t.token) rank = k + 1;
    }
    entry[std::to_string(t.token)] = {{"logprob", finite_logprob(t.logprob)}, {"rank", rank},
                                      {"decoded_token", utf8::sanitize(t.piece)}};
    out.push_back(std::move(entry));
  }
  return out;
}

json logprobs_json(Endpoint endpoint, const ChoicePart& choice) {
  if (!choice.with_logprobs) return nullptr;
  return endpoint == Endpoint::ChatCompletions ? chat_logprobs(choice.logprobs) : completion_logprobs(choice.logprobs);
}

json finish_json(const ChoicePart& choice) {
  return choice.finish_reason.empty() ? json(nullptr) : json(choice.finish_reason);
}

json header_json(const ResponseHeader& header, bool chunk) {
  const char* object = header.endpoint == Endpoint::Completions ? "text_completion"
                       : chunk                                  ? "chat.completion.chunk"
                                                                : "chat.completion";
  return {{"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model},
          {"system_fingerprint", nullptr}};
}

}  // namespace

ResponseHeader make_response_header(Endpoint endpoint, const std::string& model) {
  ResponseHeader header;
  header.endpoint = endpoint;
  header.id = random_id(endpoint == Endpoint::Completions ? "cmpl-" : "chatcmpl-");
  header.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  header.model = model;
  return header;
}

json usage_json(const Usage& usage) {
  json out = {{"prompt_tokens", usage.prompt_tokens},
              {"completion_tokens", usage.completion_tokens},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
  if (usage.reasoning_tokens)
    out["completion_tokens_details"] = {{"reasoning_tokens", *usage.reasoning_tokens}};
  if (usage.draft_tokens > 0)
    out["spec_decode"] = {{"draft_tokens", usage.draft_tokens},
                          {"accepted_tokens", usage.accepted_tokens},
                          {"acceptance_rate", double(usage.accepted_tokens) / double(usage.draft_tokens)}};
  return out;
}

json response_json(const ResponseHeader& header, const std::vector<ChoicePart>& choices, const Usage& usage) {
  json out = header_json(header, /*chunk=*/false);
  json list = json::array();
  for (const auto& c : choices) {
    json choice = {{"index", c.index}, {"logprobs", logprobs_json(header.endpoint, c)}, {"finish_reason", finish_json(c)}};
    if (c.with_prompt_logprobs) choice["prompt_logprobs"] = prompt_logprobs_json(c.prompt_logprobs);
    if (header.endpoint == Endpoint::Completions) {
      choice["text"] = c.text;
    } else {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
      if (!c.reasoning.empty()) choice["message"]["reasoning_content"] = c.reasoning;
      if (!c.tool_calls.empty()) {
        if (c.text.empty()) choice["message"]["content"] = nullptr;
        json calls = json::array();
        for (const auto& call : c.tool_calls)
          calls.push_back({{"id", call.id}, {"type", "function"},
                           {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        choice["message"]["tool_calls"] = std::move(calls);
      }
    }
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

json chunk_json(const ResponseHeader& header, const ChoicePart& c, bool usage_null) {
  json out = header_json(header, /*chunk=*/true);
  json choice = {{"index", c.index}, {"logprobs", logprobs_json(header.endpoint, c)}, {"finish_reason", finish_json(c)}};
  if (header.endpoint == Endpoint::Completions) {
    choice["text"] = c.text;
  } else if (c.role) {
    choice["delta"] = {{"role", "assistant"}, {"content", ""}};
  } else if (!c.call_deltas.empty()) {
    // The first delta of a call carries its id, type and name; later ones only arguments.
    json calls = json::array();
    for (const auto& d : c.call_deltas) {
      json call = {{"index", d.index}};
      if (d.opens) {
        call["id"] = d.id;
        call["type"] = "function";
        call["function"] = {{"name", d.name}, {"arguments", d.arguments}};
      } else {
        call["function"] = {{"arguments", d.arguments}};
      }
      calls.push_back(std::move(call));
    }
    choice["delta"] = {{"tool_calls", std::move(calls)}};
    if (!c.text.empty()) choice["delta"]["content"] = c.text;
    if (!c.reasoning.empty()) choice["delta"]["reasoning_content"] = c.reasoning;
  } else if (!c.reasoning.empty()) {
    choice["delta"] = {{"reasoning_content", c.reasoning}};
    if (!c.text.empty()) choice["delta"]["content"] = c.text;
  } else if (!c.finish_reason.empty() && c.text.empty()) {
    choice["delta"] = json::object();
  } else {
    choice["delta"] = {{"content", c.text}};
  }
  out["choices"] = json::array({std::move(choice)});
  if (usage_null) out["usage"] = nullptr;
  return out;
}

json usage_chunk_json(const ResponseHeader& header, const Usage& usage) {
  json out = header_json(header, /*chunk=*/true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

}  // namespace ridge
