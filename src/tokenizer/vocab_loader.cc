// Vocabulary from GGUF metadata, with llama.cpp's defaults and its rules for which tokens are
// special and which end generation (many files only say so through the token's text).
#include <algorithm>
#include <array>
#include <cctype>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/vocab.h"

namespace ridge {

namespace {

// llama.cpp reads vocabulary strings as C strings: a NUL byte ends them.
std::string c_string(const std::string& s) { return s.substr(0, s.find('\0')); }

const std::vector<gguf::Value>& required_array(const gguf::GgufFile& file, std::string_view key) {
  const gguf::Value* v = file.find(key);
  if (!v) fail("tokenizer: GGUF metadata has no '{}'", key);
  return v->as_array(key);
}

void load_merges(const gguf::GgufFile& file, Vocab& vocab) {
  const auto& merges = required_array(file, "tokenizer.ggml.merges");
  vocab.merge_rank.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string merge = c_string(merges[i].as_string("tokenizer.ggml.merges"));
    // Split at the first space after the first character (a token may itself be a space).
    const size_t space = merge.find(' ', 1);
    std::string_view left, right;
    if (space != std::string::npos) {
      left = std::string_view(merge).substr(0, space);
      right = std::string_view(merge).substr(space + 1);
    }
    vocab.merge_rank.emplace(merge_key(left, right), static_cast<int32_t>(i));  // first rank wins
  }
}

void load_tokens(const gguf::GgufFile& file, Vocab& vocab) {
  const auto& tokens = required_array(file, "tokenizer.ggml.tokens");
  const size_t n = tokens.size();
  const std::vector<gguf::Value>* scores = nullptr;
  if (file.find("tokenizer.ggml.scores")) scores = &required_array(file, "tokenizer.ggml.scores");
  const std::vector<gguf::Value>* types = nullptr;
  if (file.find("tokenizer.ggml.token_type")) types = &required_array(file, "tokenizer.ggml.token_type");
  if (scores && scores->size() < n) fail("tokenizer: {} scores for {} tokens", scores->size(), n);
  if (types && types->size() < n) fail("tokenizer: {} token types for {} tokens", types->size(), n);

  vocab.text.resize(n);
  vocab.score.assign(n, 0.0f);
  vocab.attr.assign(n, kAttrNormal);
  vocab.id_of.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string word = c_string(tokens[i].as_string("tokenizer.ggml.tokens"));
    if (word.empty()) word = "[EMPTY_" + std::to_string(i) + "]";
    vocab.id_of[word] = static_cast<int32_t>(i);
    vocab.text[i] = std::move(word);
    if (scores) vocab.score[i] = static_cast<float>((*scores)[i].as_double("tokenizer.ggml.scores"));
    if (types) vocab.attr[i] = token_type_attr((*types)[i].as_int("tokenizer.ggml.token_type"));
  }
}

// Special ids from metadata; an id outside the vocabulary keeps the default.
void load_special_ids(const gguf::GgufFile& file, Vocab& vocab, int32_t& fim_pad, int32_t& fim_rep, int32_t& fim_sep) {
  const std::array<std::pair<const char*, int32_t*>, 9> keys = {{
      {"tokenizer.ggml.bos_token_id", &vocab.bos},
      {"tokenizer.ggml.eos_token_id", &vocab.eos},
      {"tokenizer.ggml.eot_token_id", &vocab.eot},
      {"tokenizer.ggml.eom_token_id", &vocab.eom},
      {"tokenizer.ggml.unknown_token_id", &vocab.unk},
      {"tokenizer.ggml.padding_token_id", &vocab.pad},
      {"tokenizer.ggml.fim_pad_token_id", &fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &fim_rep},
      {"tokenizer.ggml.fim_sep_token_id", &fim_sep},
  }};
  for (const auto& [key, id] : keys) {
    if (*id >= vocab.n_tokens()) *id = -1;
    if (auto v = file.get_int(key); v && *v >= 0 && *v < vocab.n_tokens()) *id = static_cast<int32_t>(*v);
  }
}

bool any_of_texts(const std::string& s, std::initializer_list<std::string_view> texts) {
  return std::find(texts.begin(), texts.end(), s) != texts.end();
}

