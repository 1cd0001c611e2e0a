#include "hub/repo_ref.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ridge::testing {
namespace {

using hub::parse_repo_ref;

TEST(RepoRef, Forms) {
  const hub::RepoRef plain = parse_repo_ref("bartowski/SmolLM2-135M-Instruct-GGUF");
  EXPECT_EQ(plain.repo_id, "bartowski/SmolLM2-135M-Instruct-GGUF");
  EXPECT_EQ(plain.revision, "main");
  EXPECT_EQ(plain.quant, "");
  EXPECT_EQ(plain.file, "");

  const hub::RepoRef quant = parse_repo_ref("hf://org/repo:Q4_K_M");
  EXPECT_EQ(quant.repo_id, "org/repo");
  EXPECT_EQ(quant.quant, "Q4_K_M");

  const hub::RepoRef file = parse_repo_ref("org/repo:sub/model-Q8_0.gguf");
  EXPECT_EQ(file.file, "sub/model-Q8_0.gguf");
  EXPECT_EQ(file.quant, "");

  EXPECT_EQ(parse_repo_ref("org/repo@v1.0:Q8_0").revision, "v1.0");
  EXPECT_EQ(parse_repo_ref("org/repo@v1.0:Q8_0").quant, "Q8_0");
  EXPECT_EQ(parse_repo_ref("org/repo:Q8_0@refs/pr/1").revision, "refs/pr/1");
  EXPECT_EQ(parse_repo_ref("org/repo:Q8_0@refs/pr/1").quant, "Q8_0");

  const hub::RepoRef uri_file = parse_repo_ref("hf://org/repo@0123456789abcdef0123456789abcdef01234567/a/b.json");
  EXPECT_EQ(uri_file.repo_id, "org/repo");
  EXPECT_EQ(uri_file.revision, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(uri_file.file, "a/b.json");
}

TEST(RepoRef, HostileNamesAreRefused) {
  for (const char* bad : {"", "hf://", "repo", "hf://repo", "org/", "/repo", "../repo", "org/..", "org/../x",
                          "hf://org/../../etc", "org/re..po", "org/-repo", "org/repo-", ".org/repo", "org--x/repo",
                          "org/re po", "org/re\\po", "org/repo/extra", "org/repo:../../x.gguf", "org/repo:/etc/x.gguf",
                          "org/repo:a//b.gguf", "org/repo@..", "org/repo@a/../b", "org/repo@/abs", "org/repo:Q4 K",
                          "hf://org/repo/../x", "hf://org/repo/a/./b", "org/repo@", "org/repo:"})
    EXPECT_THROW(parse_repo_ref(bad), Error) << bad;
  EXPECT_THROW(parse_repo_ref(std::string("org/") + std::string(100, 'a')), Error);
  EXPECT_THROW(parse_repo_ref(std::string("org/repo:x\x01.gguf")), Error);
}

TEST(RepoRef, Validators) {
  EXPECT_TRUE(hub::is_valid_repo_id("sentence-transformers/all-MiniLM-L6-v2"));
  EXPECT_TRUE(hub::is_valid_repo_id("Qwen/Qwen2.5-0.5B-Instruct"));
  EXPECT_FALSE(hub::is_valid_repo_id("gpt2"));  // ridge wants ORG/REPO
  EXPECT_FALSE(hub::is_valid_repo_id("a/b/c"));
  EXPECT_TRUE(hub::is_valid_repo_path("1_Pooling/config.json"));
  EXPECT_TRUE(hub::is_valid_repo_path("name with space.gguf"));
  for (const char* bad : {"", "/abs", "a/", "a//b", ".", "..", "a/../b", "./a", "a\\b", "\n"})
    EXPECT_FALSE(hub::is_valid_repo_path(bad)) << bad;
  EXPECT_TRUE(hub::is_commit_hash("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(hub::is_commit_hash("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_FALSE(hub::is_commit_hash("main"));
  EXPECT_TRUE(hub::is_hub_uri("hf://a/b"));
  EXPECT_FALSE(hub::is_hub_uri("/models/hf://a"));
}

}  // namespace
}  // namespace ridge::testing
