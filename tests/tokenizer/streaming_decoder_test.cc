// Streaming decode: characters split over tokens come out whole; invalid bytes as U+FFFD.
#include <gtest/gtest.h>

#include "tiny_vocabs.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

namespace {

// The SPM tiny vocabulary has a <0xXX> token for every byte.
int32_t byte_id(const Tokenizer& tok, uint8_t b) {
  static const char kHex[] = "0123456789ABCDEF";
  return tok.find_token(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
}

}  // namespace

TEST(StreamingDecoder, HoldsAnEmojiUntilItsLastByte) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  StreamingDecoder dec(tok);
  EXPECT_EQ(dec.push(tok.find_token("\xE2\x96\x81hello")), " hello");
  EXPECT_EQ(dec.push(byte_id(tok, 0xF0)), "");
  EXPECT_EQ(dec.push(byte_id(tok, 0x9F)), "");
  EXPECT_EQ(dec.push(byte_id(tok, 0x99)), "");
  EXPECT_EQ(dec.push(byte_id(tok, 0x82)), "\xF0\x9F\x99\x82");
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamingDecoder, InvalidBytesBecomeReplacementCharacters) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  StreamingDecoder dec(tok);
  EXPECT_EQ(dec.push(byte_id(tok, 0xFF)), "\xEF\xBF\xBD");
  // A lead byte followed by a non-continuation: both come out, the lead as U+FFFD.
  EXPECT_EQ(dec.push(byte_id(tok, 0xE4)), "");
  EXPECT_EQ(dec.push(tok.find_token("h")), "\xEF\xBF\xBDh");
}

TEST(StreamingDecoder, FlushEmitsAnUnfinishedTail) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  StreamingDecoder dec(tok);
  EXPECT_EQ(dec.push(byte_id(tok, 0xE4)), "");
  EXPECT_EQ(dec.push(byte_id(tok, 0xB8)), "");
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamingDecoder, SameTextAsDecodeForValidUtf8) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  const std::string text = "low 中文 🙂🇯🇵 lower";
  std::string streamed;
  StreamingDecoder dec(tok);
  for (int32_t id : tok.encode(text, false, false)) streamed += dec.push(id);
  streamed += dec.flush();
  EXPECT_EQ(streamed, text);
}

}  // namespace ridge
