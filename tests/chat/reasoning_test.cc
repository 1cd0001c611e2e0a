// A thinking model's output split into reasoning and content: whole outputs, every way of cutting
// them into streamed pieces (the deltas concatenate to the whole result), prompts that open or
// close the thinking, and the template detection.
#include <gtest/gtest.h>

#include <random>

#include "chat/reasoning.h"

namespace ridge::chat {
namespace {

struct Split {
  std::string reasoning, content;
  bool closed;
};

Split whole(std::string_view text, bool starts_open) {
  ReasoningSplitter s(ReasoningTags{}, starts_open);
  s.push(text, /*final=*/true);
  return {s.reasoning(), s.content(), s.closed()};
}

// The text pushed in pieces cut at `cuts`; the deltas' concatenation.
Split pieces(std::string_view text, bool starts_open, std::vector<size_t> cuts) {
  ReasoningSplitter s(ReasoningTags{}, starts_open);
  std::string reasoning, content;
  size_t at = 0;
  cuts.push_back(text.size());
  for (size_t cut : cuts) {
    auto d = s.push(text.substr(at, cut - at), cut == text.size());
    reasoning += d.reasoning;
    content += d.content;
    at = cut;
  }
  EXPECT_EQ(reasoning, s.reasoning());
  EXPECT_EQ(content, s.content());
  return {reasoning, content, s.closed()};
}

TEST(Reasoning, SplitsThinkingFromTheAnswer) {
  Split s = whole("<think>\nThe user greets me.\n</think>\n\nHello!", false);
  EXPECT_EQ(s.reasoning, "The user greets me.");
  EXPECT_EQ(s.content, "Hello!");
  EXPECT_TRUE(s.closed);

  s = whole("  <think>a</think>b", false);
  EXPECT_EQ(s.reasoning, "a");
  EXPECT_EQ(s.content, "b");

  // Output without thinking is all content, whitespace and all; a tag later on is just text.
  s = whole("Hi <think>x</think>", false);
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, "Hi <think>x</think>");
  EXPECT_FALSE(s.closed);

  // The prompt opened the thinking (R1's newer template): no open tag in the output.
  s = whole("Let me think.\n</think>\n\n42", true);
  EXPECT_EQ(s.reasoning, "Let me think.");
  EXPECT_EQ(s.content, "42");

  // Cut off while thinking: all reasoning, no content.
  s = whole("<think>\nstill going\n", false);
  EXPECT_EQ(s.reasoning, "still going");
  EXPECT_EQ(s.content, "");
  EXPECT_FALSE(s.closed);

  // A partial open tag at the end of an output that never thinks.
  s = whole("<thi", false);
  EXPECT_EQ(s.content, "<thi");
  s = whole("", false);
  EXPECT_EQ(s.content, "");
}

TEST(Reasoning, EveryCutGivesTheWholeResult) {
  const std::vector<std::pair<std::string, bool>> texts = {
      {"<think>\nThe user greets me. I  answer \n\n</think>\n\nHello, <b>friend</b>!\n", false},
      {"\n<think>a</thinking> still </think>b</think>", false},
      {"I think </think>   then  ", true},
      {"<think>never closed </thi", false},
      {"<tho not a tag", false},
      {"plain answer", false},
      {"\n\n", false},
  };
  std::mt19937 rng(7);
  for (const auto& [text, open] : texts) {
    const Split expected = whole(text, open);
    // Every single cut, every piece of one byte, and random cuts.
    for (size_t c = 0; c <= text.size(); ++c) {
      const Split got = pieces(text, open, {c});
      EXPECT_EQ(got.reasoning, expected.reasoning) << text << " cut at " << c;
      EXPECT_EQ(got.content, expected.content) << text << " cut at " << c;
    }
    std::vector<size_t> bytes;
    for (size_t c = 1; c < text.size(); ++c) bytes.push_back(c);
    Split got = pieces(text, open, bytes);
    EXPECT_EQ(got.reasoning, expected.reasoning) << text;
    EXPECT_EQ(got.content, expected.content) << text;
    for (int round = 0; round < 20; ++round) {
      std::vector<size_t> cuts;
      for (size_t c = 1; c < text.size(); ++c)
        if (rng() % 3 == 0) cuts.push_back(c);
      got = pieces(text, open, cuts);
      EXPECT_EQ(got.reasoning, expected.reasoning) << text;
      EXPECT_EQ(got.content, expected.content) << text;
    }
  }
}

TEST(Reasoning, NothingIsGivenOutBeforeItIsDecided) {
  ReasoningSplitter s(ReasoningTags{}, false);
  auto d = s.push("\n<th", false);
  EXPECT_EQ(d.content, "");  // may still open the thinking
  d = s.push("ink>x </", false);
  EXPECT_EQ(d.reasoning, "x");  // " </" may end it
  EXPECT_TRUE(s.thinking());
  d = s.push("b>", false);
  EXPECT_EQ(d.reasoning, " </b>");
  d = s.push("</think>", false);
  EXPECT_TRUE(s.closed());
  EXPECT_FALSE(s.thinking());
}

TEST(Reasoning, PromptsAndTemplates) {
  const ReasoningTags tags;
  EXPECT_EQ(prompt_thinking("<|im_start|>assistant\n<think>\n", tags), PromptThinking::kOpen);
  EXPECT_EQ(prompt_thinking("<|im_start|>assistant\n<think>\n\n</think>\n\n", tags), PromptThinking::kClosed);
  EXPECT_EQ(prompt_thinking("<|im_start|>assistant\n", tags), PromptThinking::kNone);
  EXPECT_TRUE(detect_reasoning_tags("{% if '</think>' in content %}"));
  EXPECT_FALSE(detect_reasoning_tags("{{ '<|im_start|>' + message['role'] }}"));
  EXPECT_EQ(reasoning_format_from_name("deepseek"), ReasoningFormat::kSeparate);
  EXPECT_EQ(reasoning_format_from_name("none"), ReasoningFormat::kNone);
  EXPECT_FALSE(reasoning_format_from_name("bogus"));
}

}  // namespace
}  // namespace ridge::chat
