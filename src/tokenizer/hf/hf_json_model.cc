// tokenizer.json's model (BPE, Unigram, WordPiece) and added_tokens, and the file as a whole.
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "tokenizer/hf/hf_json.h"
#include "tokenizer/hf/hf_pipeline.h"

namespace ridge::hf {

namespace {

// Ids may leave gaps, but only so many: what a file makes us allocate stays in proportion to its size.
int64_t id_bound(size_t entries, size_t already) { return int64_t(already + 2 * entries + 1024); }
constexpr int kMaxDepth = 64;             // tokenizer.json nests a few levels; a deeper file is hostile

void set_token(Model& m, int64_t id, const std::string& text, int64_t bound) {
  if (id < 0 || id >= bound) fail("model.vocab: '{}' has id {}, out of range", text.substr(0, 40), id);
  if (size_t(id) >= m.token_of.size()) m.token_of.resize(id + 1);
  m.token_of[id] = text;
  m.id_of[text] = static_cast<int32_t>(id);  // a repeated string keeps its last id, as tokenizers
  m.longest_token = std::max(m.longest_token, text.size());
}

void load_vocab_object(const json& vocab, Model& m) {
  if (!vocab.is_object()) fail("model.vocab is not an object of token -> id");
  const int64_t bound = id_bound(vocab.size(), 0);
  for (const auto& [text, id] : vocab.items()) set_token(m, integer_of(id, "model.vocab id"), text, bound);
}

int32_t token_named(const Model& m, const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return -1;
  const std::string name = j[key].get<std::string>();
  const int32_t id = m.find(name);
  if (id < 0) fail("model.{} '{}' is not in the vocabulary", key, name);
  return id;
}

std::string string_or_empty(const json& j, const char* key) {
  return j.contains(key) && !j[key].is_null() ? j[key].get<std::string>() : std::string();
}

void load_merges(const json& merges, Model& m) {
  if (!merges.is_array()) fail("model.merges is not a list");
  const size_t prefix = m.continuing_prefix.size();
  m.merges.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& merge = merges[rank];
    std::string left, right;
    if (merge.is_string()) {  // "a b"
      const std::string s = merge.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        fail("model.merges[{}] '{}' is not two tokens separated by one space", rank, s.substr(0, 40));
      left = s.substr(0, space), right = s.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2) {  // ["a", "b"]
      left = merge[0].get<std::string>(), right = merge[1].get<std::string>();
    } else {
      fail("model.merges[{}] is neither \"a b\" nor [a, b]", rank);
    }
    const int32_t a = m.find(left), b = m.find(right);
    const std::string merged = left + (right.size() >= prefix ? right.substr(prefix) : right);
    const int32_t ab = m.find(merged);
    if (a < 0 || b < 0 || ab < 0)
      fail("model.merges[{}] names '{}', which is not in the vocabulary", rank,
           (a < 0 ? left : b < 0 ? right : merged).substr(0, 40));
    m.merges[Model::pair_key(a, b)] = {static_cast<uint32_t>(rank), ab};  // a repeated pair keeps its last rank
  }
}

void load_unigram(const json& j, Model& m) {
  const json& vocab = j.at("vocab");
  if (!vocab.is_array()) fail("model.vocab of a Unigram model is not a list of [piece, score]");
  m.score.reserve(vocab.size());
  m.min_score = vocab.empty() ? 0.0 : 1e300;
  for (size_t id = 0; id < vocab.size(); ++id) {
    const json& entry = vocab[id];
    if (!entry.is_array() || entry.size() != 2) fail("model.vocab[{}] is not [piece, score]", id);
    set_token(m, int64_t(id), entry[0].get<std::string>(), int64_t(vocab.size()));
    m.score.push_back(entry[1].get<double>());
    m.min_score = std::min(m.min_score, m.score.back());
  }
  if (j.contains("unk_id") && !j["unk_id"].is_null()) {
    const int64_t unk = integer_of(j["unk_id"], "model.unk_id");
    if (unk < 0 || unk >= int64_t(vocab.size())) fail("model.unk_id {} is outside the vocabulary of {}", unk, vocab.size());
    m.unk = static_cast<int32_t>(unk);
  }
  m.byte_fallback = j.value("byte_fallback", false);
}

// Older files leave the model's type out; tokenizers tells them apart by their fields.
std::string model_type(const json& j) {
  if (const std::string t = type_of(j); !t.empty()) return t;
  if (j.contains("merges")) return "BPE";
  if (j.contains("max_input_chars_per_word")) return "WordPiece";
  if (j.contains("vocab") && j["vocab"].is_array()) return "Unigram";
  return "";
}

void load_added_tokens(const json& added, Pipeline& p) {
  if (added.is_null()) return;
  if (!added.is_array()) fail("added_tokens is not a list");
  const int64_t bound = id_bound(added.size(), p.model.token_of.size());
  for (const json& a : added) {
    const std::string content = a.at("content").get<std::string>();
    const bool special = a.value("special", false);
    // A content the model knows keeps the model's id, whatever the entry says (as tokenizers does).
    int64_t id = p.model.find(content);
    if (id < 0) id = integer_of(a.at("id"), "added token id");
    if (id < 0 || id >= bound) fail("added token '{}' has id {}, out of range", content.substr(0, 40), id);
    if (size_t(id) >= p.added_content.size()) p.added_content.resize(id + 1);
    p.added_content[id] = content;
    const AddedToken token{content, static_cast<int32_t>(id), special, a.value("normalized", !special),
                           a.value("lstrip", false), a.value("rstrip", false), a.value("single_word", false)};
    const std::string pattern = token.normalized ? normalize(p.normalizer, content) : content;
    p.added_all.add(token, pattern);
    if (!special) p.added_nonspecial.add(token, pattern);
  }
}

// Refuses nesting deeper than kMaxDepth before parsing (a scan is much cheaper than a parser callback).
void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) fail("JSON nests deeper than {} levels", kMaxDepth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

json parse_bounded(std::string_view text) {
  check_depth(text);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail("not valid JSON ({})", e.what());
  }
}

}  // namespace

