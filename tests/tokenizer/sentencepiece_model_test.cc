// tokenizer.model (SentencePiece's ModelProto) read into a Vocab: a tiny Gemma-like model encodes
// through the SPM path; hostile files (truncated, wrong wire types, duplicate or empty pieces,
// special ids outside the vocabulary, a Unigram model, a normalizer ridge does not apply) are
// refused with an Error naming the problem, and random corruptions never crash.
#include "tokenizer/sentencepiece_model.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "sentencepiece_writer.h"
#include "tokenizer/protobuf_wire.h"
#include "tokenizer/tokenizer.h"

namespace ridge {
namespace {

using testing::SpModel;
using testing::tiny_gemma_sp_model;

Vocab parse(const std::string& bytes) {
  return parse_sentencepiece_model({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SentencePieceModel, ReadsPiecesTypesAndSpecialIds) {
  const Vocab v = parse(tiny_gemma_sp_model().bytes());
  EXPECT_EQ(v.type, VocabType::kSpm);
  EXPECT_EQ(v.n_tokens(), 6 + 256 + 17);
  EXPECT_EQ(v.bos, 2);
  EXPECT_EQ(v.eos, 1);
  EXPECT_EQ(v.unk, 3);
  EXPECT_EQ(v.pad, 0);
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_FALSE(v.add_bos);
  EXPECT_EQ(v.attr[1], kAttrControl);
  EXPECT_EQ(v.attr[3], kAttrUnknown);
  EXPECT_EQ(v.attr[4], kAttrUserDefined);
  EXPECT_EQ(v.attr[6], kAttrByte);
  EXPECT_EQ(v.attr[size_t(v.find("Hello"))], kAttrNormal);
  EXPECT_EQ(v.score[size_t(v.find("Hello"))], -12.0f);
  EXPECT_EQ(v.byte_token(0x41), v.find("<0x41>"));
}

TEST(SentencePieceModel, EncodesThroughTheSpmPath) {
  auto vocab = std::make_shared<Vocab>(parse(tiny_gemma_sp_model().bytes()));
  vocab->add_bos = vocab->add_eos = true;
  const Tokenizer t(vocab);
  const std::vector<int32_t> ids = t.encode("Hello world", true, true);
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(t.token_text(ids[1]), "Hello");
  EXPECT_EQ(t.token_text(ids[2]), "\xE2\x96\x81world");
  EXPECT_EQ(ids[3], 1);
  // User-defined pieces are cut out of the text; control text only when specials are parsed;
  // characters no piece covers fall back to bytes.
  const std::vector<int32_t> turn = t.encode("<start_of_turn>\n<bos>é", false, true);
  EXPECT_EQ(turn, (std::vector<int32_t>{4, 5, 2, t.find_token("<0xC3>"), t.find_token("<0xA9>")}));
  EXPECT_NE(t.encode("<bos>", false, false), (std::vector<int32_t>{2}));
  EXPECT_EQ(t.decode(ids), "<bos>Hello world<eos>");
}

TEST(SentencePieceModel, RefusesWhatRidgeCannotRun) {
  const auto with = [](auto change) {
    SpModel m = tiny_gemma_sp_model();
    change(m);
    return error_of(m.bytes());
  };
  EXPECT_NE(with([](SpModel& m) { m.model_type = 1; }).find("Unigram"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.normalizer = "nmt_nfkc"; }).find("nmt_nfkc"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.remove_extra_whitespaces = true; }).find("whitespace"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.bos = 1000; }).find("bos id 1000"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.eos = 10; }).find("eos id 10"), std::string::npos);  // a byte piece
  EXPECT_NE(with([](SpModel& m) { m.unk = -2; }).find("unk"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) {
              m.pieces.push_back({"Hello", -3, 1});
            }).find("'Hello' appears twice"),
            std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.pieces.push_back({"", -3, 1}); }).find("empty piece"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.pieces.push_back({"x", -3, 7}); }).find("piece type 7"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.pieces.push_back({"x", NAN, 1}); }).find("score"), std::string::npos);
  EXPECT_NE(with([](SpModel& m) { m.pieces.clear(); }).find("no pieces"), std::string::npos);
}

TEST(SentencePieceModel, RefusesMalformedWireData) {
  const std::string good = tiny_gemma_sp_model().bytes();
  EXPECT_NE(error_of(good.substr(0, good.size() - 3)).find("past the end"), std::string::npos);  // truncated
  EXPECT_NE(error_of(std::string("\x0b", 1)).find("wire type 3"), std::string::npos);            // a group
  EXPECT_NE(error_of(std::string("\x0a\xff", 2)).find("varint"), std::string::npos);             // a cut length
  EXPECT_NE(error_of(std::string(11, '\x80')).find("longer than ten bytes"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x08\x01", 2)).find("not a message"), std::string::npos);  // pieces as a varint
  EXPECT_NE(error_of(std::string("\x00\x01", 2)).find("field number of 0"), std::string::npos);
  testing::ProtoWriter piece_of_wrong_type;  // a piece whose score is a varint
  testing::ProtoWriter inner;
  inner.bytes(1, "a");
  inner.integer(2, 5);
  piece_of_wrong_type.bytes(1, inner.out);
  EXPECT_NE(error_of(piece_of_wrong_type.out).find("should be a float"), std::string::npos);
  EXPECT_THROW(load_sentencepiece_model("/nonexistent/tokenizer.model"), Error);
}

// Every corruption of a valid file either parses or throws Error: never a crash or another exception.
TEST(SentencePieceModel, RandomCorruptionsThrowOnlyErrors) {
  const std::string good = tiny_gemma_sp_model().bytes();
  std::mt19937 rng(17);
  for (int round = 0; round < 3000; ++round) {
    std::string bad = good;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bad.size();
      switch (rng() % 3) {
        case 0: bad[at] = char(rng()); break;
        case 1: bad.erase(at, 1 + rng() % 8); break;
        default: bad.insert(at, 1, char(rng())); break;
      }
      if (bad.empty()) bad = "x";
    }
    try {
      parse(bad);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace ridge
