// Mistral Nemo (and the Mistral templates of its generation): [AVAILABLE_TOOLS][...] before the last
// user turn, calls answered as [TOOL_CALLS][{"name": ..., "arguments": ..., "id": ...}, ...],
// results as [TOOL_RESULTS]{"content": ..., "call_id": ...}[/TOOL_RESULTS]; ids of 9 letters and
// digits. Mirrors the template's text and its refusals (roles that do not alternate, other ids).
#include "chat/python_json.h"
#include "chat/tool_call_text.h"
#include "chat/tool_formats.h"
#include "core/error.h"

namespace ridge::chat {
namespace {

constexpr std::string_view kCalls = "[TOOL_CALLS]";
constexpr std::string_view kEos = "</s>";

std::string available_tools(std::span<const Tool> tools) {
  std::string out = "[AVAILABLE_TOOLS][";
  for (size_t i = 0; i < tools.size(); ++i) {
    out += "{\"type\": \"function\", \"function\": {";
    bool first = true;
    for (const auto& [key, value] : tools[i].function.items()) {
      if (key == "return") continue;
      if (!first) out += ", ";
      first = false;
      // Strings are printed raw between quotes, as the template does.
      out += "\"" + key + "\": " + (value.is_string() ? "\"" + value.get<std::string>() + "\"" : python_json(value));
    }
    out += "}}";
    out += i + 1 < tools.size() ? ", " : "]";
  }
  return out + "[/AVAILABLE_TOOLS]";
}

void check_id(const std::string& id) {
  if (id.size() != 9) fail("Tool call IDs should be alphanumeric strings with length 9!");
}

class MistralToolFormat final : public ToolFormat {
 public:
  std::string_view name() const override { return "mistral"; }

  std::string render(std::span<const ChatMessage> messages, std::span<const Tool> tools,
                     const ToolPromptOptions& /*options: no generation prompt in this format*/) const override {
    const ChatMessage* system = nullptr;
    if (!messages.empty() && messages[0].role == "system") {
      system = &messages[0];
      messages = messages.subspan(1);
    }
    size_t index = 0, last_user = messages.size();
    for (size_t i = 0; i < messages.size(); ++i) {
      const ChatMessage& m = messages[i];
      if (m.role == "user") last_user = i;
      if (m.role == "tool" || m.role == "tool_results" || !m.tool_calls.empty()) continue;
      if ((m.role == "user") != (index % 2 == 0))
        fail("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...");
      ++index;
    }
    std::string out;
    for (size_t i = 0; i < messages.size(); ++i) {
      const ChatMessage& m = messages[i];
      if (m.role == "user") {
        if (!tools.empty() && i == last_user) out += available_tools(tools);
        if (i + 1 == messages.size() && system) {
          out += "[INST]" + system->content + "\n\n" + m.content + "[/INST]";
        } else {
          out += "[INST]" + m.content + "[/INST]";
        }
      } else if (!m.tool_calls.empty()) {
        out += kCalls;
        out += "[";
        for (size_t c = 0; c < m.tool_calls.size(); ++c) {
          const ChatToolCall& call = m.tool_calls[c];
          check_id(call.id);
          const std::string function = "{\"name\": " + python_json(call.name) +
                                       ", \"arguments\": " + arguments_as_template_json(call.arguments) + "}";
          out += function.substr(0, function.size() - 1) + ", \"id\": \"" + call.id + "\"}";
          out += c + 1 < m.tool_calls.size() ? ", " : "]" + std::string(kEos);
        }
      } else if (m.role == "assistant") {
        out += m.content + std::string(kEos);
      } else if (m.role == "tool" || m.role == "tool_results") {
        check_id(m.tool_call_id);
        out += "[TOOL_RESULTS]{\"content\": " + m.content + ", \"call_id\": \"" + m.tool_call_id + "\"}[/TOOL_RESULTS]";
      } else {
        fail("Only user and assistant roles are supported, with the exception of an initial optional system message!");
      }
    }
    return out;
  }

  grammar::GrammarSpec calls_grammar(std::span<const Tool> tools, bool parallel) const override {
    std::vector<grammar::GrammarTag> tags;
    for (const Tool& tool : tools) tags.push_back(call_tag(tool, "", "arguments", ""));
    return calls_spec(std::move(tags), parallel, ", ", std::string(kCalls) + "[", "]");
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    const size_t at = text.find(kCalls);
    if (at == std::string_view::npos) {
      std::string_view content = text;
      if (!final) content.remove_suffix(partial_marker(content, kCalls));
      out.content = std::string(content);
      return out;
    }
    out.content = std::string(text.substr(0, at));
    size_t pos = skip_json_space(text, at + kCalls.size());
    if (pos >= text.size()) return out;
    if (text[pos] != '[') {
      out.content = std::string(text);
      return out;
    }
    pos = skip_json_space(text, pos + 1);
    while (pos < text.size()) {
      const CallObject object = read_call_object(text, pos, "arguments");
      if (object.status == Scan::Status::kInvalid) break;
      out.calls.push_back(object.call);
      if (object.status == Scan::Status::kIncomplete) break;
      pos = skip_json_space(text, object.end);
      if (pos >= text.size() || text[pos] != ',') break;  // "]" or the end
      pos = skip_json_space(text, pos + 1);
    }
    return out;
  }

  std::string new_call_id() const override { return random_alnum(9); }
};

}  // namespace

std::unique_ptr<ToolFormat> make_mistral_tool_format() { return std::make_unique<MistralToolFormat>(); }

}  // namespace ridge::chat
