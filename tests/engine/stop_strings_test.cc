// Stop strings over streamed pieces: nothing of a stop string is ever released, text that cannot
// start one is released at once, and a match split across pieces is still found.
#include "engine/stop_strings.h"

#include <gtest/gtest.h>

#include <random>

namespace ridge {
namespace {

// Pushes every piece; returns what was released (with a final flush unless stopped) and whether it stopped.
std::pair<std::string, bool> stream(StopStringMatcher& matcher, const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& piece : pieces) {
    auto result = matcher.push(piece);
    out += result.text;
    if (result.stopped) return {out, true};
  }
  return {out + matcher.flush(), false};
}

TEST(StopStrings, NoStopsPassesTextThrough) {
  StopStringMatcher matcher({});
  EXPECT_EQ(matcher.push("Hello").text, "Hello");
  EXPECT_EQ(matcher.push(" world").text, " world");
  EXPECT_EQ(matcher.flush(), "");
}

TEST(StopStrings, StopInsideOnePieceCutsBeforeIt) {
  StopStringMatcher matcher({"STOP"});
  const auto result = matcher.push("Hello STOP world");
  EXPECT_EQ(result.text, "Hello ");
  EXPECT_TRUE(result.stopped);
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(matcher.push("more").text, "");
  EXPECT_TRUE(matcher.push("more").stopped);
  EXPECT_EQ(matcher.flush(), "");
}

TEST(StopStrings, HoldsBackAPossibleStartUntilDecided) {
  StopStringMatcher matcher({"STOP"});
  auto r = matcher.push("Hel");
  EXPECT_EQ(r.text, "Hel");
  r = matcher.push("lo ST");
  EXPECT_EQ(r.text, "lo ");  // "ST" could begin STOP
  EXPECT_FALSE(r.stopped);
  r = matcher.push("OP and more");
  EXPECT_EQ(r.text, "");
  EXPECT_TRUE(r.stopped);
}

TEST(StopStrings, FalseStartIsReleased) {
  StopStringMatcher matcher({"STOP"});
  EXPECT_EQ(matcher.push("ST").text, "");
  EXPECT_EQ(matcher.push("ART").text, "START");
  EXPECT_EQ(matcher.push("S").text, "");
  EXPECT_EQ(matcher.flush(), "S");  // generation ended: the held tail is real text
}

TEST(StopStrings, EarliestMatchWinsAcrossStops) {
  StopStringMatcher matcher({"world", "lo"});
  const auto result = matcher.push("Hello world");
  EXPECT_EQ(result.text, "Hel");
  EXPECT_TRUE(result.stopped);
}

TEST(StopStrings, OverlappingCandidates) {
  StopStringMatcher matcher({"abc", "bd"});
  EXPECT_EQ(matcher.push("ab").text, "");  // could be abc
  const auto result = matcher.push("d");
  EXPECT_EQ(result.text, "a");
  EXPECT_TRUE(result.stopped);
}

TEST(StopStrings, MultiByteStopSplitInsideACharacter) {
  StopStringMatcher matcher({"世界"});
  const std::string text = "Hi 世界!";
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  const auto [out, stopped] = stream(matcher, bytes);
  EXPECT_EQ(out, "Hi ");
  EXPECT_TRUE(stopped);
}

TEST(StopStrings, EmptyStopStringsAreIgnored) {
  StopStringMatcher matcher({"", "x"});
  EXPECT_EQ(matcher.push("abc").text, "abc");
}

// Any split of the text releases exactly the text before the first stop string.
TEST(StopStrings, RandomSplitsReleaseExactlyThePrefix) {
  std::mt19937 rng(5);
  const std::vector<std::string> stops = {"</s>", "\n\nUser:", "ab"};
  const std::string alphabet = "a b</s>\nUser:xyz";
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int length = int(rng() % 40);
    for (int i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
    size_t first = std::string::npos;
    for (const auto& stop : stops) first = std::min(first, text.find(stop));
    std::vector<std::string> pieces;
    for (size_t at = 0; at < text.size();) {
      const size_t n = 1 + rng() % 5;
      pieces.push_back(text.substr(at, n));
      at += n;
    }
    StopStringMatcher matcher(stops);
    const auto [out, stopped] = stream(matcher, pieces);
    EXPECT_EQ(stopped, first != std::string::npos) << text;
    EXPECT_EQ(out, text.substr(0, first)) << text;
  }
}

}  // namespace
}  // namespace ridge
