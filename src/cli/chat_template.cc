// ridge chat-template (hidden): render a conversation the way `ridge run`/the server would, so the
// conformance tests can compare it with llama.cpp. Messages come as a JSON array on stdin:
// [{"role": "user", "content": "Hi"}, ...]. The rendered prompt goes to stdout, byte for byte.
#include <cstdio>
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"
#include "tokenizer/chat_template.h"

namespace ridge::cli {
namespace {

struct ChatTemplateArgs {
  std::string format;         // --chat-template NAME
  std::string model;          // GGUF whose tokenizer.chat_template is used
  std::string template_text;  // a Jinja template given directly
  bool no_generation_prompt = false;
  bool detect_only = false;
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
    messages.push_back({item["role"].get<std::string>(), item["content"].get<std::string>()});
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

void run_chat_template(const ChatTemplateArgs& args) {
  const ChatTemplate chosen = choose_template(args);
  if (args.detect_only) {
    const nlohmann::json out = {{"format", chat_format_name(chosen.format)},
                                {"default_system_prompt", chosen.default_system_prompt}};
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  const auto messages = read_messages(std::cin);
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
  cmd->add_flag("--detect", args->detect_only, "Print the chosen format and default system prompt as JSON");
  cmd->callback([args] { run_chat_template(*args); });
}

}  // namespace ridge::cli
