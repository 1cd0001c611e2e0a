#include "hub/cache_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "hub/hub_config.h"

namespace ridge::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

TEST(CacheLayout, NamesAsHuggingfaceHubWritesThem) {
  EXPECT_EQ(hub::repo_folder_name("org/repo"), "models--org--repo");
  EXPECT_EQ(hub::relative_blob_link("model.gguf", "abc"), "../../blobs/abc");
  EXPECT_EQ(hub::relative_blob_link("1_Pooling/config.json", "abc"), "../../../blobs/abc");
  const hub::RepoCache cache("/c/hub", "org/repo");
  EXPECT_EQ(cache.blob_path("e1"), "/c/hub/models--org--repo/blobs/e1");
  EXPECT_EQ(cache.incomplete_path("e1"), "/c/hub/models--org--repo/blobs/e1.incomplete");
  EXPECT_EQ(cache.snapshot_path(kCommit, "a/b.json"), std::string("/c/hub/models--org--repo/snapshots/") + kCommit + "/a/b.json");
  EXPECT_THROW(hub::RepoCache("/c/hub", "../etc"), Error);
}

TEST(CacheLayout, RefsSnapshotsAndLinks) {
  const fs::path root = fs::temp_directory_path() / ("ridge-hub-cache-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const hub::RepoCache cache(root.string(), "org/repo");
  EXPECT_EQ(cache.commit_for("main"), "");
  EXPECT_EQ(cache.commit_for(kCommit), kCommit);  // a commit names itself
  cache.write_ref("main", kCommit);
  cache.write_ref("refs/pr/1", kCommit);
  EXPECT_EQ(cache.commit_for("main"), kCommit);
  EXPECT_EQ(cache.commit_for("refs/pr/1"), kCommit);
  std::ifstream ref(root / "models--org--repo/refs/main");
  std::string text((std::istreambuf_iterator<char>(ref)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, kCommit);  // no newline, as huggingface_hub writes it
  cache.write_ref(kCommit, kCommit);
  EXPECT_FALSE(fs::exists(root / "models--org--repo/refs" / kCommit));

  fs::create_directories(root / "models--org--repo/blobs");
  std::ofstream(cache.blob_path("b1")) << "one";
  cache.link_snapshot(kCommit, "1_Pooling/config.json", "b1");
  cache.link_snapshot(kCommit, "x.gguf", "b2");  // its blob is not there yet: a dangling link
  EXPECT_TRUE(cache.has_file(kCommit, "1_Pooling/config.json"));
  EXPECT_FALSE(cache.has_file(kCommit, "x.gguf"));
  EXPECT_EQ(fs::read_symlink(cache.snapshot_path(kCommit, "1_Pooling/config.json")).string(), "../../../blobs/b1");
  EXPECT_EQ(cache.snapshot_files(kCommit), std::vector<std::string>{"1_Pooling/config.json"});
  EXPECT_TRUE(cache.snapshot_files("ffffffffffffffffffffffffffffffffffffffff").empty());
  fs::remove_all(root);
}

TEST(CacheLayout, ConfigFromTheEnvironment) {
  ::setenv("HF_HOME", "/tmp/ridge-hf-home-test", 1);
  ::unsetenv("HF_HUB_CACHE");
  ::unsetenv("HUGGINGFACE_HUB_CACHE");
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
  ::setenv("HF_HUB_OFFLINE", "yes", 1);
  ::setenv("HF_TOKEN", " hf_abc\n", 1);
  hub::HubConfig c = hub::hub_config_from_env();
  EXPECT_EQ(c.cache_dir, "/tmp/ridge-hf-home-test/hub");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9");
  EXPECT_TRUE(c.offline);
  EXPECT_EQ(c.token, "hf_abc");
  EXPECT_EQ(hub::hub_config_from_env("flag").token, "flag");
  ::setenv("HF_HUB_CACHE", "/elsewhere", 1);
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  c = hub::hub_config_from_env();
  EXPECT_EQ(c.cache_dir, "/elsewhere");
  EXPECT_FALSE(c.offline);
  for (const char* v : {"HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN"}) ::unsetenv(v);
}

}  // namespace
}  // namespace ridge::testing
