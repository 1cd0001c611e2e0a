// WordPiece from tokenizer.json (the parts a BERT-family tokenizer uses) and from vocab.txt.
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/wordpiece.h"

namespace ridge {

namespace {

using nlohmann::json;

std::string type_of(const json& j) { return j.is_object() ? j.value("type", std::string()) : std::string(); }

void add_normalizer_steps(const json& j, std::vector<NormalizeStep>& steps) {
  if (j.is_null()) return;
  const std::string type = type_of(j);
  if (type == "BertNormalizer") {
    const bool lowercase = j.value("lowercase", true);
    // strip_accents: null follows lowercase (BERT's uncased models strip, cased ones keep accents).
    const bool strip =
        j.contains("strip_accents") && !j["strip_accents"].is_null() ? j["strip_accents"].get<bool>() : lowercase;
    const TextNormalizer bert =
        TextNormalizer::bert(j.value("clean_text", true), j.value("handle_chinese_chars", true), strip, lowercase);
    steps.insert(steps.end(), bert.steps.begin(), bert.steps.end());
  } else if (type == "Sequence") {
    for (const json& inner : j.at("normalizers")) add_normalizer_steps(inner, steps);
  } else if (type == "NFD") {
    steps.push_back(NormalizeStep::kNfd);
  } else if (type == "Lowercase") {
    steps.push_back(NormalizeStep::kLowercase);
  } else if (type == "StripAccents") {
    steps.push_back(NormalizeStep::kStripCombining);
  } else {
    fail("normalizer '{}' is not supported for WordPiece (BertNormalizer, NFD, Lowercase, StripAccents, Sequence)",
         type.empty() ? j.dump() : type);
  }
}

void add_pre_tokenizer(const json& j, WordSplitter& splitter) {
  if (j.is_null()) return;
  const std::string type = type_of(j);
  if (type == "BertPreTokenizer") {
    splitter.split_whitespace = splitter.isolate_punctuation = true;
  } else if (type == "WhitespaceSplit") {
    splitter.split_whitespace = true;
  } else if (type == "Punctuation" && j.value("behavior", std::string("Isolated")) == "Isolated") {
    splitter.isolate_punctuation = true;
  } else if (type == "Sequence") {
    for (const json& inner : j.at("pretokenizers")) add_pre_tokenizer(inner, splitter);
  } else {
    fail(
        "pre_tokenizer '{}' is not supported for WordPiece (BertPreTokenizer, WhitespaceSplit, Punctuation "
        "(Isolated), Sequence)",
        type.empty() ? j.dump() : type);
  }
}

std::vector<TemplateItem> parse_template(const json& items, const json& specials) {
  std::vector<TemplateItem> out;
  for (const json& item : items) {
    if (item.contains("Sequence")) {
      const std::string which = item["Sequence"].at("id").get<std::string>();
      out.push_back(
          {which == "A" ? TemplateItem::kSequenceA : TemplateItem::kSequenceB, item["Sequence"].value("type_id", 0)});
    } else {
      const json& special = item.at("SpecialToken");
      const std::string name = special.at("id").get<std::string>();
      if (!specials.contains(name)) fail("post_processor: template token '{}' is not in its special_tokens", name);
      for (const json& id : specials[name].at("ids")) out.push_back({id.get<int32_t>(), special.value("type_id", 0)});
    }
  }
  return out;
}

std::vector<std::string> vocab_by_id(const json& vocab) {
  std::vector<std::string> tokens;
  for (const auto& [text, id_json] : vocab.items()) {
    const auto id = id_json.get<int64_t>();
    if (id < 0 || id > (1 << 24)) fail("model.vocab: '{}' has id {}", text, id);
    if (static_cast<size_t>(id) >= tokens.size()) tokens.resize(id + 1);
    tokens[id] = text;
  }
  return tokens;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_tokenizer_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("tokenizer: cannot open {}", path);
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) fail("tokenizer: {} is not a JSON object", path);
  WordPieceTokenizer t;
  try {
    const json& model = j.at("model");
    // Older files leave the type out; WordPiece is the model with max_input_chars_per_word.
    const std::string model_type =
        model.contains("type") || !model.contains("max_input_chars_per_word") ? type_of(model) : "WordPiece";
    if (model_type != "WordPiece")
      fail("tokenizer: {} has a '{}' model; only WordPiece is supported here", path, model_type);
    t.set_vocab(vocab_by_id(model.at("vocab")));
    t.unk_token_ = model.value("unk_token", std::string("[UNK]"));
    t.prefix_ = model.value("continuing_subword_prefix", std::string("##"));
    t.max_chars_ = model.value("max_input_chars_per_word", 100);
    if (auto it = t.model_ids_.find(t.unk_token_); it != t.model_ids_.end()) t.unk_ = it->second;

    t.splitter_ = {false, false};
    add_normalizer_steps(j.value("normalizer", json()), t.normalizer_.steps);
    add_pre_tokenizer(j.value("pre_tokenizer", json()), t.splitter_);
    for (const json& a : j.value("added_tokens", json::array())) {
      // A content the model knows keeps the model's id, whatever the entry says (as tokenizers does).
      const std::string content = a.at("content").get<std::string>();
      const auto known = t.model_ids_.find(content);
      const int32_t id = known != t.model_ids_.end() ? known->second : a.at("id").get<int32_t>();
      t.add_token({content, id, a.value("special", false), a.value("normalized", !a.value("special", false)),
                   a.value("lstrip", false), a.value("rstrip", false), a.value("single_word", false)});
    }

    const json post = j.value("post_processor", json());
    const std::string post_type = type_of(post);
    if (post_type == "TemplateProcessing") {
      t.single_ = parse_template(post.at("single"), post.at("special_tokens"));
      t.pair_ = parse_template(post.at("pair"), post.at("special_tokens"));
      // [CLS] and [SEP] are where the single template puts its first and last special token.
      if (!t.single_.empty() && t.single_.front().id >= 0) t.cls_ = t.single_.front().id;
      if (!t.single_.empty() && t.single_.back().id >= 0) t.sep_ = t.single_.back().id;
    } else if (post_type == "BertProcessing") {
      t.set_bert_template(post.at("cls").at(1).get<int32_t>(), post.at("sep").at(1).get<int32_t>());
    } else if (!post.is_null()) {
      fail("tokenizer: post_processor '{}' is not supported for WordPiece (TemplateProcessing, BertProcessing)",
           post_type);
    }
    if (t.cls_ < 0) t.cls_ = t.find_token("[CLS]");
    if (t.sep_ < 0) t.sep_ = t.find_token("[SEP]");

    const json decoder = j.value("decoder", json());
    if (type_of(decoder) == "WordPiece") {
      t.decoder_prefix_ = decoder.value("prefix", std::string("##"));
      t.decoder_cleanup_ = decoder.value("cleanup", true);
    } else if (decoder.is_null()) {
      t.decoder_wordpiece_ = false;
    } else {
      fail("tokenizer: decoder '{}' is not supported for WordPiece", type_of(decoder));
    }

    const json padding = j.value("padding", json());
    t.pad_ =
        padding.is_object() && padding.contains("pad_id") ? padding["pad_id"].get<int32_t>() : t.find_token("[PAD]");
    const json truncation = j.value("truncation", json());
    if (truncation.is_object()) t.default_max_tokens_ = truncation.value("max_length", int64_t{0});
    // Every id the templates add must be a token: an encoder would otherwise read past its embeddings.
    for (const auto* items : {&t.single_, &t.pair_})
      for (const TemplateItem& item : *items)
        if (item.id >= t.n_vocab()) fail("the post_processor adds token id {}, outside the vocabulary of {}", item.id, t.n_vocab());
    for (int32_t id : {t.cls_, t.sep_, t.pad_})
      if (id >= t.n_vocab()) fail("special token id {} is outside the vocabulary of {}", id, t.n_vocab());
  } catch (const json::exception& e) {
    fail("tokenizer: {}: {}", path, e.what());
  } catch (const Error& e) {
    if (std::string_view(e.what()).find(path) != std::string_view::npos) throw;
    fail("tokenizer: {}: {}", path, e.what());
  }
  return t;
}

WordPieceTokenizer WordPieceTokenizer::from_vocab_txt(const std::string& path, const WordPieceConfig& config) {
  std::ifstream in(path);
  if (!in) fail("tokenizer: cannot open {}", path);
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    line.erase(line.find_last_not_of(" \t\r\n\v\f") + 1);  // tokenizers trims the line's end
    tokens.push_back(std::move(line));
  }
  if (tokens.empty()) fail("tokenizer: {} holds no tokens", path);
  WordPieceTokenizer t;
  t.set_vocab(std::move(tokens));
  t.normalizer_ =
      TextNormalizer::bert(config.clean_text, config.handle_chinese_chars, config.strip_accents, config.lowercase);
  t.unk_token_ = config.unk_token;
  t.prefix_ = t.decoder_prefix_ = config.continuing_prefix;
  t.max_chars_ = config.max_input_chars_per_word;
  for (const std::string& name :
       {std::string("[PAD]"), config.unk_token, std::string("[CLS]"), std::string("[SEP]"), std::string("[MASK]")}) {
    if (const int32_t id = t.find_token(name); id >= 0) t.add_token({name, id, /*special=*/true});
  }
  t.unk_ = t.find_token(config.unk_token);
  t.pad_ = t.find_token("[PAD]");
  t.set_bert_template(t.find_token("[CLS]"), t.find_token("[SEP]"));
  return t;
}

}  // namespace ridge
