// Tokenizer: special-token partition, then the vocabulary's encoder on each text fragment;
// token pieces for decoding are computed once at load.
#include "tokenizer/tokenizer.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/bpe.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/byte_encoding.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace ridge {

namespace {

// Byte-level token text -> bytes. A codepoint outside the byte alphabet is shown the way
// llama.cpp shows it, so pieces agree even for malformed vocabularies.
std::string byte_level_decode(const std::string& text) {
  std::string out;
  size_t offset = 0;
  while (offset < text.size()) {
    const uint32_t cpt = utf8::decode_lenient(text, offset);
    if (auto byte = byte_encoding::codepoint_to_byte(cpt)) {
      out.push_back(static_cast<char>(*byte));
    } else {
      out += "[UNK_BYTE_0x";
      for (char c : utf8::encode(cpt)) out += fmt::format("{:02x}", static_cast<uint8_t>(c));
      out += text + "]";
    }
  }
  return out;
}

std::string piece_of(const Vocab& vocab, int32_t id) {
  const uint32_t attr = vocab.attr[id];
  const std::string& text = vocab.text[id];
  if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return text;
  if (attr & kAttrNormal) return vocab.type == VocabType::kSpm ? spm_unescape_spaces(text) : byte_level_decode(text);
  if (attr & kAttrByte) {
    // "<0xXX>"; a byte token spelled otherwise (a hostile file) renders as its text.
    const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    if (text.size() == 6 && text.starts_with("<0x") && text[5] == '>' && hex(text[3]) >= 0 && hex(text[4]) >= 0)
      return std::string(1, static_cast<char>(hex(text[3]) * 16 + hex(text[4])));
    return text;
  }
  return "";  // unused / undefined tokens render as nothing
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const gguf::GgufFile& file) {
  return Tokenizer(std::make_shared<const Vocab>(load_vocab(file)));
}

Tokenizer::Tokenizer(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {
  pieces_.reserve(vocab_->text.size());
  for (int32_t id = 0; id < vocab_->n_tokens(); ++id) pieces_.push_back(piece_of(*vocab_, id));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  if (hf_) return hf_->encode(text, add_special, parse_special);
  const Vocab& v = *vocab_;
  std::vector<int32_t> ids;
  if (add_special && v.add_bos) {
    if (v.bos < 0) fail("tokenizer: the model asks for a BOS token but has none");
    ids.push_back(v.bos);
  }
  // SPM prefixes a space to text at the start and after each special token.
  bool after_special = true;
  for (const Fragment& f : partition_special(v, text, parse_special)) {
    if (f.token >= 0) {
      ids.push_back(f.token);
      after_special = true;
      continue;
    }
    const std::string_view raw = text.substr(f.offset, f.length);
    if (v.type == VocabType::kSpm) {
      std::string prefixed = v.add_space_prefix && after_special ? " " : "";
      prefixed.append(raw);
      spm_encode(v, spm_escape_spaces(prefixed), ids);
    } else {
      bpe_encode(v, raw, ids);
    }
    after_special = false;
  }
  if (add_special && v.add_eos) {
    if (v.eos < 0) fail("tokenizer: the model asks for an EOS token but has none");
    ids.push_back(v.eos);
  }
  return ids;
}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_->n_tokens()) fail("token id {} is out of range (vocabulary of {})", id, vocab_->n_tokens());
}

std::string Tokenizer::token_to_piece(int32_t id) const {
  check_id(id);
  return pieces_[id];
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  if (hf_) return hf_->decode({ids.begin(), ids.end()});
  std::string out;
  for (int32_t id : ids) {
    check_id(id);
    out += pieces_[id];
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return vocab_->n_tokens(); }
int32_t Tokenizer::bos_id() const { return vocab_->bos; }
int32_t Tokenizer::eos_id() const { return vocab_->eos; }
bool Tokenizer::add_bos() const { return vocab_->add_bos; }
bool Tokenizer::add_eos() const { return vocab_->add_eos; }
bool Tokenizer::is_end_of_generation(int32_t id) const { return vocab_->end_of_generation.count(id) > 0; }
bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_->n_tokens() && (vocab_->attr[id] & (kAttrControl | kAttrUserDefined));
}
const std::string& Tokenizer::token_text(int32_t id) const {
  check_id(id);
  return vocab_->text[id];
}
int32_t Tokenizer::find_token(std::string_view text) const { return vocab_->find(std::string(text)); }
const std::string& Tokenizer::model_name() const { return vocab_->model_name; }
const std::string& Tokenizer::pre_name() const { return vocab_->pre_name; }

}  // namespace ridge
