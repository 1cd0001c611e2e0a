// OpenAI's Responses API: a response object whose output is a list of items (reasoning, message
// with output_text, function_call), streamed as semantic events (response.created, ...
// output_item.added, content_part.added, output_text.delta / reasoning_text.delta /
// function_call_arguments.delta, their .done events, output_item.done, response.completed or
// response.incomplete), each with a sequence_number. Items keep one id from their first event to
// the final response (the SDK's stream accumulator checks it). A response with store: true is
// kept, with its conversation, for previous_response_id.
#include <chrono>

#include <fmt/format.h>

#include "serve/random_id.h"
#include "serve/response_writer.h"
#include "serve/responses_request.h"

namespace ridge {
namespace {

using nlohmann::json;
using Json = nlohmann::ordered_json;

struct Item {
  enum class Kind { kReasoning, kMessage, kCall } kind;
  std::string id;
  std::string text;  // reasoning or message text; a call's arguments
  std::string call_id, name;
};

Json item_json(const Item& item, bool done) {
  const char* status = done ? "completed" : "in_progress";
  switch (item.kind) {
    case Item::Kind::kReasoning: {
      Json content = Json::array();
      if (done) content.push_back({{"type", "reasoning_text"}, {"text", item.text}});
      return {{"type", "reasoning"}, {"id", item.id}, {"summary", Json::array()}, {"content", content}};
    }
    case Item::Kind::kMessage: {
      Json content = Json::array();
      if (done) content.push_back({{"type", "output_text"}, {"text", item.text}, {"annotations", Json::array()}, {"logprobs", Json::array()}});
      return {{"type", "message"}, {"id", item.id}, {"status", status}, {"role", "assistant"}, {"content", content}};
    }
    case Item::Kind::kCall:
      return {{"type", "function_call"}, {"id", item.id}, {"call_id", item.call_id}, {"name", item.name},
              {"arguments", done ? item.text : ""}, {"status", status}};
  }
  return {};
}

class ResponsesWriter : public ResponseWriter {
 public:
  ResponsesWriter(const OpenaiRequest& request, std::string model)
      : context_(request.responses), model_(std::move(model)),
        created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

  json body(const std::vector<ChoicePart>& choices, const Usage& usage) override {
    const ChoicePart& c = choices.at(0);
    items_.clear();
    if (!c.reasoning.empty()) items_.push_back({Item::Kind::kReasoning, random_id("rs_"), c.reasoning, {}, {}});
    if (!c.text.empty() || c.tool_calls.empty()) items_.push_back({Item::Kind::kMessage, random_id("msg_"), c.text, {}, {}});
    for (const auto& call : c.tool_calls) items_.push_back({Item::Kind::kCall, random_id("fc_"), call.arguments, call.id, call.name});
    finish_ = c.finish_reason;
    store();
    return response(finish_ == "length" ? "incomplete" : "completed", usage);
  }

  std::string stream_open(const Usage&) override {
    const json skeleton = response("in_progress", std::nullopt);
    return event("response.created", {{"response", skeleton}}) + event("response.in_progress", {{"response", skeleton}});
  }

  std::string stream_part(const ChoicePart& part) override {
    std::string out;
    if (!part.reasoning.empty()) {
      out += enter(Item::Kind::kReasoning);
      items_.back().text += part.reasoning;
      out += event("response.reasoning_text.delta", {{"item_id", items_.back().id}, {"output_index", index()}, {"content_index", 0},
                                                     {"delta", part.reasoning}});
    }
    if (!part.text.empty()) {
      out += enter(Item::Kind::kMessage);
      items_.back().text += part.text;
      out += event("response.output_text.delta", {{"item_id", items_.back().id}, {"output_index", index()}, {"content_index", 0},
                                                  {"delta", part.text}, {"logprobs", json::array()}});
    }
    for (const auto& d : part.call_deltas) {
      if (d.opens || open_ != Item::Kind::kCall) out += enter(Item::Kind::kCall, d.id, d.name);
      if (d.arguments.empty()) continue;
      items_.back().text += d.arguments;
      out += event("response.function_call_arguments.delta", {{"item_id", items_.back().id}, {"output_index", index()},
                                                              {"delta", d.arguments}});
    }
    if (!part.finish_reason.empty()) finish_ = part.finish_reason;
    return out;
  }

  std::string stream_close(const Usage& usage) override {
    std::string out = leave();
    store();
    const bool incomplete = finish_ == "length";
    const json final = response(incomplete ? "incomplete" : "completed", usage);
    return out + event(incomplete ? "response.incomplete" : "response.completed", {{"response", final}});
  }

  std::string stream_error(const ApiError& error) override {
    return event("error", {{"code", error.code.empty() ? json(nullptr) : json(error.code)}, {"message", error.what()},
                           {"param", error.param.empty() ? json(nullptr) : json(error.param)}});
  }

 private:
  int index() const { return int(items_.size()) - 1; }