// Texts llama.cpp recognises as end-of-turn / end-of-generation tokens.
void detect_end_of_generation(Vocab& vocab, int32_t fim_pad, int32_t fim_rep, int32_t fim_sep) {
  auto& eog = vocab.end_of_generation;
  const int32_t n = vocab.n_tokens();
  auto find_first = [&](std::initializer_list<std::string_view> texts) {
    for (std::string_view t : texts)
      if (int32_t id = vocab.find(std::string(t)); id >= 0) return id;
    return int32_t{-1};
  };
  auto make_control = [&](int32_t id) {
    if (id >= 0) vocab.attr[id] |= kAttrControl;
  };
  if (vocab.eot < 0) {
    vocab.eot = find_first({"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                            "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"});
    make_control(vocab.eot);
  }
  if (vocab.eom < 0) make_control(vocab.eom = find_first({"<|eom_id|>"}));
  if (fim_pad < 0) make_control(fim_pad = find_first({"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}));
  if (fim_rep < 0)
    make_control(fim_rep = find_first({"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}));
  if (fim_sep < 0) make_control(fim_sep = find_first({"<|file_sep|>"}));
  // Fill-in-the-middle markers are control tokens even where the file says otherwise.
  make_control(find_first({"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                           "<|code_prefix|>", "<|prefix|>"}));
  make_control(find_first({"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                           "<|code_suffix|>", "<|suffix|>"}));
  make_control(find_first({"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                           "<|code_middle|>", "<|middle|>"}));
  for (int32_t id : {fim_pad, fim_rep, fim_sep})
    if (id >= 0) eog.insert(id);
  for (int32_t id = 0; id < n; ++id) {
    if (any_of_texts(vocab.text[id], {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
                                      "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
                                      "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
                                      "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["})) {
      eog.insert(id);
      vocab.attr[id] |= kAttrControl;
    }
    // gpt-oss: these structure tokens are always rendered.
    if (any_of_texts(vocab.text[id], {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}))
      vocab.attr[id] = kAttrUserDefined;
  }
  for (int32_t id : {vocab.eos, vocab.eot, vocab.eom})
    if (id >= 0) eog.insert(id);
  // Harmony-style vocabularies end turns with <|return|>/<|call|>; there <|end|> is not EOG.
  const int32_t end_id = vocab.find("<|end|>");
  auto in_eog = [&](const char* t) { int32_t id = vocab.find(t); return id >= 0 && eog.count(id); };
  if (end_id >= 0 && eog.count(end_id) &&
      ((in_eog("<|return|>") && (in_eog("<|call|>") || in_eog("<|calls|>"))) || (in_eog("<|calls|>") && in_eog("<|flush|>")))) {
    eog.erase(end_id);
    vocab.attr[end_id] = kAttrUserDefined;
  }
  const int32_t s_id = vocab.find("</s>");
  if (s_id >= 0 && eog.count(s_id) && (in_eog("<|tool_response>") || in_eog("<|plamo:eos|>"))) {
    eog.erase(s_id);
    vocab.attr[s_id] = kAttrNormal;
  }
}

void collect_special_tokens(const gguf::GgufFile& file, Vocab& vocab) {
  vocab.index_special_tokens();
  // Phi-3 files: special tokens swallow the whitespace after them (as llama.cpp sets by model name).
  std::string name = file.get_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (int32_t id : vocab.special_longest_first) vocab.attr[id] |= kAttrRstrip;
    if (int32_t id = vocab.find("</s>"); id >= 0) vocab.attr[id] |= kAttrRstrip;
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"})
      if (int32_t id = vocab.find(t); id >= 0) vocab.attr[id] &= ~kAttrRstrip;
  }
}

}  // namespace

std::string merge_key(std::string_view left, std::string_view right) {
  std::string key = std::to_string(left.size());
  key += ':';
  key.append(left);
  key.append(right);
  return key;
}

int32_t Vocab::add_token(std::string token_text, float token_score, uint32_t token_attr) {
  const auto id = static_cast<int32_t>(text.size());
  id_of[token_text] = id;
  text.push_back(std::move(token_text));
  score.push_back(token_score);
  attr.push_back(token_attr);
  return id;
}

void Vocab::index_special_tokens() {
  special_longest_first.clear();
  for (int32_t id = 0; id < n_tokens(); ++id)
    if (attr[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) special_longest_first.push_back(id);
  std::stable_sort(special_longest_first.begin(), special_longest_first.end(),
                   [&](int32_t a, int32_t b) { return text[a].size() > text[b].size(); });
}

int32_t Vocab::rank(std::string_view left, std::string_view right) const {
  auto it = merge_rank.find(merge_key(left, right));
  return it == merge_rank.end() ? -1 : it->second;
}

int32_t Vocab::byte_token(uint8_t byte) const {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const char name[] = {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>', 0};
  if (int32_t id = find(name); id >= 0) return id;
  return find(std::string(1, static_cast<char>(byte)));
}

Vocab load_vocab(const gguf::GgufFile& file) {
  Vocab vocab;
  const auto model = file.get_string("tokenizer.ggml.model");
  if (!model) fail("tokenizer: GGUF metadata has no 'tokenizer.ggml.model'");
  vocab.model_name = *model;
  vocab.pre_name = file.get_string("tokenizer.ggml.pre").value_or("");
  if (vocab.model_name == "llama") {
    vocab.type = VocabType::kSpm;
    vocab.bos = 1, vocab.eos = 2, vocab.unk = 0;
    vocab.add_space_prefix = true, vocab.add_bos = true;
  } else if (vocab.model_name == "gpt2") {
    vocab.type = VocabType::kBpe;
    const auto pre = pre_tokenizer_for(vocab.pre_name);
    if (!pre)
      fail("tokenizer: pre-tokenizer '{}' is not supported (supported: default, gpt-2, llama-bpe/llama3, qwen2, smollm and "
           "their aliases)", vocab.pre_name);
    vocab.pre = *pre;
    vocab.bos = 11, vocab.eos = 11;
    vocab.add_bos = pre->add_bos;
    load_merges(file, vocab);
  } else {
    fail("tokenizer: tokenizer model '{}' is not supported (supported: gpt2 byte-level BPE, llama SentencePiece)",
         vocab.model_name);
  }
  if (auto v = file.get_bool("tokenizer.ggml.add_space_prefix")) vocab.add_space_prefix = *v;
  load_tokens(file, vocab);
  int32_t fim_pad = -1, fim_rep = -1, fim_sep = -1;
  load_special_ids(file, vocab, fim_pad, fim_rep, fim_sep);
  if (auto v = file.get_bool("tokenizer.ggml.add_bos_token")) vocab.add_bos = *v;
  if (auto v = file.get_bool("tokenizer.ggml.add_eos_token")) vocab.add_eos = *v;
  detect_end_of_generation(vocab, fim_pad, fim_rep, fim_sep);
  collect_special_tokens(file, vocab);
  return vocab;
}

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
uint32_t token_type_attr(int64_t type) {
  switch (type) {
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return 0;
  }
}

}  // namespace ridge
