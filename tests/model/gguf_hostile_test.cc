// Broken and hostile GGUF files: each must be rejected with a ridge::Error that names the problem.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gguf_test_builder.h"
#include "model/gguf/gguf_file.h"

namespace ridge::gguf {
namespace {

using testing::GgufBuilder;
using testing::small_valid_file;

constexpr uint32_t kF32 = 0, kQ8_0 = 8, kString = 8, kArray = 9;

// Parses `bytes` and returns the error message; fails the test when parsing succeeds.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::parse(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse succeeded";
  return "";
}

#define EXPECT_PARSE_ERROR(bytes, needle) EXPECT_NE(parse_error(bytes).find(needle), std::string::npos) << parse_error(bytes)

TEST(GgufHostile, SmallValidFileParses) {
  const auto bytes = small_valid_file();
  const auto file = GgufFile::parse(bytes);
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensors()[1].n_bytes, 34);
  EXPECT_EQ(file.tensors()[1].data + 34, bytes.data() + bytes.size());
}

TEST(GgufHostile, BadMagic) {
  auto bytes = small_valid_file();
  bytes[0] = 'X';
  EXPECT_PARSE_ERROR(bytes, "bad magic");
  EXPECT_PARSE_ERROR(std::vector<uint8_t>{}, "truncated file: magic");
}

TEST(GgufHostile, UnsupportedVersions) {
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 0, 1).bytes, "version 1 is not supported");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 0, 99).bytes, "unsupported GGUF version 99");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 0, 0x03000000).bytes, "big-endian");
  EXPECT_NO_THROW(GgufFile::parse(GgufBuilder().header(0, 0, 2).bytes));
}

TEST(GgufHostile, EveryTruncationIsRejected) {
  const auto bytes = small_valid_file();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
    EXPECT_NE(parse_error(prefix).find("truncated"), std::string::npos) << "prefix of " << n << " bytes: " << parse_error(prefix);
  }
}

TEST(GgufHostile, HugeCounts) {
  EXPECT_PARSE_ERROR(GgufBuilder().header(uint64_t(1) << 62, 0).bytes, "tensor count");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, ~uint64_t(0)).bytes, "metadata count");
  auto array = GgufBuilder().header(0, 1).str("k").put<uint32_t>(kArray).put<uint32_t>(0).put<uint64_t>(uint64_t(1) << 40);
  EXPECT_PARSE_ERROR(array.bytes, "array items");
  auto small_array = GgufBuilder().header(0, 1).str("k").put<uint32_t>(kArray).put<uint32_t>(kString).put<uint64_t>(1000);
  small_array.fill(100);
  EXPECT_PARSE_ERROR(small_array.bytes, "claims 1000 array items");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).put<uint64_t>(~uint64_t(0)).fill(20).bytes, "metadata key at offset 32 claims");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).put<uint64_t>(1000).fill(20).bytes, "claims 1000 bytes, only 20 left");
  auto value = GgufBuilder().header(0, 1).str("k").put<uint32_t>(kString).put<uint64_t>(uint64_t(1) << 33);
  EXPECT_PARSE_ERROR(value.bytes, "metadata string at offset");
}

TEST(GgufHostile, TensorOffsetPastEnd) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {8}, kF32, 64).pad();
  b.fill(32);
  EXPECT_PARSE_ERROR(b.bytes, "tensor 'w' needs 32 bytes at offset 64");
  auto wrap = GgufBuilder().header(1, 0).tensor("w", {8}, kF32, ~uint64_t(0) - 31).pad();
  wrap.fill(32);
  EXPECT_PARSE_ERROR(wrap.bytes, "tensor 'w'");
}

TEST(GgufHostile, MisalignedOffset) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {8}, kF32, 4).pad();
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "offset 4 is not aligned to 32");
}

TEST(GgufHostile, UnknownTensorType) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {8}, 4, 0).pad();  // 4 was Q4_2, long removed
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "tensor 'w' has unknown type id 4");
  auto c = GgufBuilder().header(1, 0).tensor("w", {8}, 0xffffffff, 0).pad();
  c.fill(64);
  EXPECT_PARSE_ERROR(c.bytes, "unknown type id 4294967295");
  auto d = GgufBuilder().header(1, 0).tensor("w", {8}, 1000, 0).pad();  // ridge's own F8_E4M3: never a GGUF type
  d.fill(64);
  EXPECT_PARSE_ERROR(d.bytes, "unknown type id 1000");
}

