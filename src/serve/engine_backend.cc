#include "serve/engine_backend.h"

#include <algorithm>

#include <fmt/format.h>

#include "dist/communicator.h"
#include "engine/grammar_vocab.h"

namespace ridge {

EngineBackend::EngineBackend(Engine& engine, ChatTemplate chat, std::string model_id,
                             std::shared_ptr<const chat::ToolFormat> tools, std::optional<chat::ReasoningTags> reasoning,
                             int32_t reasoning_budget)
    : engine_(engine), chat_(std::move(chat)), model_id_(std::move(model_id)), tools_(std::move(tools)),
      reasoning_(std::move(reasoning)), thinking_off_(reasoning_budget == 0),
      grammars_(std::make_unique<grammar::GrammarCache>(grammar_vocab(engine.tokenizer()))) {
  if (!reasoning_) return;
  const Tokenizer& t = engine.tokenizer();
  const auto open = t.encode(reasoning_->open, /*add_special=*/false, /*parse_special=*/true);
  const auto close = t.encode(reasoning_->close, /*add_special=*/false, /*parse_special=*/true);
  if (open.size() != 1 || close.size() != 1) return;
  ThinkingGate gate;
  gate.open_token = open[0];
  gate.close_token = close[0];
  gate.budget = reasoning_budget > 0 ? reasoning_budget : -1;
  // Ends at the tag: what follows is the answer's (its grammar's, when there is one).
  gate.forced_close = t.encode("\n" + reasoning_->close, false, true);
  gate_ = std::move(gate);
}

std::shared_ptr<const grammar::CompiledGrammar> EngineBackend::compile_grammar(const grammar::GrammarSpec& spec) {
  return grammars_->get(spec);
}

RequestId EngineBackend::submit(RequestOptions options, EventCallback on_event) {
  return engine_.submit(std::move(options), std::move(on_event));
}

void EngineBackend::cancel(RequestId id) { engine_.cancel(id); }

EngineStats EngineBackend::stats() const { return engine_.stats(); }

std::vector<int32_t> EngineBackend::tokenize(std::string_view text, bool add_special) const {
  // As llama.cpp's server: BOS as the model asks, and special-token text ("<|im_start|>") parsed.
  return engine_.tokenizer().encode(text, add_special, /*parse_special=*/true);
}

namespace {

// enable_thinking=false, for templates that take it (Qwen 3's): the generation prompt ends with an
// empty thinking block, as the template writes it.
std::string with_thinking_choice(std::string prompt, const ChatTemplate& chat, const ChatRenderOptions& options,
                                 bool thinking_off) {
  if (options.enable_thinking.value_or(!thinking_off) == false && chat.source.find("enable_thinking") != std::string::npos)
    prompt += "<think>\n\n</think>\n\n";
  return prompt;
}

}  // namespace

ChatTemplateOptions EngineBackend::jinja_options(const ChatRenderOptions& render,
                                                std::span<const chat::Tool> tools) const {
  ChatTemplateOptions options;
  options.default_system_prompt = chat_.default_system_prompt;
  use_vocabulary_tokens(options, engine_.tokenizer());
  // Absent, the template's own default decides (Qwen 3 thinks unless told not to).
  if (render.enable_thinking || thinking_off_) options.kwargs["enable_thinking"] = render.enable_thinking.value_or(false);
  if (!tools.empty()) {
    options.tools = nlohmann::ordered_json::array();
    for (const auto& tool : tools) options.tools.push_back(tool.definition);
  }
  return options;
}

std::string EngineBackend::apply_chat_template(std::span<const ChatMessage> messages,
                                               const ChatRenderOptions& render) const {
  return render_chat_template(chat_, messages, jinja_options(render, {}), [&] {
    ChatTemplateOptions options;
    options.default_system_prompt = chat_.default_system_prompt;
    return with_thinking_choice(render_chat(chat_.format, messages, options), chat_, render, thinking_off_);
  });
}

std::string EngineBackend::apply_tool_template(std::span<const ChatMessage> messages, std::span<const chat::Tool> tools,
                                               const ChatRenderOptions& render) const {
  return render_chat_template(chat_, messages, jinja_options(render, tools), [&] {
    chat::ToolPromptOptions options;
    options.default_system_prompt = chat_.default_system_prompt;
    return with_thinking_choice(tools_->render(messages, tools, options), chat_, render, thinking_off_);
  });
}

std::string EngineBackend::token_piece(int32_t token) const { return engine_.tokenizer().token_to_piece(token); }

int32_t EngineBackend::n_vocab() const { return engine_.tokenizer().n_vocab(); }

int64_t EngineBackend::n_ctx() const { return engine_.n_ctx(); }

// A split model's step waits on every rank: one that runs this long means a rank died or hangs
// (the communicator ends the job at RIDGE_DIST_TIMEOUT; until then new requests get 503).
std::string EngineBackend::unavailable() const {
  if (!engine_.split_across_ranks()) return {};
  const double seconds = engine_.forward_running_seconds();
  const double limit = std::max(2.0, dist::dist_timeout_seconds() / 8);
  if (seconds < limit) return {};
  return fmt::format("a step of the model split across ranks has waited {:.0f} s: a rank is not answering", seconds);
}

}  // namespace ridge
