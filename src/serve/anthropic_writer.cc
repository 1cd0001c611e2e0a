// Anthropic's Messages API: a message with content blocks (thinking, text, tool_use), stop_reason
// and usage; streamed as message_start, content_block_start / _delta / _stop per block (text_delta,
// thinking_delta, input_json_delta), message_delta with the stop reason, message_stop; errors as
// {"type": "error", "error": {"type", "message"}}.

#include <fmt/format.h>

#include "serve/random_id.h"
#include "serve/response_writer.h"

namespace ridge {
namespace {

using nlohmann::json;

std::string event(const char* name, const json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", name, data.dump(-1, ' ', false, json::error_handler_t::replace));
}

json usage_of(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens}, {"output_tokens", u.completion_tokens},
          {"cache_read_input_tokens", u.cached_tokens}, {"cache_creation_input_tokens", 0}};
}

// OpenAI's finish reason and the stop string to Anthropic's stop_reason.
std::string stop_reason(const std::string& finish, const std::string& stop_string) {
  if (finish == "length") return "max_tokens";
  if (finish == "tool_calls") return "tool_use";
  return stop_string.empty() ? "end_turn" : "stop_sequence";
}

json stop_sequence(const std::string& stop_string) { return stop_string.empty() ? json(nullptr) : json(stop_string); }

// A call's arguments as the tool_use block's input object.
json input_of(const std::string& arguments) {
  json input = json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return input.is_object() ? input : json::object();
}

class AnthropicWriter : public ResponseWriter {
 public:
  explicit AnthropicWriter(std::string model) : id_(random_id("msg_")), model_(std::move(model)) {}

  json body(const std::vector<ChoicePart>& choices, const Usage& usage) override {
    const ChoicePart& c = choices.at(0);  // n is always 1 here
    json content = json::array();
    if (!c.reasoning.empty()) content.push_back({{"type", "thinking"}, {"thinking", c.reasoning}, {"signature", ""}});
    if (!c.text.empty() || c.tool_calls.empty()) content.push_back({{"type", "text"}, {"text", c.text}});
    for (const auto& call : c.tool_calls)
      content.push_back({{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", input_of(call.arguments)}});
    return {{"id", id_}, {"type", "message"}, {"role", "assistant"}, {"model", model_}, {"content", std::move(content)},
            {"stop_reason", stop_reason(c.finish_reason, c.stop_string)}, {"stop_sequence", stop_sequence(c.stop_string)},
            {"usage", usage_of(usage)}};
  }

  std::string stream_open(const Usage& usage) override {
    Usage start = usage;
    start.completion_tokens = 0;
    json message = {{"id", id_}, {"type", "message"}, {"role", "assistant"}, {"model", model_},
                    {"content", json::array()}, {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                    {"usage", usage_of(start)}};
    return event("message_start", {{"type", "message_start"}, {"message", std::move(message)}}) +
           event("ping", {{"type", "ping"}});
  }

  std::string stream_part(const ChoicePart& part) override {
    std::string out;
    if (!part.reasoning.empty()) {
      out += enter(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
      out += delta({{"type", "thinking_delta"}, {"thinking", part.reasoning}});
    }
    if (!part.text.empty()) {
      out += enter(Block::kText, {{"type", "text"}, {"text", ""}});
      out += delta({{"type", "text_delta"}, {"text", part.text}});
    }
    for (const auto& d : part.call_deltas) {
      if (d.opens || block_ != Block::kTool)
        out += enter(Block::kTool, {{"type", "tool_use"}, {"id", d.id}, {"name", d.name}, {"input", json::object()}},
                     /*always=*/true);
      if (!d.arguments.empty()) out += delta({{"type", "input_json_delta"}, {"partial_json", d.arguments}});
    }
    if (!part.finish_reason.empty()) {
      finish_ = part.finish_reason;
      stop_string_ = part.stop_string;
    }
    return out;
  }

  std::string stream_close(const Usage& usage) override {
    std::string out = leave();
    json delta_usage = {{"output_tokens", usage.completion_tokens}};
    out += event("message_delta", {{"type", "message_delta"},
                                   {"delta", {{"stop_reason", stop_reason(finish_, stop_string_)},
                                              {"stop_sequence", stop_sequence(stop_string_)}}},
                                   {"usage", std::move(delta_usage)}});
    return out + event("message_stop", {{"type", "message_stop"}});
  }

  std::string stream_error(const ApiError& error) override { return event("error", anthropic_error_json(error)); }

 private:
  enum class Block { kNone, kThinking, kText, kTool };

  // Closes the open block and opens one of `kind` unless it is already open (a new tool_use
  // block always opens).
  std::string enter(Block kind, json start, bool always = false) {
    if (block_ == kind && !always) return {};
    std::string out = leave();
    block_ = kind;
    return out + event("content_block_start", {{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(start)}});
  }

  std::string leave() {
    if (block_ == Block::kNone) return {};
    block_ = Block::kNone;
    return event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_++}});
  }

  std::string delta(json d) {
    return event("content_block_delta", {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(d)}});
  }

  std::string id_, model_;
  Block block_ = Block::kNone;
  int index_ = 0;
  std::string finish_ = "stop", stop_string_;
};

std::string anthropic_error_type(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace

std::unique_ptr<ResponseWriter> make_anthropic_writer(const OpenaiRequest&, const std::string& model) {
  return std::make_unique<AnthropicWriter>(model);
}

json anthropic_error_json(const ApiError& error) {
  return {{"type", "error"}, {"error", {{"type", anthropic_error_type(error.status)}, {"message", error.what()}}}};
}

}  // namespace ridge
