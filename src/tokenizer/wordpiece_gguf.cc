// WordPiece from a llama.cpp "bert" GGUF: the converter's phantom-space token texts turned back
// into tokenizer.json's ("▁word" -> "word", "ing" -> "##ing", control tokens such as "[CLS]" stay;
// older converters also kept every "[...]" token, "[unused0]", as it was).
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/wordpiece.h"

namespace ridge {

namespace {

constexpr std::string_view kPhantomSpace = "\xE2\x96\x81";  // U+2581

// tokenizer.ggml.token_type (llama.cpp's llama_token_type).
constexpr int64_t kTypeUnknown = 2, kTypeControl = 3, kTypeUserDefined = 4;

std::string unphantom(std::string_view token, int64_t type) {
  if (token.starts_with(kPhantomSpace)) return std::string(token.substr(kPhantomSpace.size()));
  if (type == kTypeControl || (token.size() >= 2 && token.front() == '[' && token.back() == ']'))
    return std::string(token);
  return "##" + std::string(token);
}

int32_t optional_id(const gguf::GgufFile& file, std::string_view key, int32_t n_vocab) {
  const std::optional<int64_t> id = file.get_int(key);
  return id && *id >= 0 && *id < n_vocab ? static_cast<int32_t>(*id) : -1;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_gguf(const gguf::GgufFile& file) {
  const std::optional<std::string> model = file.get_string("tokenizer.ggml.model");
  if (model != "bert") fail("tokenizer: GGUF tokenizer.ggml.model is '{}'; WordPiece needs 'bert'", model.value_or(""));
  const gguf::Value* tokens_value = file.find("tokenizer.ggml.tokens");
  if (!tokens_value) fail("tokenizer: GGUF metadata has no 'tokenizer.ggml.tokens'");
  const auto& tokens = tokens_value->as_array("tokenizer.ggml.tokens");
  const gguf::Value* types_value = file.find("tokenizer.ggml.token_type");
  const std::vector<gguf::Value>* types = types_value ? &types_value->as_array("tokenizer.ggml.token_type") : nullptr;
  if (types && types->size() < tokens.size())
    fail("tokenizer: {} token types for {} tokens", types->size(), tokens.size());

  auto type_of = [&](size_t id) { return types ? (*types)[id].as_int("tokenizer.ggml.token_type") : 0; };
  std::vector<std::string> texts;
  texts.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id)
    texts.push_back(unphantom(tokens[id].as_string("tokenizer.ggml.tokens"), type_of(id)));
  WordPieceTokenizer t;
  // BertNormalizer's two options, as llama.cpp reads them: lowercase unless told, accents follow it.
  const bool lowercase = file.get_bool("tokenizer.ggml.normalizer.lowercase").value_or(true);
  const bool strip_accents = file.get_bool("tokenizer.ggml.normalizer.strip_accents").value_or(lowercase);
  t.normalizer_ = TextNormalizer::bert(true, true, strip_accents, lowercase);
  t.set_vocab(texts);
  const auto n = static_cast<int32_t>(texts.size());
  t.unk_ = optional_id(file, "tokenizer.ggml.unknown_token_id", n);
  if (t.unk_ < 0) t.unk_ = t.find_token("[UNK]");
  if (t.unk_ >= 0) t.unk_token_ = texts[t.unk_];
  t.pad_ = optional_id(file, "tokenizer.ggml.padding_token_id", n);
  if (t.pad_ < 0) t.pad_ = t.find_token("[PAD]");
  // Newer converters write [CLS] as the BOS token (cls_token_id is deprecated in llama.cpp).
  int32_t cls = optional_id(file, "tokenizer.ggml.cls_token_id", n);
  if (cls < 0) cls = optional_id(file, "tokenizer.ggml.bos_token_id", n);
  const int32_t sep = optional_id(file, "tokenizer.ggml.seperator_token_id", n);  // llama.cpp's spelling
  t.set_bert_template(cls >= 0 ? cls : t.find_token("[CLS]"), sep >= 0 ? sep : t.find_token("[SEP]"));
  // Control and unknown tokens are the special ones; user-defined ones are matched but not special.
  for (int32_t id = 0; id < n; ++id) {
    const int64_t type = type_of(id);
    const bool special =
        type == kTypeControl || type == kTypeUnknown || id == t.unk_ || id == t.cls_ || id == t.sep_ || id == t.pad_;
    if (special || type == kTypeUserDefined) t.add_token({texts[id], id, special});
  }
  return t;
}

}  // namespace ridge
