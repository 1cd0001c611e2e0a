// tokenizer.json normalizers, run in order on the whole text of a piece.
#include "tokenizer/byte_encoding.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/spm.h"
#include "tokenizer/hf/unicode_compose.h"
#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {

namespace {

std::string to_utf8(const std::vector<uint32_t>& cpts) {
  std::string out;
  out.reserve(cpts.size());
  for (uint32_t cpt : cpts) utf8::append(out, cpt);
  return out;
}

// tokenizers' Strip: Rust's char::is_whitespace on either end.
std::string strip(std::string_view text, bool left, bool right) {
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  size_t begin = 0, end = cpts.size();
  if (left)
    while (begin < end && unicode::is_bert_whitespace(cpts[begin])) ++begin;
  if (right)
    while (end > begin && unicode::is_bert_whitespace(cpts[end - 1])) --end;
  return to_utf8({cpts.begin() + begin, cpts.begin() + end});
}

}  // namespace

std::string to_nfc(std::string_view text) {
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  unicode::to_nfd(cpts);
  unicode::compose(cpts);
  return to_utf8(cpts);
}

std::string to_nfkd(std::string_view text) {
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  unicode::to_nfkd(cpts);
  return to_utf8(cpts);
}

std::string to_nfkc(std::string_view text) {
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  unicode::to_nfkd(cpts);
  unicode::compose(cpts);
  return to_utf8(cpts);
}

std::string normalize(const std::vector<NormalizerStep>& steps, std::string_view text) {
  std::string out(text);
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::kCodepoints: out = step.codepoints.normalize(out); break;
      case NormalizerStep::kNfc: out = to_nfc(out); break;
      case NormalizerStep::kNfkc: out = to_nfkc(out); break;
      case NormalizerStep::kNfkd: out = to_nfkd(out); break;
      case NormalizerStep::kReplace: out = replace_all(out, step.from, step.to); break;
      case NormalizerStep::kPrepend:
        if (!out.empty()) out.insert(0, step.to);
        break;
      case NormalizerStep::kStrip: out = strip(out, step.left, step.right); break;
      case NormalizerStep::kByteLevel: {  // every byte as its GPT-2 code point
        std::string mapped;
        for (char c : out) mapped += byte_encoding::byte_to_text(static_cast<uint8_t>(c));
        out = std::move(mapped);
        break;
      }
    }
  }
  return out;
}

}  // namespace ridge::hf
