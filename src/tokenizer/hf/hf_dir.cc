// Tokenizer::from_hf_dir: tokenizer.json through hf::Pipeline, with the vocabulary's special ids and
// flags from tokenizer_config.json and the end-of-generation ids from generation_config.json.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace ridge {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A small JSON side file, or null when absent.
json read_optional_json(const fs::path& path) {
  if (!fs::exists(path)) return nullptr;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  try {
    json j = json::parse(in, [](int depth, json::parse_event_t, json&) {
      if (depth > 64) fail("JSON nests deeper than 64 levels");
      return true;
    });
    if (!j.is_object()) fail("not a JSON object");
    return j;
  } catch (const json::exception& e) {
    fail("{}: not valid JSON ({})", path.string(), e.what());
  } catch (const Error& e) {
    fail("{}: {}", path.string(), e.what());
  }
}

// bos_token / eos_token / ...: a string, or an AddedToken object {"content": ...}.
std::string token_name(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return "";
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

std::string chat_template_of(const json& config, const fs::path& dir) {
  if (config.is_object() && config.contains("chat_template")) {
    const json& t = config["chat_template"];
    if (t.is_string()) return t.get<std::string>();
    if (t.is_array()) {  // [{"name": ..., "template": ...}]: the one named "default"
      for (const json& named : t)
        if (named.is_object() && named.contains("name") && named["name"] == "default" && named.contains("template") &&
            named["template"].is_string())
          return named["template"].get<std::string>();
      return "";
    }
    fail("{}: chat_template is neither a string nor a list of named templates", (dir / "tokenizer_config.json").string());
  }
  std::ifstream jinja(dir / "chat_template.jinja", std::ios::binary);  // where newer transformers save it
  return jinja ? std::string(std::istreambuf_iterator<char>(jinja), {}) : "";
}

std::vector<int64_t> int_or_list(const json& v) {
  if (v.is_number_integer()) return {v.get<int64_t>()};
  std::vector<int64_t> out;
  if (v.is_array())
    for (const json& e : v)
      if (e.is_number_integer()) out.push_back(e.get<int64_t>());
  return out;
}

Vocab vocab_of(const hf::Pipeline& p) {
  Vocab v;
  v.type = VocabType::kBpe;
  v.model_name = p.model.type == hf::ModelType::kBpe ? "BPE" : p.model.type == hf::ModelType::kUnigram ? "Unigram" : "WordPiece";
  v.pre_name = "tokenizer.json";
  const int32_t n = p.n_tokens();
  for (int32_t id = 0; id < n; ++id) {
    const std::string& text = p.token_text(id);
    uint32_t attr = text.empty() ? kAttrUnused : kAttrNormal;
    if (size_t(id) < p.added_content.size() && !p.added_content[id].empty()) attr = kAttrUserDefined;
    if (p.model.byte_fallback && text.size() == 6 && text.starts_with("<0x") && text.ends_with('>')) attr = kAttrByte;
    if (id == p.model.unk) attr = kAttrUnknown;
    v.text.push_back(text);
    v.score.push_back(size_t(id) < p.model.score.size() ? float(p.model.score[id]) : 0.0f);
    v.attr.push_back(attr);
    if (!text.empty()) v.id_of.emplace(text, id);
  }
  for (const AddedToken& t : p.added_all.tokens())
    if (t.special) v.attr[t.id] = kAttrControl;
  return v;
}

}  // namespace

Tokenizer Tokenizer::from_hf_dir(const std::string& dir_name) {
  const fs::path dir(dir_name);
  const fs::path tokenizer_json = dir / "tokenizer.json";
  if (!fs::exists(tokenizer_json)) fail("{}: no tokenizer.json", dir_name);
  auto pipeline = std::make_shared<hf::Pipeline>(hf::load_pipeline(tokenizer_json.string()));
  const json config = read_optional_json(dir / "tokenizer_config.json");
  const json generation = read_optional_json(dir / "generation_config.json");

  auto vocab = std::make_shared<Vocab>(vocab_of(*pipeline));
  auto special = [&](const char* key) { return vocab->find(token_name(config, key)); };
  vocab->bos = special("bos_token");
  vocab->eos = special("eos_token");
  vocab->unk = pipeline->model.unk >= 0 ? pipeline->model.unk : special("unk_token");
  vocab->pad = special("pad_token");
  // What encode(add_special) adds is the post-processor's to say (as tokenizers does); the flags
  // report it, so they agree with encode even where tokenizer_config.json says otherwise.
  const auto& before = pipeline->post.before;
  const auto& after = pipeline->post.after;
  vocab->add_bos = !before.empty() && (vocab->bos < 0 || before.front() == vocab->bos);
  vocab->add_eos = !after.empty() && (vocab->eos < 0 || after.back() == vocab->eos);
  if (vocab->bos < 0 && !before.empty()) vocab->bos = before.front();
  if (vocab->eos < 0 && !after.empty()) vocab->eos = after.back();
  // Generation ends at the tokenizer's EOS and at every eos_token_id of generation_config.json, as vLLM stops.
  if (vocab->eos >= 0) vocab->end_of_generation.insert(vocab->eos);
  if (generation.is_object() && generation.contains("eos_token_id")) {
    for (int64_t id : int_or_list(generation["eos_token_id"])) {
      if (id < 0 || id >= vocab->n_tokens())
        fail("{}: eos_token_id {} is outside the vocabulary of {}", (dir / "generation_config.json").string(), id,
             vocab->n_tokens());
      vocab->end_of_generation.insert(static_cast<int32_t>(id));
    }
  }
  vocab->index_special_tokens();

  Tokenizer t(vocab);
  for (int32_t id = 0; id < vocab->n_tokens(); ++id) t.pieces_[id] = pipeline->piece(id);
  t.hf_ = std::move(pipeline);
  t.chat_template_ = chat_template_of(config, dir);
  if (config.is_object() && config.contains("model_max_length") && config["model_max_length"].is_number()) {
    const double max_length = config["model_max_length"].get<double>();
    // transformers writes 1e30 for "no limit".
    if (max_length > 0 && max_length < 1e15) t.model_max_length_ = static_cast<int64_t>(max_length);
  }
  return t;
}

}  // namespace ridge