TEST(GgufHostile, UnknownMetadataValueType) {
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).str("k").put<uint32_t>(13).put<uint64_t>(0).bytes, "'k' has unknown value type 13");
  auto in_array = GgufBuilder().header(0, 1).str("k").put<uint32_t>(kArray).put<uint32_t>(77).put<uint64_t>(0);
  EXPECT_PARSE_ERROR(in_array.bytes, "unknown value type 77");
}

TEST(GgufHostile, BadDimensionCounts) {
  auto zero = GgufBuilder().header(1, 0).tensor("w", {}, kF32, 0).pad();
  zero.fill(64);
  EXPECT_PARSE_ERROR(zero.bytes, "tensor 'w' has 0 dimensions");
  auto five = GgufBuilder().header(1, 0).tensor("w", {1, 1, 1, 1, 1}, kF32, 0).pad();
  five.fill(64);
  EXPECT_PARSE_ERROR(five.bytes, "tensor 'w' has 5 dimensions");
}

TEST(GgufHostile, ZeroDimension) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {8, 0}, kF32, 0).pad();
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "tensor 'w' dimension 1 is 0");
}

TEST(GgufHostile, ElementCountOverflow) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {uint64_t(1) << 32, uint64_t(1) << 32}, kF32, 0).pad();
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "tensor 'w' size overflows");
  auto bytes = GgufBuilder().header(1, 0).tensor("w", {uint64_t(1) << 62}, kF32, 0).pad();  // elements fit, bytes do not
  bytes.fill(64);
  EXPECT_PARSE_ERROR(bytes.bytes, "tensor 'w' size overflows");
  auto negative = GgufBuilder().header(1, 0).tensor("w", {~uint64_t(0)}, kF32, 0).pad();
  negative.fill(64);
  EXPECT_PARSE_ERROR(negative.bytes, "tensor 'w' dimension 0");
}

TEST(GgufHostile, RowNotAWholeNumberOfBlocks) {
  auto b = GgufBuilder().header(1, 0).tensor("w", {33}, kQ8_0, 0).pad();
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "not a multiple of the Q8_0 block size 32");
}

TEST(GgufHostile, DuplicateKeysAndTensors) {
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).bytes, "duplicate metadata key 'a.b'");
  auto b = GgufBuilder().header(2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32).pad();
  b.fill(64);
  EXPECT_PARSE_ERROR(b.bytes, "duplicate tensor name 'w'");
}

TEST(GgufHostile, BadAlignment) {
  for (uint32_t alignment : {0u, 3u, 48u, 1u << 30})
    EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).kv_u32("general.alignment", alignment).bytes, "general.alignment");
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).kv_str("general.alignment", "32").bytes, "general.alignment is string");
  auto negative = GgufBuilder().header(0, 1).str("general.alignment").put<uint32_t>(5).put<int32_t>(-32);
  EXPECT_PARSE_ERROR(negative.bytes, "general.alignment -32");
  auto ok = GgufBuilder().header(1, 1).kv_u32("general.alignment", 64).tensor("w", {8}, kF32, 0).pad(64);
  ok.fill(32);
  EXPECT_EQ(GgufFile::parse(ok.bytes).data_offset() % 64, 0u);
}

TEST(GgufHostile, ArraysNestedTooDeep) {
  auto b = GgufBuilder().header(0, 1).str("k").put<uint32_t>(kArray);
  for (int depth = 0; depth < 6; ++depth) b.put<uint32_t>(kArray).put<uint64_t>(1);
  b.put<uint32_t>(0).put<uint64_t>(0);
  EXPECT_PARSE_ERROR(b.bytes, "'k' nests arrays deeper than");
}

TEST(GgufHostile, BadBool) {
  EXPECT_PARSE_ERROR(GgufBuilder().header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2).bytes, "'k' has bool value 2");
}

TEST(GgufHostile, OpenNamesThePath) {
  try {
    GgufFile::open("/nonexistent/model.gguf");
    FAIL() << "open succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ridge::gguf
