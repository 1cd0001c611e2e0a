// Llama 3.1 / 3.2 / 3.3 (JSON tool calling): "Environment: ipython" in the system turn, the tools
// (tojson, indent 4) and their instructions prepended to the first user turn, calls answered as
// {"name": ..., "parameters": ...}, results in "ipython" turns. One call per turn (the template
// refuses more). Mirrors the template's text, with tools_in_user_message at its default (true).
#include <ctime>

#include "chat/python_json.h"
#include "chat/tool_call_text.h"
#include "chat/tool_formats.h"
#include "core/error.h"

namespace ridge::chat {
namespace {

class Llama3ToolFormat final : public ToolFormat {
 public:
  explicit Llama3ToolFormat(bool date_from_clock) : date_from_clock_(date_from_clock) {}
  std::string_view name() const override { return "llama3"; }

  std::string render(std::span<const ChatMessage> messages, std::span<const Tool> tools,
                     const ToolPromptOptions& options) const override {
    std::string system_message;
    if (!messages.empty() && messages[0].role == "system") {
      system_message = trim_space(messages[0].content);
      messages = messages.subspan(1);
    }
    std::string out = "<|start_header_id|>system<|end_header_id|>\n\n";
    if (!tools.empty()) out += "Environment: ipython\n";
    out += "Cutting Knowledge Date: December 2023\nToday Date: " + date(options) + "\n\n";
    out += system_message + "<|eot_id|>";
    if (!tools.empty()) {
      if (messages.empty()) fail("Cannot put tools in the first user message when there's no first user message!");
      const std::string first_user = trim_space(messages[0].content);
      messages = messages.subspan(1);
      out += "<|start_header_id|>user<|end_header_id|>\n\n";
      out += "Given the following functions, please respond with a JSON for a function call with its proper "
             "arguments that best answers the given prompt.\n\n";
      out += "Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its "
             "value}.Do not use variables.\n\n";
      for (const Tool& tool : tools) out += python_json(tool.definition, 4) + "\n\n";
      out += first_user + "<|eot_id|>";
    }
    for (const ChatMessage& m : messages) {
      if (!m.tool_calls.empty()) {
        if (m.tool_calls.size() != 1) fail("This model only supports single tool-calls at once!");
        const ChatToolCall& call = m.tool_calls[0];
        out += "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"" + call.name + "\", \"parameters\": " +
               arguments_as_template_json(call.arguments) + "}<|eot_id|>";
      } else if (m.role == "tool" || m.role == "ipython") {
        // `content is iterable` holds for a string too, so results are printed as a JSON string.
        out += "<|start_header_id|>ipython<|end_header_id|>\n\n" + python_json(m.content) + "<|eot_id|>";
      } else {
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim_space(m.content) + "<|eot_id|>";
      }
    }
    if (options.add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
  }

  grammar::GrammarSpec calls_grammar(std::span<const Tool> tools, bool /*parallel: one call per turn*/) const override {
    std::vector<grammar::GrammarTag> tags;
    for (const Tool& tool : tools) tags.push_back(call_tag(tool, "", "parameters", ""));
    return calls_spec(std::move(tags), /*repeat=*/false, "");
  }

  // A call is the whole answer: an object whose first key is "name". Anything else is content.
  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    const size_t start = skip_json_space(text, 0);
    const std::string_view rest = text.substr(start);
    constexpr std::string_view kOpen = "{\"name\"";
    if (!final && kOpen.starts_with(rest)) return out;  // too early to tell
    if (!rest.starts_with("{")) {
      out.content = std::string(text);
      return out;
    }
    const CallObject object = read_call_object(text, start, "parameters");
    const bool name_first = rest.starts_with(kOpen) || object.call.name_done;
    if (object.status == Scan::Status::kInvalid || !name_first ||
        (final && object.status != Scan::Status::kComplete && !object.call.name_done)) {
      out.content = std::string(text);
      return out;
    }
    out.calls.push_back(object.call);
    if (object.status == Scan::Status::kComplete) append_content(out, text.substr(object.end));
    return out;
  }

 private:
  std::string date(const ToolPromptOptions& options) const {
    if (!date_from_clock_) return "26 Jul 2024";
    if (!options.today.empty()) return options.today;
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%d %b %Y", &local);
    return text;
  }

  bool date_from_clock_;
};

}  // namespace

std::unique_ptr<ToolFormat> make_llama3_tool_format(bool date_from_clock) {
  return std::make_unique<Llama3ToolFormat>(date_from_clock);
}

}  // namespace ridge::chat
