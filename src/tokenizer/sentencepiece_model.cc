// ModelProto (sentencepiece_model.proto), the fields ridge reads:
//   1 pieces (repeated SentencePiece: 1 piece, 2 score, 3 type NORMAL=1 UNKNOWN=2 CONTROL=3
//     USER_DEFINED=4 UNUSED=5 BYTE=6), 2 trainer_spec (3 model_type UNIGRAM=1 BPE=2 WORD=3 CHAR=4,
//     40 unk_id, 41 bos_id, 42 eos_id, 43 pad_id), 3 normalizer_spec (1 name, 3 add_dummy_prefix,
//     4 remove_extra_whitespaces, 5 escape_whitespaces). Absent fields take the proto's defaults.
#include "tokenizer/sentencepiece_model.h"

#include <cmath>

#include "core/error.h"
#include "core/mapped_file.h"
#include "tokenizer/protobuf_wire.h"

namespace ridge {
namespace {

struct TrainerSpec {
  int32_t model_type = 1;  // UNIGRAM, the proto's default
  int32_t unk = 0, bos = 1, eos = 2, pad = -1;
};

struct NormalizerSpec {
  std::string name = "identity";  // absent: nothing to normalise
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
};

uint32_t attr_of_piece_type(int32_t type, const std::string& what) {
  const uint32_t attr = token_type_attr(type);
  if (attr == 0) fail("{}: piece type {} is not one of SentencePiece's (1..6)", what, type);
  return attr;
}

void read_piece(std::span<const uint8_t> bytes, const std::string& what, Vocab& vocab) {
  proto::WireReader r(bytes, what);
  std::string text;
  float score = 0.0f;
  int32_t type = 1;
  for (proto::Field f; r.next(f);) {
    if (f.number == 1) text = r.as_string(f);
    else if (f.number == 2) score = r.as_float(f);
    else if (f.number == 3) type = r.as_int32(f);
  }
  if (text.empty()) fail("{}: an empty piece", what);
  if (!std::isfinite(score)) fail("{}: piece '{}' has a score of {}", what, text, score);
  if (vocab.id_of.count(text))
    fail("{}: piece '{}' appears twice (ids {} and {})", what, text, vocab.id_of[text], vocab.n_tokens());
  vocab.add_token(std::move(text), score, attr_of_piece_type(type, what));
}

TrainerSpec read_trainer_spec(std::span<const uint8_t> bytes, const std::string& what) {
  proto::WireReader r(bytes, what);
  TrainerSpec t;
  for (proto::Field f; r.next(f);) {
    if (f.number == 3) t.model_type = r.as_int32(f);
    else if (f.number == 40) t.unk = r.as_int32(f);
    else if (f.number == 41) t.bos = r.as_int32(f);
    else if (f.number == 42) t.eos = r.as_int32(f);
    else if (f.number == 43) t.pad = r.as_int32(f);
  }
  return t;
}

NormalizerSpec read_normalizer_spec(std::span<const uint8_t> bytes, const std::string& what) {
  proto::WireReader r(bytes, what);
  NormalizerSpec n;
  for (proto::Field f; r.next(f);) {
    if (f.number == 1) n.name = r.as_string(f);
    else if (f.number == 3) n.add_dummy_prefix = r.as_bool(f);
    else if (f.number == 4) n.remove_extra_whitespaces = r.as_bool(f);
    else if (f.number == 5) n.escape_whitespaces = r.as_bool(f);
  }
  return n;
}

// A special id of the trainer spec: -1 (none) or a piece of the expected type.
int32_t special_id(const Vocab& vocab, int32_t id, uint32_t attr, const char* name, const std::string& origin) {
  if (id == -1) return -1;
  if (id < 0 || id >= vocab.n_tokens())
    fail("{}: {} id {} is outside the {} pieces", origin, name, id, vocab.n_tokens());
  if (!(vocab.attr[size_t(id)] & attr))
    fail("{}: {} id {} is piece '{}' of another type", origin, name, id, vocab.text[size_t(id)]);
  return id;
}

}  // namespace

Vocab parse_sentencepiece_model(std::span<const uint8_t> bytes, const std::string& origin) {
  Vocab vocab;
  vocab.type = VocabType::kSpm;
  vocab.model_name = "llama";  // GGUF's name for a SentencePiece BPE vocabulary
  TrainerSpec trainer;
  NormalizerSpec normalizer;
  proto::WireReader r(bytes, origin);
  for (proto::Field f; r.next(f);) {
    if (f.number < 1 || f.number > 3) continue;  // self-test data, denormalizer spec
    if (f.wire != proto::Wire::Bytes) fail("{}: field {} is not a message", origin, f.number);
    if (f.number == 1) read_piece(f.bytes, fmt::format("{}: piece {}", origin, vocab.n_tokens()), vocab);
    else if (f.number == 2) trainer = read_trainer_spec(f.bytes, origin + ": trainer_spec");
    else normalizer = read_normalizer_spec(f.bytes, origin + ": normalizer_spec");
  }
  if (vocab.n_tokens() == 0) fail("{}: no pieces (is it a SentencePiece model?)", origin);
  static const char* const kModelTypes[] = {"?", "Unigram", "BPE", "word", "char"};
  if (trainer.model_type != 2)
    fail("{}: a {} model; ridge's SentencePiece tokenizer runs BPE models only", origin,
         trainer.model_type >= 1 && trainer.model_type <= 4 ? kModelTypes[trainer.model_type] : "unknown");
  if (normalizer.name != "identity")
    fail("{}: normalizer '{}' (ridge applies no SentencePiece normalization rules, only 'identity')", origin,
         normalizer.name);
  if (normalizer.remove_extra_whitespaces || !normalizer.escape_whitespaces)
    fail("{}: the normalizer {} whitespace, which ridge's SentencePiece tokenizer does not do", origin,
         normalizer.remove_extra_whitespaces ? "collapses" : "does not escape");
  vocab.add_space_prefix = normalizer.add_dummy_prefix;
  vocab.unk = special_id(vocab, trainer.unk, kAttrUnknown, "unk", origin);
  vocab.bos = special_id(vocab, trainer.bos, kAttrControl | kAttrUserDefined, "bos", origin);
  vocab.eos = special_id(vocab, trainer.eos, kAttrControl | kAttrUserDefined, "eos", origin);
  vocab.pad = special_id(vocab, trainer.pad, kAttrControl | kAttrUserDefined, "pad", origin);
  if (vocab.eos >= 0) vocab.end_of_generation.insert(vocab.eos);
  vocab.index_special_tokens();
  return vocab;
}

Vocab load_sentencepiece_model(const std::string& path) {
  const MappedFile file(path);
  return parse_sentencepiece_model(file.bytes(), path);
}

}  // namespace ridge
