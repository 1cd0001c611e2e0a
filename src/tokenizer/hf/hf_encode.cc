// tokenizer.json's encode and decode: added tokens cut out of the raw text, each stretch between
// them normalised (then cut again at normalised added tokens), pre-tokenized and run through the
// model; the post-processor's tokens around the whole.
#include "core/error.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {

std::vector<int32_t> Pipeline::encode(std::string_view raw_text, bool add_special, bool parse_special) const {
  const std::string text = utf8::sanitize(raw_text);  // tokenizers only ever sees valid UTF-8
  std::vector<int32_t> ids;
  if (add_special) ids = post.before;
  const AddedTokenMatcher& added = parse_special ? added_all : added_nonspecial;
  auto run_model = [&](std::string piece_text, bool at_start) {
    for (const Piece& word : pre_tokenize(pre_tokenizer, {{std::move(piece_text), at_start}}))
      model.tokenize(word.text, ids);
  };
  for (const TextSpan& span : added.split(text, /*normalized=*/false)) {
    if (span.token >= 0) {
      ids.push_back(span.token);
      continue;
    }
    const std::string normalized = normalize(normalizer, std::string_view(text).substr(span.begin, span.end - span.begin));
    if (!added.has_normalized()) {
      run_model(normalized, span.begin == 0);
      continue;
    }
    for (const TextSpan& inner : added.split(normalized, /*normalized=*/true)) {
      if (inner.token >= 0) ids.push_back(inner.token);
      else run_model(normalized.substr(inner.begin, inner.end - inner.begin), span.begin == 0 && inner.begin == 0);
    }
  }
  if (add_special) ids.insert(ids.end(), post.after.begin(), post.after.end());
  return ids;
}

const std::string& Pipeline::token_text(int32_t id) const {
  if (id < 0 || id >= n_tokens()) fail("token id {} is out of range (vocabulary of {})", id, n_tokens());
  if (size_t(id) < added_content.size() && !added_content[id].empty()) return added_content[id];
  if (size_t(id) < model.token_of.size()) return model.token_of[id];
  return added_content[id];
}

std::string Pipeline::decode(const std::vector<int32_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) tokens.push_back(token_text(id));
  std::string out;
  if (!has_decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const std::string& t : decode_chain(decoder, std::move(tokens))) out += t;
  return out;
}

std::string Pipeline::piece(int32_t id) const {
  if (!has_decoder) return token_text(id);
  std::string out;
  for (const std::string& t : decode_chain(decoder, {token_text(id)}, /*stream=*/true)) out += t;
  return out;
}

}  // namespace ridge::hf
