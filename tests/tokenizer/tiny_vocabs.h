#pragma once
// Hand-built vocabularies small enough to reason about merge by merge.
#include <memory>
#include <string>

#include "tokenizer/byte_encoding.h"
#include "tokenizer/vocab.h"

namespace ridge::testing {

// Byte-level BPE over the GPT-2 alphabet ("Ġ" = space) with a few merges, ranked in order.
inline std::shared_ptr<Vocab> tiny_bpe_vocab() {
  auto v = std::make_shared<Vocab>();
  v->type = VocabType::kBpe;
  v->pre.type = PreTokenizerType::kGpt2;
  for (int b = 0; b < 256; ++b) v->add_token(byte_encoding::byte_to_text(static_cast<uint8_t>(b)));
  const char* merges[][2] = {{"l", "o"}, {"lo", "w"}, {"Ġ", "low"}, {"e", "r"}, {"low", "er"}, {"Ġ", "l"}};
  for (size_t i = 0; i < std::size(merges); ++i) {
    v->merge_rank.emplace(merge_key(merges[i][0], merges[i][1]), static_cast<int32_t>(i));
    v->add_token(std::string(merges[i][0]) + merges[i][1]);
  }
  v->eos = v->add_token("<|endoftext|>", 0, kAttrControl);
  v->add_token("<|im_start|>", 0, kAttrControl);
  v->add_token("<|im_start|>x", 0, kAttrControl);  // longer text sharing a prefix: must win
  v->add_token("<tool>", 0, kAttrUserDefined);
  v->end_of_generation.insert(v->eos);
  v->index_special_tokens();
  return v;
}

// SentencePiece-style vocabulary: <unk> <s> </s>, 256 byte tokens, scored pieces.
inline std::shared_ptr<Vocab> tiny_spm_vocab() {
  auto v = std::make_shared<Vocab>();
  v->type = VocabType::kSpm;
  v->add_space_prefix = true;
  v->add_bos = true;
  v->unk = v->add_token("<unk>", 0, kAttrUnknown);
  v->bos = v->add_token("<s>", 0, kAttrControl);
  v->eos = v->add_token("</s>", 0, kAttrControl);
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) v->add_token(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, kAttrByte);
  const std::pair<const char*, float> pieces[] = {
      {"\xE2\x96\x81", -1}, {"h", -2},  {"e", -3},  {"l", -4},  {"o", -5},  {"w", -6},   {"r", -7},   {"d", -8},
      {"ll", -9},           {"he", -10}, {"\xE2\x96\x81h", -11}, {"\xE2\x96\x81he", -12}, {"llo", -13},
      {"\xE2\x96\x81hello", -14}, {"wor", -20}, {"wo", -21}, {"\xE2\x96\x81w", -22}, {"\xE2\x96\x81wor", -23},
      {"\xE2\x96\x81world", -24}, {"ld", -25}};
  for (const auto& [text, score] : pieces) v->add_token(text, score);
  v->end_of_generation.insert(v->eos);
  v->index_special_tokens();
  return v;
}

}  // namespace ridge::testing
