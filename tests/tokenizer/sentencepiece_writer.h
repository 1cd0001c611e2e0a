#pragma once
// Tests' writer of SentencePiece ModelProto files (tokenizer.model) in protobuf's wire format,
// field by field, so a test can build a tiny model or a hostile one.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace ridge::testing {

struct ProtoWriter {
  std::string out;
  void varint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(char(uint8_t(v) | 0x80));
    out.push_back(char(v));
  }
  void key(uint32_t field, int wire) { varint(uint64_t(field) << 3 | uint64_t(wire)); }
  void integer(uint32_t field, int64_t v) { key(field, 0), varint(uint64_t(v)); }
  void bytes(uint32_t field, const std::string& b) { key(field, 2), varint(b.size()), out += b; }
  void fixed32(uint32_t field, float f) {
    key(field, 5);
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i) out.push_back(char(bits >> (8 * i)));
  }
};

struct SpPiece {
  std::string text;
  float score = 0.0f;
  int type = 1;  // NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5, BYTE 6
};

inline std::string piece_message(const SpPiece& p) {
  ProtoWriter w;
  w.bytes(1, p.text);
  w.fixed32(2, p.score);
  if (p.type != 1) w.integer(3, p.type);
  return w.out;
}

// A BPE model (trainer_spec model_type 2) with Gemma's ids (pad 0, eos 1, bos 2, unk 3) and an
// identity normalizer without a dummy prefix, unless the caller changes them.
struct SpModel {
  std::vector<SpPiece> pieces;
  int model_type = 2;
  int64_t unk = 3, bos = 2, eos = 1, pad = 0;
  std::string normalizer = "identity";
  bool add_dummy_prefix = false, remove_extra_whitespaces = false;

  std::string bytes() const {
    ProtoWriter w;
    for (const SpPiece& p : pieces) w.bytes(1, piece_message(p));
    ProtoWriter trainer;
    trainer.integer(3, model_type);
    trainer.integer(40, unk), trainer.integer(41, bos), trainer.integer(42, eos), trainer.integer(43, pad);
    w.bytes(2, trainer.out);
    ProtoWriter norm;
    norm.bytes(1, normalizer);
    norm.integer(3, add_dummy_prefix), norm.integer(4, remove_extra_whitespaces);
    w.bytes(3, norm.out);
    return w.out;
  }
};

// Gemma's layout in miniature: controls, <unk>, user-defined pieces, the 256 byte pieces, then
// merges enough for "Hello world" -> "Hello" "▁world".
inline SpModel tiny_gemma_sp_model() {
  SpModel m;
  m.pieces = {{"<pad>", 0, 3}, {"<eos>", 0, 3},           {"<bos>", 0, 3},
              {"<unk>", 0, 2}, {"<start_of_turn>", 0, 4}, {"\n", 0, 4}};
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) m.pieces.push_back({std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, 6});
  float score = -1.0f;
  for (const char* t : {"\xE2\x96\x81", "H", "e", "l", "o", "w", "r", "d", "ll", "llo", "He", "Hello", "or",
                        "\xE2\x96\x81w", "\xE2\x96\x81wor", "ld", "\xE2\x96\x81world"})
    m.pieces.push_back({t, score--, 1});
  return m;
}

}  // namespace ridge::testing
