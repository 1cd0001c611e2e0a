// Hostile and unsupported tokenizer.json files: each is a clear Error naming the problem, never a
// crash or a hang.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/tokenizer.h"
#include "hf_json_files.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::HfDir;

json minimal_bpe() {
  return {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}}};
}

// The Error from loading `tokenizer_json` (and optional side files) as a directory.
std::string load_error(const std::string& tokenizer_json, const std::string& config = "",
                       const std::string& generation = "") {
  HfDir d;
  d.write("tokenizer.json", tokenizer_json);
  if (!config.empty()) d.write("tokenizer_config.json", config);
  if (!generation.empty()) d.write("generation_config.json", generation);
  try {
    Tokenizer::from_hf_dir(d.dir());
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string with(const char* pointer, const json& value) {
  json j = minimal_bpe();
  j[json::json_pointer(pointer)] = value;
  return j.dump();
}

TEST(HfHostile, MinimalFileLoads) {
  HfDir d;
  d.write("tokenizer.json", minimal_bpe().dump());
  EXPECT_EQ(Tokenizer::from_hf_dir(d.dir()).encode("ab", true, true), (std::vector<int32_t>{2}));
}

TEST(HfHostile, MissingOrMalformedFiles) {
  HfDir empty;
  EXPECT_THROW(Tokenizer::from_hf_dir(empty.dir()), Error);
  std::filesystem::create_directory(empty.file("tokenizer.json"));  // a directory where the file should be
  EXPECT_THROW(Tokenizer::from_hf_dir(empty.dir()), Error);
  EXPECT_NE(load_error("{\"model\": {\"type\": \"BPE\", ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(load_error("{}").find("model"), std::string::npos);
  EXPECT_NE(load_error(minimal_bpe().dump(), "{\"bos_token\": ").find("tokenizer_config.json"), std::string::npos);
}

TEST(HfHostile, DeepNestingIsRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(load_error("{\"model\": " + deep + "}").find("deeper than"), std::string::npos);
}

TEST(HfHostile, UnsupportedComponentsAreNamed) {
  EXPECT_NE(load_error(with("/model/type", "WordLevel")).find("'WordLevel'"), std::string::npos);
  EXPECT_NE(load_error(with("/normalizer", {{"type", "Precompiled"}})).find("'Precompiled'"), std::string::npos);
  EXPECT_NE(load_error(with("/pre_tokenizer", {{"type", "UnicodeScripts"}})).find("'UnicodeScripts'"), std::string::npos);
  EXPECT_NE(load_error(with("/decoder", {{"type", "CTC"}})).find("'CTC'"), std::string::npos);
  EXPECT_NE(load_error(with("/post_processor", {{"type", "Fancy"}})).find("'Fancy'"), std::string::npos);
  const json regex = {{"type", "Split"}, {"pattern", {{"Regex", "\\p{Han}+"}}}, {"behavior", "Isolated"}};
  EXPECT_NE(load_error(with("/pre_tokenizer", regex)).find("\\p{Han}+"), std::string::npos);
  EXPECT_NE(load_error(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"String", "x"}}}, {"behavior", "Sideways"}}))
                .find("Sideways"),
            std::string::npos);
  EXPECT_NE(load_error(with("/model/dropout", 0.1)).find("dropout"), std::string::npos);
}

TEST(HfHostile, IdsOutOfRange) {
  EXPECT_NE(load_error(with("/model/vocab/b", -1)).find("out of range"), std::string::npos);
  EXPECT_NE(load_error(with("/model/vocab/b", 4000000000LL)).find("out of range"), std::string::npos);
  // A float id (found by tokenizer_json_fuzz: a cast of 1e62 to an integer is undefined behaviour).
  EXPECT_NE(load_error(with("/model/vocab/b", 1e62)).find("not a whole number"), std::string::npos);
  EXPECT_NE(load_error(with("/model/vocab/b", 1.5)).find("not a whole number"), std::string::npos);
  // A gap far past the vocabulary's size would make a tiny file allocate gigabytes.
  EXPECT_NE(load_error(with("/model/vocab/b", 10000000)).find("out of range"), std::string::npos);
  EXPECT_NE(load_error(with("/added_tokens", {{{"id", 1LL << 40}, {"content", "<x>"}}})).find("out of range"),
            std::string::npos);
  const json post = {{"type", "BertProcessing"}, {"cls", {"[CLS]", 7}}, {"sep", {"[SEP]", 1}}};
  EXPECT_NE(load_error(with("/post_processor", post)).find("outside the vocabulary"), std::string::npos);
  EXPECT_NE(load_error(minimal_bpe().dump(), "", "{\"eos_token_id\": [1, 99]}").find("outside the vocabulary"),
            std::string::npos);
  const json unigram = {{"type", "Unigram"}, {"unk_id", 5}, {"vocab", json::array({json::array({"a", -1.0})})}};
  EXPECT_NE(load_error(with("/model", unigram)).find("unk_id"), std::string::npos);
}

TEST(HfHostile, BadMerges) {
  EXPECT_NE(load_error(with("/model/merges", {"a c"})).find("'c'"), std::string::npos);
  EXPECT_NE(load_error(with("/model/merges", {"b a"})).find("'ba'"), std::string::npos);  // merged token missing
  EXPECT_NE(load_error(with("/model/merges", {"a b c"})).find("merges[0]"), std::string::npos);
  EXPECT_NE(load_error(with("/model/merges", {42})).find("merges[0]"), std::string::npos);
  EXPECT_NE(load_error(with("/model/unk_token", "<nope>")).find("<nope>"), std::string::npos);
}

TEST(HfHostile, WrongTypesAreErrorsNotCrashes) {
  EXPECT_NE(load_error(with("/model/vocab", "abc")), "(no error)");
  EXPECT_NE(load_error(with("/model/vocab/a", "zero")), "(no error)");
  EXPECT_NE(load_error(with("/added_tokens", {{{"id", 0}}})), "(no error)");
  EXPECT_NE(load_error(with("/normalizer", {{"type", "Sequence"}, {"normalizers", 5}})), "(no error)");
  EXPECT_NE(load_error(with("/post_processor", {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "X"}}}}}},
                                                {"special_tokens", json::object()}})),
            "(no error)");
}

}  // namespace
}  // namespace ridge
