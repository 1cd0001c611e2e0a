#pragma once
// POST /tokenize and POST /detokenize: vLLM's request and reply shapes, with llama.cpp's field
// names accepted too, so scripts written for either work. Text (or a chat, rendered exactly as
// /v1/chat/completions renders it) to the model's token ids, and ids back to text.
#include <string>
#include <string_view>

#include "serve/completion_backend.h"

namespace ridge {

// {"prompt" | "content": text, "add_special_tokens" | "add_special": bool (default true),
//  "return_token_strs" | "with_pieces": bool} or a chat body ({"messages": [...], "tools"...}) ->
// {"count", "max_model_len", "tokens", "token_strs"?}. Throws ApiError (400) for a bad body.
std::string tokenize_reply(const CompletionBackend& backend, std::string_view body);
// {"tokens": [ids]} -> {"prompt": text, "content": text}. Throws ApiError (400) for a bad body or
// an id outside the vocabulary.
std::string detokenize_reply(const CompletionBackend& backend, std::string_view body);

}  // namespace ridge
