#include "serve/tokenize_route.h"

#include <fmt/format.h>

#include "serve/completion_job.h"
#include "serve/openai_request.h"
#include "serve/request_fields.h"

namespace ridge {
namespace {

using request_fields::Json;
using request_fields::member;

// The first of two spellings of a boolean field that is present (vLLM's, then llama.cpp's).
bool flag(const Json& body, const char* name, const char* alias, bool otherwise) {
  for (const char* n : {name, alias}) {
    const Json* v = member(body, n);
    if (!v) continue;
    if (!v->is_boolean()) throw_bad_param(n, fmt::format("'{}' must be a boolean", n));
    return v->get<bool>();
  }
  return otherwise;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

std::string tokenize_reply(const CompletionBackend& backend, std::string_view text) {
  const Json body = request_fields::parse_body(text);
  std::vector<int32_t> tokens;
  if (member(body, "messages")) {
    // As the chat endpoint renders it: the model's template, tools and chat_template_kwargs included.
    const OpenaiRequest request = parse_openai_request(Endpoint::ChatCompletions, text);
    tokens = render_prompt(backend, request).tokens;
  } else {
    const char* field = member(body, "prompt") ? "prompt" : "content";
    const std::string prompt = request_fields::string_field(body, field, field);
    tokens = backend.tokenize(prompt, flag(body, "add_special_tokens", "add_special", true));
  }
  Json out{{"count", tokens.size()}, {"max_model_len", backend.n_ctx()}, {"tokens", tokens}};
  if (flag(body, "return_token_strs", "with_pieces", false)) {
    Json pieces = Json::array();
    for (int32_t t : tokens) pieces.push_back(backend.token_piece(t));
    out["token_strs"] = std::move(pieces);
  }
  return dump(out);
}

std::string detokenize_reply(const CompletionBackend& backend, std::string_view text) {
  const Json body = request_fields::parse_body(text);
  const Json* ids = member(body, "tokens");
  if (!ids || !ids->is_array()) throw_bad_param("tokens", "'tokens' must be an array of token ids");
  std::string out;
  for (const Json& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= backend.n_vocab())
      throw_bad_param("tokens", fmt::format("'tokens' holds {}, not a token id of this model (0..{})", id.dump(), backend.n_vocab() - 1));
    out += backend.token_piece(id.get<int32_t>());
  }
  return dump(Json{{"prompt", out}, {"content", out}});
}

}  // namespace ridge
