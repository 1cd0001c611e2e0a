#include "embed/gemma_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class SpmEmbeddingTokenizer final : public EmbeddingTokenizer {
 public:
  explicit SpmEmbeddingTokenizer(std::shared_ptr<const Vocab> vocab) : t_(std::move(vocab)) {}

  // As Hugging Face tokenizers does: special-token text in the input (<bos>, <start_of_turn>) is
  // that token; truncation cuts the text's pieces, never the specials around them.
  std::vector<int32_t> encode(std::string_view text, bool add_special, int64_t max_tokens) const override {
    std::vector<int32_t> body = t_.encode(text, /*add_special=*/false, /*parse_special=*/true);
    const bool bos = add_special && t_.add_bos(), eos = add_special && t_.add_eos();
    if (max_tokens > 0) {
      const int64_t room = std::max<int64_t>(0, max_tokens - int64_t(bos) - int64_t(eos));
      if (int64_t(body.size()) > room) body.resize(size_t(room));
    }
    std::vector<int32_t> ids;
    ids.reserve(body.size() + 2);
    if (bos) ids.push_back(t_.bos_id());
    ids.insert(ids.end(), body.begin(), body.end());
    if (eos) ids.push_back(t_.eos_id());
    return ids;
  }
  void encode_pair(std::string_view, std::string_view, int64_t, std::vector<int32_t>&,
                   std::vector<int32_t>&) const override {
    fail("no pairs: a Gemma embedding model is not a cross-encoder");
  }
  std::string decode(std::span<const int32_t> ids) const override { return t_.decode(ids); }
  int32_t n_vocab() const override { return t_.n_vocab(); }
  std::string token_text(int32_t id) const override { return t_.token_text(id); }

 private:
  Tokenizer t_;
};

// tokenizer.json's post_processor alone (the rest of the 30 MB file is skipped while parsing).
std::optional<json> post_processor(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  json j;
  try {
    j = json::parse(in, [](int depth, json::parse_event_t event, json& parsed) {
      return depth != 1 || event != json::parse_event_t::key || parsed == "post_processor";
    });
  } catch (const json::exception& e) {
    fail("{}: {}", path.string(), e.what());
  }
  if (!j.is_object() || !j.contains("post_processor")) return std::nullopt;
  return j["post_processor"];
}

// add_bos / add_eos from a TemplateProcessing "single" template: [SpecialToken?] Sequence [SpecialToken?].
void set_specials_from_template(const json& pp, const fs::path& path, Vocab& vocab) {
  if (pp.is_null()) {  // tokenizers adds nothing
    vocab.add_bos = vocab.add_eos = false;
    return;
  }
  if (!pp.is_object() || pp.value("type", "") != "TemplateProcessing" || !pp.contains("single") ||
      !pp["single"].is_array())
    fail("{}: post_processor '{}' (ridge reads a TemplateProcessing one)", path.string(),
         pp.is_object() ? pp.value("type", "") : "");
  const json& single = pp["single"];
  size_t sequence = single.size();
  for (size_t i = 0; i < single.size(); ++i)
    if (single[i].is_object() && single[i].contains("Sequence")) sequence = i;
  if (sequence == single.size() || sequence > 1 || single.size() - sequence > 2)
    fail("{}: the post-processor's template is not [special] text [special]", path.string());
  const auto special_id = [&](const json& item) {
    const json* t = item.is_object() && item.contains("SpecialToken") ? &item["SpecialToken"] : nullptr;
    const std::string name = t && t->is_object() ? t->value("id", "") : "";
    const int32_t id = vocab.find(name);
    if (id < 0) fail("{}: the post-processor adds '{}', which tokenizer.model does not have", path.string(), name);
    return id;
  };
  vocab.add_bos = sequence == 1;
  vocab.add_eos = single.size() - sequence == 2;
  if (vocab.add_bos && special_id(single[0]) != vocab.bos)
    fail("{}: the post-processor starts a text with another token than BOS {}", path.string(), vocab.bos);
  if (vocab.add_eos && special_id(single[sequence + 1]) != vocab.eos)
    fail("{}: the post-processor ends a text with another token than EOS {}", path.string(), vocab.eos);
}

}  // namespace

std::unique_ptr<EmbeddingTokenizer> load_gemma_tokenizer(const std::string& dir) {
  const fs::path model = fs::path(dir) / "tokenizer.model";
  if (!fs::exists(model)) fail("{}: no tokenizer.model (ridge reads Gemma's SentencePiece model)", dir);
  auto vocab = std::make_shared<Vocab>(load_sentencepiece_model(model.string()));
  vocab->add_bos = true;  // GemmaTokenizer's defaults, without a tokenizer.json to say otherwise
  vocab->add_eos = false;
  const fs::path tj = fs::path(dir) / "tokenizer.json";
  if (const auto pp = post_processor(tj)) set_specials_from_template(*pp, tj, *vocab);
  if ((vocab->add_bos && vocab->bos < 0) || (vocab->add_eos && vocab->eos < 0))
    fail("{}: the tokenizer adds BOS / EOS, and tokenizer.model has none", dir);
  return std::make_unique<SpmEmbeddingTokenizer>(std::move(vocab));
}

}  // namespace ridge
