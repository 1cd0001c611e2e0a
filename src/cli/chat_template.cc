// ridge chat-template (hidden): render a conversation the way `ridge run`/the server would, so the
// conformance tests can compare it with llama.cpp (and tool prompts with the model's own Jinja
// template). Stdin is a JSON array of messages, [{"role": "user", "content": "Hi"}, ...], or a chat
// request body {"messages": [...], "tools": [...]}. The rendered prompt goes to stdout, byte for byte.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/tool_format.h"
#include "cli/commands.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"
#include "serve/openai_request.h"
#include "tokenizer/chat_template.h"

namespace ridge::cli {
namespace {

struct ChatTemplateArgs {
  std::string format;         // --chat-template NAME
  std::string model;          // GGUF whose tokenizer.chat_template is used
  std::string template_text;  // a Jinja template given directly
  bool no_generation_prompt = false;
  bool detect_only = false;
  std::string tool_call_parser;  // overrides the template's tool format
  std::string today;             // the date templates print ("01 Dec 2026"), for reproducible output
};

std::vector<ChatMessage> read_messages(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) fail("chat-template: stdin must be a JSON array of {{\"role\", \"content\"}} objects");
  std::vector<ChatMessage> messages;
  for (const auto& item : json) {
    if (!item.is_object() || !item.contains("role") || !item["role"].is_string() || !item.contains("content") ||
        !item["content"].is_string())
      fail("chat-template: every message needs string fields \"role\" and \"content\"");
    messages.push_back(ChatMessage{item["role"].get<std::string>(), item["content"].get<std::string>(), {}, {}});
  }
  return messages;
}

ChatTemplate choose_template(const ChatTemplateArgs& args) {
  std::optional<std::string> jinja;
  if (!args.template_text.empty()) {
    jinja = args.template_text;
  } else if (!args.model.empty()) {
    jinja = gguf::GgufFile::open(resolve_model_path(args.model)).get_string("tokenizer.chat_template");
  }
  return select_chat_template(jinja, args.format);
}

void print_plain(const ChatTemplate& chosen, std::istream& in, const ChatTemplateArgs& args);

void run_chat_template(const ChatTemplateArgs& args) {
  const ChatTemplate chosen = choose_template(args);
  if (args.detect_only) {
    const auto tools = chat::select_tool_format(chosen.source, chosen.format, args.tool_call_parser);
    const nlohmann::json out = {{"format", chat_format_name(chosen.format)},
                                {"default_system_prompt", chosen.default_system_prompt},
                                {"tool_format", tools ? nlohmann::json(std::string(tools->name())) : nlohmann::json(nullptr)}};
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  if (input.find_first_not_of(" \t\r\n") != std::string::npos && input[input.find_first_not_of(" \t\r\n")] == '{') {
    const OpenaiRequest request = parse_openai_request(Endpoint::ChatCompletions, input);
    if (request.uses_tools()) {
      const auto format = chat::select_tool_format(chosen.source, chosen.format, args.tool_call_parser);
      if (!format) fail("chat-template: the template has no tool format (pass --tool-call-parser)");
      chat::ToolPromptOptions options;
      options.add_generation_prompt = !args.no_generation_prompt;
      options.default_system_prompt = chosen.default_system_prompt;
      options.today = args.today;
      const std::string prompt = format->render(request.messages, request.tools, options);
      std::fwrite(prompt.data(), 1, prompt.size(), stdout);
      return;
    }
    std::istringstream messages_json(nlohmann::json::parse(input).at("messages").dump());
    print_plain(chosen, messages_json, args);
    return;
  }
  std::istringstream messages_json(input);
  print_plain(chosen, messages_json, args);
}

void print_plain(const ChatTemplate& chosen, std::istream& in, const ChatTemplateArgs& args) {
  const auto messages = read_messages(in);
  ChatTemplateOptions options;
  options.add_generation_prompt = !args.no_generation_prompt;
  options.default_system_prompt = chosen.default_system_prompt;
  const std::string prompt = render_chat(chosen.format, messages, options);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
}

}  // namespace

void add_chat_template_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat-template", "Render a JSON conversation (stdin) in a chat format");
  cmd->group("");  // hidden: a test hook, not a user command
  auto args = std::make_shared<ChatTemplateArgs>();
  cmd->add_option("--chat-template", args->format, "Format name (chatml, llama3, ...), overriding the model's");
  cmd->add_option("-m,--model", args->model, "GGUF file whose tokenizer.chat_template is used, or 'default'");
  cmd->add_option("--template", args->template_text, "A Jinja chat template to detect the format from");
  cmd->add_flag("--no-generation-prompt", args->no_generation_prompt, "Do not open an assistant turn at the end");
  cmd->add_option("--tool-call-parser", args->tool_call_parser, "Tool format overriding the template's");
  cmd->add_option("--today", args->today, "The date a template prints (\"01 Dec 2026\"); default: today");
  cmd->add_flag("--detect", args->detect_only, "Print the chosen format and default system prompt as JSON");
  cmd->callback([args] { run_chat_template(*args); });
}

}  // namespace ridge::cli
