// UTF-8 decoding leniency (must match llama.cpp) and the streaming completeness check.
#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace ridge::utf8 {

TEST(Utf8, DecodesValidSequences) {
  EXPECT_EQ(decode_all_lenient("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x99\x82"), (std::vector<uint32_t>{'a', 0xE9, 0x4E2D, 0x1F642}));
}

TEST(Utf8, EachInvalidByteBecomesOneReplacement) {
  EXPECT_EQ(decode_all_lenient("\x80z"), (std::vector<uint32_t>{kReplacement, 'z'}));
  EXPECT_EQ(decode_all_lenient("\xE2\x82"), (std::vector<uint32_t>{kReplacement, kReplacement}));
  EXPECT_EQ(decode_all_lenient("\xE2(\xA1"), (std::vector<uint32_t>{kReplacement, '(', kReplacement}));
  EXPECT_EQ(decode_all_lenient("\xFF\xF8\x88\x80\x80\x80").size(), 6u);
}

TEST(Utf8, OverlongAndSurrogatesDecodeLikeLlamaCpp) {
  EXPECT_EQ(decode_all_lenient(std::string("\xC0\x80", 2)), (std::vector<uint32_t>{0}));
  EXPECT_EQ(decode_all_lenient("\xED\xA0\x80"), (std::vector<uint32_t>{0xD800}));
  // Beyond U+10FFFF cannot be re-encoded: the lead byte is invalid.
  EXPECT_EQ(decode_all_lenient("\xF4\x90\x80\x80")[0], kReplacement);
}

TEST(Utf8, EncodeRoundTrips) {
  for (uint32_t cpt : {0x41u, 0xE9u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    const std::string s = encode(cpt);
    size_t offset = 0;
    EXPECT_EQ(decode_lenient(s, offset), cpt);
    EXPECT_EQ(offset, s.size());
  }
}

TEST(Utf8, CompletePrefixHoldsBackOnlyUnfinishedCharacters) {
  EXPECT_EQ(complete_prefix_length("abc"), 3u);
  EXPECT_EQ(complete_prefix_length("ab\xF0\x9F"), 2u);
  EXPECT_EQ(complete_prefix_length("ab\xF0\x9F\x99"), 2u);
  EXPECT_EQ(complete_prefix_length("ab\xF0\x9F\x99\x82"), 6u);
  EXPECT_EQ(complete_prefix_length("\xE4\xB8"), 0u);
  // Bytes that can never complete are not held back.
  EXPECT_EQ(complete_prefix_length("a\xFF"), 2u);
  EXPECT_EQ(complete_prefix_length("a\x80"), 2u);
  EXPECT_EQ(complete_prefix_length("\xE0\x80"), 2u);  // E0 80 would be overlong
}

TEST(Utf8, SanitizeReplacesInvalidSequences) {
  EXPECT_EQ(sanitize("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(sanitize("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(sanitize("\xF0\x9F\x99"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace ridge::utf8
