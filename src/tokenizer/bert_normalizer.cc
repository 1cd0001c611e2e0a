// BertNormalizer's steps and BertPreTokenizer's split, over the generated character tables.
#include "tokenizer/bert_normalizer.h"

#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"

namespace ridge {

namespace {

void clean_text(std::vector<uint32_t>& cpts) {
  size_t n = 0;
  for (uint32_t cpt : cpts) {
    // The control check comes first: U+000B, U+000C and U+0085 are both, and are dropped.
    if (cpt == 0 || cpt == utf8::kReplacement || unicode::is_bert_control(cpt)) continue;
    cpts[n++] = unicode::is_bert_whitespace(cpt) ? ' ' : cpt;
  }
  cpts.resize(n);
}

void pad_cjk(std::vector<uint32_t>& cpts) {
  std::vector<uint32_t> out;
  out.reserve(cpts.size());
  for (uint32_t cpt : cpts) {
    if (unicode::is_cjk_ideograph(cpt)) {
      out.insert(out.end(), {' ', cpt, ' '});
    } else {
      out.push_back(cpt);
    }
  }
  cpts.swap(out);
}

template <typename Drop>
void drop_if(std::vector<uint32_t>& cpts, Drop drop) {
  size_t n = 0;
  for (uint32_t cpt : cpts)
    if (!drop(cpt)) cpts[n++] = cpt;
  cpts.resize(n);
}

void lowercase(std::vector<uint32_t>& cpts) {
  std::vector<uint32_t> out;
  out.reserve(cpts.size());
  for (uint32_t cpt : cpts) {
    const unicode::Lowercase lower = unicode::to_lowercase(cpt);
    out.insert(out.end(), lower.cpt, lower.cpt + lower.size);
  }
  cpts.swap(out);
}

}  // namespace

TextNormalizer TextNormalizer::bert(bool clean, bool pad, bool strip_accents, bool lower) {
  TextNormalizer n;
  if (clean) n.steps.push_back(NormalizeStep::kCleanText);
  if (pad) n.steps.push_back(NormalizeStep::kPadCjk);
  if (strip_accents) n.steps.insert(n.steps.end(), {NormalizeStep::kNfd, NormalizeStep::kStripNonspacing});
  if (lower) n.steps.push_back(NormalizeStep::kLowercase);
  return n;
}

void TextNormalizer::apply(std::vector<uint32_t>& cpts) const {
  for (NormalizeStep step : steps) {
    switch (step) {
      case NormalizeStep::kCleanText: clean_text(cpts); break;
      case NormalizeStep::kPadCjk: pad_cjk(cpts); break;
      case NormalizeStep::kNfd: unicode::to_nfd(cpts); break;
      case NormalizeStep::kStripNonspacing: drop_if(cpts, unicode::is_nonspacing_mark); break;
      case NormalizeStep::kStripCombining: drop_if(cpts, unicode::is_combining_mark); break;
      case NormalizeStep::kLowercase: lowercase(cpts); break;
    }
  }
}

std::string TextNormalizer::normalize(std::string_view text) const {
  // Strict decoding: a surrogate or overlong form is U+FFFD here, never a code point to re-encode.
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(utf8::sanitize(text));
  apply(cpts);
  std::string out;
  out.reserve(cpts.size());
  for (uint32_t cpt : cpts) utf8::append(out, cpt);
  return out;
}

std::vector<std::string> WordSplitter::split(std::string_view normalized) const {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  size_t offset = 0;
  while (offset < normalized.size()) {
    const size_t begin = offset;
    const uint32_t cpt = utf8::decode_lenient(normalized, offset);
    const std::string_view bytes = normalized.substr(begin, offset - begin);
    if (split_whitespace && unicode::is_bert_whitespace(cpt)) {
      flush();
    } else if (isolate_punctuation && unicode::is_bert_punctuation(cpt)) {
      flush();
      words.emplace_back(bytes);
    } else {
      word.append(bytes);
    }
  }
  flush();
  return words;
}

}  // namespace ridge
