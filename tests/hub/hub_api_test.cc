#include "hub/hub_api.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ridge::testing {
namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kBlob = "89abcdef0123456789abcdef0123456789abcdef";
const std::string kSha = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

std::string answer(const std::string& siblings) { return R"({"id": "o/r", "sha": ")" + kCommit + R"(", "siblings": )" + siblings + "}"; }

TEST(HubApi, ReadsTheRevisionsFiles) {
  const hub::RepoInfo info = hub::parse_repo_info(
      answer(R"([{"rfilename": "README.md", "blobId": ")" + kBlob + R"(", "size": 12},
                 {"rfilename": "m-Q4_1.gguf", "blobId": ")" + kBlob + R"(", "size": 134,
                  "lfs": {"sha256": ")" + kSha + R"(", "size": 98362432, "pointerSize": 134}}])"),
      "o/r");
  EXPECT_EQ(info.commit, kCommit);
  ASSERT_EQ(info.files.size(), 2u);
  EXPECT_EQ(info.files[0].etag(), kBlob);  // a git file's blob is named by its git id
  EXPECT_EQ(info.files[0].size, 12);
  EXPECT_EQ(info.files[1].etag(), kSha);  // an LFS file's by its SHA-256
  EXPECT_EQ(info.files[1].size, 98362432);
  EXPECT_EQ(info.find("m-Q4_1.gguf"), &info.files[1]);
  EXPECT_EQ(info.find("x"), nullptr);
  EXPECT_EQ(hub::resolve_url("http://h", "o/r", kCommit, "a b/c.json"), "http://h/o/r/resolve/" + kCommit + "/a%20b/c.json");
}

TEST(HubApi, HostileAnswersAreRefused) {
  const std::string ok_blob = R"(", "blobId": ")" + kBlob + R"("})";
  for (const std::string& bad :
       {std::string("not json"), std::string("[]"), std::string(R"({"sha": "main", "siblings": []})"),
        R"({"sha": ")" + kCommit + R"("})", answer(R"({})"), answer(R"([3])"),
        answer(R"([{"rfilename": "../../../etc/passwd)" + ok_blob + "]"),
        answer(R"([{"rfilename": "/abs)" + ok_blob + "]"), answer(R"([{"rfilename": "a/../../b)" + ok_blob + "]"),
        answer(R"([{"rfilename": "x.gguf"}])"),  // no blob id: its cache name would be unknown
        answer(R"([{"rfilename": "x.gguf", "blobId": "../../x"}])"),
        answer(R"([{"rfilename": "x)" + ok_blob.substr(0, ok_blob.size() - 1) + R"(, "lfs": {"sha256": "../zz"}}])")})
    EXPECT_THROW(hub::parse_repo_info(bad, "o/r"), Error) << bad;
}

}  // namespace
}  // namespace ridge::testing
