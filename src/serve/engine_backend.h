#pragma once
// CompletionBackend over the serving engine: requests go to Engine::submit/cancel, text goes
// through the engine's tokenizer and the model's chat format.
#include <memory>
#include <string>

#include "engine/engine.h"
#include "grammar/grammar_cache.h"
#include "serve/completion_backend.h"
#include "tokenizer/chat_template.h"

namespace ridge {

class EngineBackend : public CompletionBackend {
 public:
  // `engine` (and the model and tokenizer it holds) must outlive the backend.
  // `tools`: the model's tool format (chat::select_tool_format), nullptr when it has none.
  // `reasoning`: the model's thinking tags when its output is split (nullopt: left in content).
  // `reasoning_budget`: the default thinking budget (-1: none; 0: thinking switched off where the
  // template allows it, as llama.cpp's --reasoning-budget 0).
  EngineBackend(Engine& engine, ChatTemplate chat, std::string model_id,
                std::shared_ptr<const chat::ToolFormat> tools = nullptr,
                std::optional<chat::ReasoningTags> reasoning = std::nullopt, int32_t reasoning_budget = -1);

  RequestId submit(RequestOptions options, EventCallback on_event) override;
  void cancel(RequestId id) override;
  EngineStats stats() const override;
  std::vector<int32_t> tokenize(std::string_view text, bool add_special) const override;
  std::string apply_chat_template(std::span<const ChatMessage> messages, const ChatRenderOptions& options) const override;
  const chat::ToolFormat* tool_format() const override { return tools_.get(); }
  std::string apply_tool_template(std::span<const ChatMessage> messages, std::span<const chat::Tool> tools,
                                  const ChatRenderOptions& options) const override;
  const chat::ReasoningTags* reasoning_tags() const override { return reasoning_ ? &*reasoning_ : nullptr; }
  std::optional<ThinkingGate> thinking_gate() const override { return gate_; }
  std::string token_piece(int32_t token) const override;
  int32_t n_vocab() const override;
  int64_t n_ctx() const override;
  std::string model_id() const override { return model_id_; }
  std::string unavailable() const override;
  std::shared_ptr<const grammar::CompiledGrammar> compile_grammar(const grammar::GrammarSpec& spec) override;
  grammar::GrammarCache& grammar_cache() { return *grammars_; }

 private:
  // What a Jinja template is rendered with: the vocabulary's BOS / EOS, the thinking choice as
  // enable_thinking, and `tools` (empty: none).
  ChatTemplateOptions jinja_options(const ChatRenderOptions& render, std::span<const chat::Tool> tools) const;
  Engine& engine_;
  ChatTemplate chat_;
  std::string model_id_;
  std::shared_ptr<const chat::ToolFormat> tools_;
  std::optional<chat::ReasoningTags> reasoning_;
  std::optional<ThinkingGate> gate_;
  bool thinking_off_ = false;  // --reasoning-budget 0
  std::unique_ptr<grammar::GrammarCache> grammars_;
};

}  // namespace ridge