void load_model(const json& j, Model& m) {
  if (!j.is_object()) fail("'model' is not an object");
  const std::string type = model_type(j);
  if (type == "BPE") {
    m.type = ModelType::kBpe;
    if (j.contains("dropout") && !j["dropout"].is_null() && j["dropout"].get<double>() != 0.0)
      fail("a BPE model with dropout is not supported (its encoding is random)");
    load_vocab_object(j.at("vocab"), m);
    m.continuing_prefix = string_or_empty(j, "continuing_subword_prefix");
    m.end_of_word_suffix = string_or_empty(j, "end_of_word_suffix");
    m.byte_fallback = j.value("byte_fallback", false);
    m.fuse_unk = j.value("fuse_unk", false);
    m.ignore_merges = j.value("ignore_merges", false);
    m.unk = token_named(m, j, "unk_token");
    load_merges(j.at("merges"), m);
  } else if (type == "Unigram") {
    m.type = ModelType::kUnigram;
    load_unigram(j, m);
  } else if (type == "WordPiece") {
    m.type = ModelType::kWordPiece;
    load_vocab_object(j.at("vocab"), m);
    m.continuing_prefix = j.value("continuing_subword_prefix", std::string("##"));
    m.max_input_chars_per_word = count_of(j, "max_input_chars_per_word", 100);
    m.unk = token_named(m, j, "unk_token");
  } else {
    fail("model type '{}' is not supported (supported: BPE, Unigram, WordPiece)", type);
  }
}

Pipeline parse_pipeline(std::string_view text, const std::string& name) {
  Pipeline p;
  try {
    const json root = parse_bounded(text);
    if (!root.is_object()) fail("not a JSON object");
    load_model(root.at("model"), p.model);
    // The normalizer comes before the added tokens, matched in normalised form; the post-processor
    // after them, its ids checked against the whole vocabulary.
    load_text_steps(root, p);
    if (root.contains("added_tokens")) load_added_tokens(root["added_tokens"], p);
    load_post_processor(root, p);
  } catch (const json::exception& e) {
    fail("tokenizer: {}: {}", name, e.what());
  } catch (const Error& e) {
    fail("tokenizer: {}: {}", name, e.what());
  }
  return p;
}

Pipeline load_pipeline(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) fail("tokenizer: cannot read {}", path);
  if (size > (uintmax_t{1} << 30)) fail("tokenizer: {}: larger than 1 GiB", path);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  return parse_pipeline(text, path);
}

}  // namespace ridge::hf
