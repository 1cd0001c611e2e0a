#pragma once
// What the HTTP server needs from whatever generates tokens: submit and cancel requests, read the
// counters, and turn text into the model's tokens. The server is written against this interface
// only, so it is tested with a scripted fake and runs on ridge::Engine through EngineBackend.
//
// The request and event types are the engine's own (engine/engine.h: RequestOptions, TokenEvent,
// SubmitError); nothing of the Engine class itself is used here.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reasoning.h"
#include "chat/tool_format.h"
#include "engine/engine.h"
#include "grammar/compiled_grammar.h"
#include "engine/engine_stats.h"
#include "grammar/grammar_spec.h"
#include "tokenizer/chat_template.h"

namespace ridge {

// Per-request choices that change how a conversation is rendered (chat_template_kwargs).
struct ChatRenderOptions {
  std::optional<bool> enable_thinking;  // false: a thinking model's template closes the thinking at once
};

class CompletionBackend {
 public:
  virtual ~CompletionBackend() = default;

  // Queues a request; `on_event` runs on the backend's thread, once per token, the last event
  // with finish != None. It must be quick and must not call back into the backend.
  // Throws SubmitError (BadRequest, ContextExceeded, QueueFull).
  virtual RequestId submit(RequestOptions options, EventCallback on_event) = 0;
  // Ends a request early; its last event then has finish == Abort. Unknown ids are ignored.
  virtual void cancel(RequestId id) = 0;
  virtual EngineStats stats() const = 0;

  // Prompt text to token ids as the model expects it: special-token text parsed, and with
  // add_special BOS / EOS added as the model asks.
  virtual std::vector<int32_t> tokenize(std::string_view text, bool add_special) const = 0;
  // Chat messages to prompt text, through the model's (or the --chat-template) format, ending
  // with the header of the assistant's turn.
  virtual std::string apply_chat_template(std::span<const ChatMessage> messages, const ChatRenderOptions& options) const = 0;
  // How this model is offered tools and writes calls (its chat template's tool format); nullptr
  // when it has none, and then requests with tools are refused.
  virtual const chat::ToolFormat* tool_format() const { return nullptr; }
  // A conversation that speaks of tools, rendered by tool_format() (which must exist).
  virtual std::string apply_tool_template(std::span<const ChatMessage> messages, std::span<const chat::Tool> tools,
                                          const ChatRenderOptions& options) const {
    (void)messages, (void)tools, (void)options;
    return {};
  }
  // A thinking model's tags, when its output is split into reasoning and content (the server's
  // --reasoning-format separate); nullptr otherwise.
  virtual const chat::ReasoningTags* reasoning_tags() const { return nullptr; }
  // The tags as token ids, the tokens a spent budget appends, and the server's default budget
  // (-1: none); nullopt when the tags are not single tokens (no budget can be enforced then).
  virtual std::optional<ThinkingGate> thinking_gate() const { return std::nullopt; }
  // The bytes of one token (for logprobs); may be a fragment of a UTF-8 character.
  virtual std::string token_piece(int32_t token) const = 0;
  virtual int32_t n_vocab() const = 0;
  virtual int64_t n_ctx() const = 0;  // prompt + completion tokens of one request, at most
  virtual std::string model_id() const = 0;  // the name clients pass as "model"
  // Why the backend cannot serve now (a rank of a split model stopped answering), or "" when it can.
  virtual std::string unavailable() const { return {}; }
  // A structured-output spec compiled for this backend's vocabulary (cached by spec). Throws
  // grammar::GrammarError for a bad or unsupported one.
  virtual std::shared_ptr<const grammar::CompiledGrammar> compile_grammar(const grammar::GrammarSpec&) {
    throw grammar::GrammarError("structured output is not supported by this backend");
  }
};

}  // namespace ridge