  std::string event(const char* type, json data) {
    data["type"] = type;
    data["sequence_number"] = sequence_++;
    return fmt::format("event: {}\ndata: {}\n\n", type, data.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  // Opens an item of `kind` unless one is open (a call always opens a new one).
  std::string enter(Item::Kind kind, const std::string& call_id = {}, const std::string& name = {}) {
    if (open_ == kind && kind != Item::Kind::kCall) return {};
    std::string out = leave();
    const char* prefix = kind == Item::Kind::kReasoning ? "rs_" : kind == Item::Kind::kMessage ? "msg_" : "fc_";
    items_.push_back({kind, random_id(prefix), {}, call_id, name});
    open_ = kind;
    out += event("response.output_item.added", {{"output_index", index()}, {"item", item_json(items_.back(), false)}});
    if (kind == Item::Kind::kMessage)
      out += event("response.content_part.added", {{"item_id", items_.back().id}, {"output_index", index()}, {"content_index", 0},
                                                   {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", json::array()}}}});
    return out;
  }

  std::string leave() {
    if (!open_) return {};
    const Item& item = items_.back();
    std::string out;
    switch (*open_) {
      case Item::Kind::kReasoning:
        out += event("response.reasoning_text.done", {{"item_id", item.id}, {"output_index", index()}, {"content_index", 0}, {"text", item.text}});
        break;
      case Item::Kind::kMessage:
        out += event("response.output_text.done", {{"item_id", item.id}, {"output_index", index()}, {"content_index", 0},
                                                   {"text", item.text}, {"logprobs", json::array()}});
        out += event("response.content_part.done", {{"item_id", item.id}, {"output_index", index()}, {"content_index", 0},
                                                    {"part", {{"type", "output_text"}, {"text", item.text}, {"annotations", json::array()}}}});
        break;
      case Item::Kind::kCall:
        out += event("response.function_call_arguments.done", {{"item_id", item.id}, {"output_index", index()},
                                                               {"name", item.name}, {"arguments", item.text}});
        break;
    }
    out += event("response.output_item.done", {{"output_index", index()}, {"item", item_json(item, true)}});
    open_.reset();
    return out;
  }

  // The whole response object: its items so far, usage when known, and the request's settings echoed.
  json response(const char* status, const std::optional<Usage>& usage) const {
    const Json& echo = context_->echo;
    auto echoed = [&](const char* key, Json otherwise) { return echo.contains(key) ? echo[key] : otherwise; };
    Json output = Json::array();
    for (const auto& item : items_) output.push_back(item_json(item, true));
    Json out = {{"id", context_->id}, {"object", "response"}, {"created_at", created_}, {"status", status},
                {"error", nullptr}, {"incomplete_details", nullptr}, {"model", model_}, {"output", output}};
    if (std::string(status) == "incomplete") out["incomplete_details"] = {{"reason", "max_output_tokens"}};
    out["instructions"] = echoed("instructions", nullptr);
    out["max_output_tokens"] = echoed("max_output_tokens", nullptr);
    out["previous_response_id"] = echoed("previous_response_id", nullptr);
    out["tools"] = echoed("tools", Json::array());
    out["tool_choice"] = echoed("tool_choice", "auto");
    out["parallel_tool_calls"] = echoed("parallel_tool_calls", true);
    out["temperature"] = echoed("temperature", 1.0);
    out["top_p"] = echoed("top_p", 1.0);
    out["text"] = echoed("text", Json{{"format", {{"type", "text"}}}});
    out["metadata"] = echoed("metadata", Json::object());
    out["store"] = context_->store;
    out["usage"] = nullptr;
    if (usage)
      out["usage"] = {{"input_tokens", usage->prompt_tokens},
                      {"input_tokens_details", {{"cached_tokens", usage->cached_tokens}}},
                      {"output_tokens", usage->completion_tokens},
                      {"output_tokens_details", {{"reasoning_tokens", usage->reasoning_tokens.value_or(0)}}},
                      {"total_tokens", usage->prompt_tokens + usage->completion_tokens}};
    return json::parse(out.dump());
  }

  // The conversation, this response's answer included, for a later previous_response_id.
  void store() {
    if (!context_->store || !context_->response_store) return;
    std::vector<ChatMessage> conversation = context_->conversation;
    ChatMessage answer{"assistant", "", {}, {}};
    for (const auto& item : items_) {
      if (item.kind == Item::Kind::kMessage) answer.content += item.text;
      if (item.kind == Item::Kind::kCall) answer.tool_calls.push_back({item.call_id, item.name, item.text});
    }
    conversation.push_back(std::move(answer));
    context_->response_store->put(context_->id, std::move(conversation));
  }

  std::shared_ptr<const ResponsesContext> context_;
  std::string model_;
  int64_t created_;
  std::vector<Item> items_;
  std::optional<Item::Kind> open_;
  std::string finish_ = "stop";
  int64_t sequence_ = 0;
};

}  // namespace

std::unique_ptr<ResponseWriter> make_responses_writer(const OpenaiRequest& request, const std::string& model) {
  return std::make_unique<ResponsesWriter>(request, model);
}

}  // namespace ridge
