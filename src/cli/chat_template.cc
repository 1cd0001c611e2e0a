// ridge chat-template (hidden): render a conversation the way `ridge run`/the server would, so the
// conformance tests can compare it with llama.cpp (and tool prompts with the model's own Jinja
// template). Stdin is a JSON array of messages, [{"role": "user", "content": "Hi"}, ...], or a chat
// request body {"messages": [...], "tools": [...]}. The rendered prompt goes to stdout, byte for byte.
// With --context, stdin is the whole context a Jinja template is rendered with (messages, tools,
// add_generation_prompt, bos_token, ...) and the interpreter alone renders it, as jinja2 would.
#include <cstdio>
#include <fstream>
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
#include "template/template.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace ridge::cli {
namespace {

struct ChatTemplateArgs {
  std::string format;         // --chat-template NAME
  std::string model;          // GGUF whose tokenizer.chat_template is used
  std::string template_text;  // a Jinja template given directly
  std::string template_file;  // ... or in a file (--chat-template-file)
  bool context = false;       // stdin is a template context; the interpreter renders it
  bool jinja = false;         // render as the server does: the Jinja template first, fixed formats as fallback
  int64_t now = 0;            // strftime_now's clock (seconds since 1970; 0: now)
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

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("chat-template: cannot read '{}'", path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --context: parse (errors say "refused at load") and render the context on stdin.
void render_context(const ChatTemplateArgs& args) {
  const std::string source = args.template_file.empty() ? args.template_text : read_text_file(args.template_file);
  std::optional<tmpl::Template> parsed;
  try {
    parsed.emplace(source);
  } catch (const Error& e) {
    fail("chat-template: refused at load: {}", e.what());
  }
  const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  const auto context = nlohmann::ordered_json::parse(input, nullptr, /*allow_exceptions=*/false);
  tmpl::RenderOptions options;
  options.now = std::time_t(args.now);
  if (context.is_object()) {
    const std::string out = parsed->render(tmpl::from_json(context), options);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return;
  }
  // Several contexts: one JSON result each ({"output": text} or {"error": message}), for tests.
  if (!context.is_array()) fail("chat-template: --context wants a JSON object (or an array of them) on stdin");
  nlohmann::json results = nlohmann::json::array();
  for (const auto& item : context) {
    try {
      results.push_back({{"output", parsed->render(tmpl::from_json(item), options)}});
    } catch (const Error& e) {
      results.push_back({{"error", e.what()}});
    }
  }
  const std::string out = results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

ChatTemplate choose_template(const ChatTemplateArgs& args) {
  std::optional<std::string> jinja;
  if (!args.template_file.empty() && args.format.empty()) return chat_template_from_jinja(read_text_file(args.template_file));
  if (args.jinja && args.format.empty()) {
    const std::string text = !args.template_text.empty()
                                 ? args.template_text
                                 : gguf::GgufFile::open(resolve_model_path(args.model)).get_string("tokenizer.chat_template").value_or("");
    if (text.empty()) fail("chat-template: --jinja needs --template, --template-file or a model with a template");
    return chat_template_from_jinja(text);
  }
  if (!args.template_text.empty()) {
    jinja = args.template_text;
  } else if (!args.model.empty()) {
    jinja = gguf::GgufFile::open(resolve_model_path(args.model)).get_string("tokenizer.chat_template");
  }
  return select_chat_template(jinja, args.format);
}

void print_plain(const ChatTemplate& chosen, std::istream& in, const ChatTemplateArgs& args);

// --jinja: a chat request body (or a bare message array) rendered as the server renders it.
void print_jinja(const ChatTemplate& chosen, const std::string& input, const ChatTemplateArgs& args) {
  const size_t first = input.find_first_not_of(" \t\r\n");
  const std::string body = first != std::string::npos && input[first] == '['
                               ? nlohmann::json{{"messages", nlohmann::json::parse(input)}}.dump()
                               : input;
  const OpenaiRequest request = parse_openai_request(Endpoint::ChatCompletions, body);
  ChatTemplateOptions options;
  options.add_generation_prompt = !args.no_generation_prompt;
  options.default_system_prompt = chosen.default_system_prompt;
  options.now = std::time_t(args.now);
  if (!request.tools.empty()) {
    options.tools = nlohmann::ordered_json::array();
    for (const auto& tool : request.tools) options.tools.push_back(tool.definition);
  }
  if (request.enable_thinking) options.kwargs["enable_thinking"] = *request.enable_thinking;
  if (!args.model.empty()) {
    const auto file = gguf::GgufFile::open(resolve_model_path(args.model));
    use_vocabulary_tokens(options, Tokenizer::from_gguf(file));
  }
  // As the server: a conversation with tools falls back to its tool format, others to the fixed format.
  std::function<std::string()> fallback;
  const auto tool_format = chat::select_tool_format(chosen.source, chosen.format, args.tool_call_parser);
  if (request.uses_tools() && !tool_format) fail("chat-template: the template has no tool format (pass --tool-call-parser)");
  if (request.uses_tools()) {
    fallback = [&] {
      chat::ToolPromptOptions tool_options;
      tool_options.add_generation_prompt = options.add_generation_prompt;
      tool_options.default_system_prompt = chosen.default_system_prompt;
      tool_options.today = args.today;
      return tool_format->render(request.messages, request.tools, tool_options);
    };
  }
  const std::string prompt = render_chat_template(chosen, request.messages, options, fallback);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
}

void run_chat_template(const ChatTemplateArgs& args) {
  if (args.context) {
    render_context(args);
    return;
  }
  const ChatTemplate chosen = choose_template(args);
  // Without --jinja this renders the fixed formats alone: a template none of them matches is an error.
  if (!args.jinja && !chosen.has_fixed_format) detect_chat_format(chosen.source);
  if (args.detect_only) {
    const auto tools = chat::select_tool_format(chosen.source, chosen.format, args.tool_call_parser);
    const nlohmann::json out = {{"format", chat_format_name(chosen.format)},
                                {"default_system_prompt", chosen.default_system_prompt},
                                {"tool_format", tools ? nlohmann::json(std::string(tools->name())) : nlohmann::json(nullptr)},
                                {"jinja", chosen.jinja != nullptr},
                                {"jinja_refusal", chosen.jinja_refusal}};
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  if (args.jinja) {
    print_jinja(chosen, input, args);
    return;
  }
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
  cmd->add_option("--template-file,--chat-template-file", args->template_file, "A Jinja chat template file");
  cmd->add_flag("--jinja", args->jinja, "Render as the server does: the model's Jinja template first");
  cmd->add_flag("--context", args->context, "Stdin is a template context (JSON object); render it with the interpreter");
  cmd->add_option("--now", args->now, "strftime_now's clock, seconds since 1970 (default: now)");
  cmd->add_flag("--no-generation-prompt", args->no_generation_prompt, "Do not open an assistant turn at the end");
  cmd->add_option("--tool-call-parser", args->tool_call_parser, "Tool format overriding the template's");
  cmd->add_option("--today", args->today, "The date a template prints (\"01 Dec 2026\"); default: today");
  cmd->add_flag("--detect", args->detect_only, "Print the chosen format and default system prompt as JSON");
  cmd->callback([args] { run_chat_template(*args); });
}

}  // namespace ridge::cli
