// Split GGUF files (llama.cpp's gguf-split layout) open as one GgufFile; broken splits fail naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_split.h"
#include "gguf_test_builder.h"

namespace ridge::gguf {
namespace {

namespace fs = std::filesystem;
using testing::GgufBuilder;

struct ShardSpec {
  std::vector<std::string> tensors;  // F32 [4] tensors, values from the name's length and position
  int64_t no = 0, count = 3, n_tensors = 6;
  bool split_keys = true;
};

std::vector<float> values_of(const std::string& name) {
  std::vector<float> v(4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(name.size()) + 0.25f * float(i) + float(name.back());
  return v;
}

// One shard as gguf-split writes it: split.no / split.count as u16, split.tensors.count as i32,
// the model's metadata only in the first.
std::vector<uint8_t> shard_bytes(const ShardSpec& s) {
  GgufBuilder b;
  const bool first = s.no == 0;
  b.header(s.tensors.size(), (first ? 1 : 0) + (s.split_keys ? 3 : 0));
  if (first) b.kv_str("general.architecture", "llama");
  if (s.split_keys) {
    b.str("split.no").put<uint32_t>(2).put<uint16_t>(uint16_t(s.no));
    b.str("split.count").put<uint32_t>(2).put<uint16_t>(uint16_t(s.count));
    b.str("split.tensors.count").put<uint32_t>(5).put<int32_t>(int32_t(s.n_tensors));
  }
  for (size_t i = 0; i < s.tensors.size(); ++i) b.tensor(s.tensors[i], {4}, 0, 32 * i);
  b.pad();
  for (const auto& name : s.tensors) {
    for (float x : values_of(name)) b.put<float>(x);
    b.pad();
  }
  return b.bytes;
}

class GgufSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("ridge_split_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(int no, int count = 3, const std::string& prefix = "model") const {
    return split_shard_path((dir_ / prefix).string(), no, count);
  }
  void write(const std::string& file, const std::vector<uint8_t>& bytes) const {
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  // A good three-shard split of six tensors; `change` edits a shard's spec before it is written.
  void write_split(const std::function<void(ShardSpec&)>& change = {}) const {
    const std::vector<std::vector<std::string>> tensors = {{"a", "b"}, {"c", "d"}, {"e", "f"}};
    for (int no = 0; no < 3; ++no) {
      ShardSpec s{tensors[size_t(no)], no};
      if (change) change(s);
      write(path(no), shard_bytes(s));
    }
  }
  // The Error open() throws, which must name `file`.
  std::string open_error(const std::string& file, const std::string& named) const {
    try {
      GgufFile::open(file);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "opening " << file << " did not fail";
    return "";
  }

  fs::path dir_;
};

TEST_F(GgufSplitTest, ShardNamesFollowLlamaCpp) {
  EXPECT_EQ(split_shard_path("dir/m", 0, 3), "dir/m-00001-of-00003.gguf");
  EXPECT_EQ(split_shard_path("m", 11, 12), "m-00012-of-00012.gguf");
  EXPECT_EQ(split_file_paths("d/m-00002-of-00003.gguf"),
            (std::vector<std::string>{"d/m-00001-of-00003.gguf", "d/m-00002-of-00003.gguf", "d/m-00003-of-00003.gguf"}));
  EXPECT_EQ(split_file_paths("d/m.gguf"), std::vector<std::string>{"d/m.gguf"});
  EXPECT_EQ(split_file_paths("d/m-00004-of-00003.gguf"), std::vector<std::string>{"d/m-00004-of-00003.gguf"});
}

TEST_F(GgufSplitTest, OpensAllShardsAsOneFile) {
  write_split();
  const GgufFile file = GgufFile::open(path(0));
  ASSERT_EQ(file.shards().size(), 3u);
  ASSERT_EQ(file.tensors().size(), 6u);
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
  uint64_t total = 0;
  for (int no = 0; no < 3; ++no) {
    EXPECT_EQ(file.shards()[size_t(no)].path, path(no));
    total += fs::file_size(path(no));
  }
  EXPECT_EQ(file.file_size(), total);
  for (const std::string name : {"a", "b", "c", "d", "e", "f"}) {
    const TensorInfo* t = file.find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    std::vector<float> got(4);
    std::memcpy(got.data(), t->data, 16);
    EXPECT_EQ(got, values_of(name)) << name;
  }
  // Each tensor points into its own shard's data section.
  const auto& e = *file.find_tensor("e");
  const auto section = file.shards()[2].data;
  EXPECT_TRUE(e.data >= section.data() && e.data + e.n_bytes <= section.data() + section.size());
}

TEST_F(GgufSplitTest, ALaterShardOpensTheWholeModel) {
  write_split();
  const GgufFile file = GgufFile::open(path(2));
  EXPECT_EQ(file.tensors().size(), 6u);
  EXPECT_EQ(file.shards()[0].path, path(0));
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
}

TEST_F(GgufSplitTest, MissingShardIsNamed) {
  write_split();
  fs::remove(path(1));
  EXPECT_NE(open_error(path(0), path(1)).find("missing"), std::string::npos);
  fs::remove(path(0));
  EXPECT_NE(open_error(path(2), path(0)).find("pass the first shard"), std::string::npos);
}

TEST_F(GgufSplitTest, ShardsThatDisagreeAreRefused) {
  write_split([](ShardSpec& s) {
    if (s.no == 2) s.count = 4;
  });
  EXPECT_NE(open_error(path(0), path(2)).find("split.count is 4"), std::string::npos);

  write_split([](ShardSpec& s) {
    if (s.no == 1) s.tensors = {"c", "a"};
  });
  EXPECT_NE(open_error(path(0), path(1)).find("tensor 'a'"), std::string::npos);

  write_split([](ShardSpec& s) { s.n_tensors = 7; });
  EXPECT_NE(open_error(path(0), path(0)).find("split.tensors.count says 7"), std::string::npos);

  write_split([](ShardSpec& s) {
    if (s.no == 1) s.no = 2;
  });
  EXPECT_NE(open_error(path(0), path(1)).find("split.no is 2"), std::string::npos);

  write_split([](ShardSpec& s) {
    if (s.no == 2) s.split_keys = false;
  });
  open_error(path(0), path(2));
}

TEST_F(GgufSplitTest, ShardThatIsNotGgufIsNamed) {
  write_split();
  write(path(1), std::vector<uint8_t>(64, 'x'));
  EXPECT_NE(open_error(path(0), path(1)).find("not a GGUF file"), std::string::npos);
  fs::remove(path(1));
  fs::create_directory(path(1));
  open_error(path(0), path(1));
  fs::remove(path(1));
  fs::create_symlink(path(1), path(1));  // a loop of links
  open_error(path(0), path(1));
}

TEST_F(GgufSplitTest, HostileSplitKeys) {
  // Split keys in a file whose name does not follow the rule: its siblings cannot be found.
  write(path(0, 3, "renamed"), shard_bytes({{"a"}, 0}));
  const std::string renamed = (dir_ / "renamed.gguf").string();
  fs::rename(path(0, 3, "renamed"), renamed);
  EXPECT_NE(open_error(renamed, renamed).find("-00001-of-00003.gguf"), std::string::npos);
  // split.no outside 0..count-1 and a count of 0.
  write(path(0), shard_bytes({{"a"}, 5}));
  EXPECT_NE(open_error(path(0), path(0)).find("split.no is 5"), std::string::npos);
  write(path(0), shard_bytes({{"a"}, 0, 0}));
  EXPECT_NE(open_error(path(0), path(0)).find("split.count is 0"), std::string::npos);
}

TEST_F(GgufSplitTest, OneShardSplitIsAWholeFile) {
  write(path(0, 1), shard_bytes({{"a", "b"}, 0, 1, 2}));
  const GgufFile file = GgufFile::open(path(0, 1));
  EXPECT_EQ(file.shards().size(), 1u);
  EXPECT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.file_size(), fs::file_size(path(0, 1)));
}

}  // namespace
}  // namespace ridge::gguf
