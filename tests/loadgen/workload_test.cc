// Length distributions, synthetic prompts, shared prefixes and dataset replay.
#include "loadgen/workload.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "loadgen/dataset.h"
#include "loadgen/length_dist.h"

namespace ridge::loadgen {
namespace {

int word_count(const std::string& text) {
  std::istringstream in(text);
  int n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

TEST(LoadgenLengthDist, ParsesEachForm) {
  EXPECT_EQ(LengthDist::parse("fixed:64").kind, LengthDist::Kind::Fixed);
  EXPECT_EQ(LengthDist::parse("64").a, 64);
  const LengthDist u = LengthDist::parse("uniform:10:20");
  EXPECT_EQ(u.kind, LengthDist::Kind::Uniform);
  EXPECT_DOUBLE_EQ(u.mean(), 15);
  EXPECT_EQ(LengthDist::parse("normal:100:10").describe(), "normal:100:10");
  for (const char* bad : {"", "fixed", "fixed:x", "uniform:5", "uniform:9:3", "normal:1", "poisson:3", "fixed:-2", "fixed:0"})
    EXPECT_THROW(LengthDist::parse(bad), Error) << bad;
}

TEST(LoadgenLengthDist, SamplesStayInBoundsWithTheRightMean) {
  std::mt19937_64 rng(7);
  const LengthDist fixed = LengthDist::parse("fixed:33");
  const LengthDist uniform = LengthDist::parse("uniform:10:20");
  const LengthDist normal = LengthDist::parse("normal:200:20");
  const LengthDist wide = LengthDist::parse("normal:3:50");
  double uniform_sum = 0, normal_sum = 0;
  std::set<int> uniform_seen;
  constexpr int kSamples = 20000;
  for (int i = 0; i < kSamples; ++i) {
    EXPECT_EQ(fixed.sample(rng), 33);
    const int u = uniform.sample(rng);
    ASSERT_GE(u, 10);
    ASSERT_LE(u, 20);
    uniform_seen.insert(u);
    uniform_sum += u;
    normal_sum += normal.sample(rng);
    ASSERT_GE(wide.sample(rng), 1);  // clipped: a request asks for at least one token
  }
  EXPECT_EQ(uniform_seen.size(), 11u);  // both ends included
  EXPECT_NEAR(uniform_sum / kSamples, 15, 0.2);
  EXPECT_NEAR(normal_sum / kSamples, 200, 1.0);
}

TEST(LoadgenWorkload, SyntheticPromptsHaveTheSampledLengthAndRepeatWithTheSeed) {
  WorkloadOptions o;
  o.input_len = LengthDist::parse("uniform:5:40");
  o.output_len = LengthDist::parse("uniform:1:9");
  o.seed = 3;
  const auto a = build_workload(o, 50);
  ASSERT_EQ(a.size(), 50u);
  for (const auto& r : a) {
    EXPECT_TRUE(r.prefix.empty());
    EXPECT_EQ(word_count(r.prompt), r.input_tokens);
    EXPECT_GE(r.input_tokens, 5);
    EXPECT_LE(r.input_tokens, 40);
    EXPECT_GE(r.max_tokens, 1);
    EXPECT_LE(r.max_tokens, 9);
  }
  const auto b = build_workload(o, 50);
  EXPECT_EQ(a[17].prompt, b[17].prompt);
  o.seed = 4;
  EXPECT_NE(build_workload(o, 50)[17].prompt, a[17].prompt);
}

TEST(LoadgenWorkload, SharedPrefixOpensTheChosenFractionAndCountsInsideTheLength) {
  WorkloadOptions o;
  o.input_len = LengthDist::fixed(100);
  o.shared_prefix_fraction = 0.3;
  o.shared_prefix_len = 60;
  const auto requests = build_workload(o, 40);
  int with_prefix = 0;
  for (const auto& r : requests) {
    EXPECT_EQ(r.input_tokens, 100);
    if (r.prefix.empty()) continue;
    ++with_prefix;
    EXPECT_EQ(word_count(r.prefix), 60);
    EXPECT_EQ(word_count(r.prompt), 40);
  }
  EXPECT_EQ(with_prefix, 12);
  std::set<std::string> prefixes;
  for (const auto& r : requests)
    if (!r.prefix.empty()) prefixes.insert(r.prefix);
  EXPECT_EQ(prefixes.size(), 1u);
  o.shared_prefix_len = 0;
  EXPECT_THROW(build_workload(o, 4), Error);
}

TEST(LoadgenDataset, ReadsShareGptChatAndPromptLines) {
  const std::string jsonl =
      R"({"conversations": [{"from": "system", "value": "be brief"}, {"from": "human", "value": "What is a CPU cache?"}, {"from": "gpt", "value": "A small fast memory near the core."}]})"
      "\n\n"
      R"({"messages": [{"role": "user", "content": "hello there"}, {"role": "assistant", "content": "hi"}]})"
      "\r\n"
      R"({"prompt": "Count to ten", "max_tokens": 12})"
      "\n"
      R"({"conversations": [{"from": "gpt", "value": "no question asked"}]})"
      "\n"
      R"({"prompt": "no limit given"})";
  const Dataset d = parse_dataset(jsonl, "test.jsonl");
  ASSERT_EQ(d.entries.size(), 4u);
  EXPECT_EQ(d.skipped, 1);
  EXPECT_EQ(d.entries[0].prompt, "What is a CPU cache?");
  EXPECT_EQ(d.entries[0].prompt_tokens, estimate_tokens("What is a CPU cache?"));
  EXPECT_EQ(d.entries[0].output_tokens, estimate_tokens("A small fast memory near the core."));
  EXPECT_EQ(d.entries[1].prompt, "hello there");
  EXPECT_EQ(d.entries[2].output_tokens, 12);
  EXPECT_FALSE(d.entries[3].output_tokens.has_value());
}

TEST(LoadgenDataset, ReadsAJsonArrayAndNamesTheBadLine) {
  const Dataset d = parse_dataset(R"( [{"prompt": "a"}, {"prompt": "b", "max_tokens": 3}, 5] )", "x.json");
  EXPECT_EQ(d.entries.size(), 2u);
  EXPECT_EQ(d.skipped, 1);
  try {
    parse_dataset("{\"prompt\": \"ok\"}\n{not json\n", "bad.jsonl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST(LoadgenWorkload, ReplaysADatasetWithItsLengthsUnlessOverridden) {
  const auto path = std::filesystem::temp_directory_path() / "ridge_loadgen_dataset_test.jsonl";
  {
    std::ofstream out(path);
    out << R"({"prompt": "one two three four", "max_tokens": 7})"
        << "\n"
        << R"({"prompt": "five six"})"
        << "\n";
  }
  WorkloadOptions o;
  o.dataset = path.string();
  o.output_len = LengthDist::fixed(5);
  const auto requests = build_workload(o, 6);  // cycles through the two prompts
  int sevens = 0, fives = 0;
  for (const auto& r : requests) {
    EXPECT_TRUE(r.prompt == "one two three four" || r.prompt == "five six") << r.prompt;
    sevens += r.max_tokens == 7;
    fives += r.max_tokens == 5;
  }
  EXPECT_EQ(sevens, 3);
  EXPECT_EQ(fives, 3);
  o.output_len_given = true;
  for (const auto& r : build_workload(o, 4)) EXPECT_EQ(r.max_tokens, 5);
  std::filesystem::remove(path);
  EXPECT_THROW(build_workload(o, 1), Error);  // the file is gone
}

}  // namespace
}  // namespace ridge::loadgen
