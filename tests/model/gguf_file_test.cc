// Valid GGUF files: every metadata value type round-trips, accessors check types, tensors land in place.
#include "model/gguf/gguf_file.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "gguf_test_builder.h"
#include "kernels/ref/dequant.h"

namespace ridge::gguf {
namespace {

using testing::GgufBuilder;

enum : uint32_t { kU8, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };

std::vector<uint8_t> every_value_type(uint32_t version) {
  GgufBuilder b;
  b.header(1, 16, version);
  b.str("u8").put<uint32_t>(kU8).put<uint8_t>(250);
  b.str("i8").put<uint32_t>(kI8).put<int8_t>(-100);
  b.str("u16").put<uint32_t>(kU16).put<uint16_t>(65000);
  b.str("i16").put<uint32_t>(kI16).put<int16_t>(-30000);
  b.str("u32").put<uint32_t>(kU32).put<uint32_t>(4000000000u);
  b.str("i32").put<uint32_t>(kI32).put<int32_t>(-2000000000);
  b.str("f32").put<uint32_t>(kF32).put<float>(0.1f);
  b.str("bool").put<uint32_t>(kBool).put<uint8_t>(1);
  b.str("string").put<uint32_t>(kString).str("héllo\nworld");
  b.str("u64").put<uint32_t>(kU64).put<uint64_t>(~uint64_t(0));
  b.str("i64").put<uint32_t>(kI64).put<int64_t>(-(int64_t(1) << 62));
  b.str("f64").put<uint32_t>(kF64).put<double>(1e-300);
  b.str("empty").put<uint32_t>(kString).str("");
  b.str("ints").put<uint32_t>(kArray).put<uint32_t>(kI32).put<uint64_t>(3).put<int32_t>(1).put<int32_t>(-2).put<int32_t>(3);
  b.str("strings").put<uint32_t>(kArray).put<uint32_t>(kString).put<uint64_t>(2).str("a").str("bc");
  b.str("nested").put<uint32_t>(kArray).put<uint32_t>(kArray).put<uint64_t>(2);
  b.put<uint32_t>(kBool).put<uint64_t>(1).put<uint8_t>(0);
  b.put<uint32_t>(kF64).put<uint64_t>(0);
  b.tensor("t", {2, 3}, 1, 0).pad();
  for (int i = 0; i < 6; ++i) b.put<uint16_t>(uint16_t(0x3c00 + i));  // f16 1.0, 1.0009765625, ...
  return b.bytes;
}

TEST(GgufFile, EveryValueTypeRoundTrips) {
  for (uint32_t version : {2u, 3u}) {
    const auto bytes = every_value_type(version);
    const auto file = GgufFile::parse(bytes);
    EXPECT_EQ(file.version(), version);
    ASSERT_EQ(file.metadata().size(), 16u);
    EXPECT_EQ(file.get_int("u8"), 250);
    EXPECT_EQ(file.get_int("i8"), -100);
    EXPECT_EQ(file.get_int("u16"), 65000);
    EXPECT_EQ(file.get_int("i16"), -30000);
    EXPECT_EQ(file.get_int("u32"), 4000000000);
    EXPECT_EQ(file.get_int("i32"), -2000000000);
    EXPECT_EQ(file.get_double("f32"), double(0.1f));
    EXPECT_EQ(file.get_bool("bool"), true);
    EXPECT_EQ(file.get_string("string"), "héllo\nworld");
    EXPECT_EQ(std::get<uint64_t>(file.get("u64").data), ~uint64_t(0));
    EXPECT_EQ(file.get_int("i64"), -(int64_t(1) << 62));
    EXPECT_EQ(file.get_double("f64"), 1e-300);
    EXPECT_EQ(file.get_string("empty"), "");
    const auto& ints = file.get("ints");
    EXPECT_EQ(ints.array_type, ValueType::I32);
    ASSERT_EQ(ints.as_array().size(), 3u);
    EXPECT_EQ(ints.as_array()[1].as_int(), -2);
    EXPECT_EQ(file.get("strings").as_array()[1].as_string(), "bc");
    const auto& nested = file.get("nested").as_array();
    ASSERT_EQ(nested.size(), 2u);
    EXPECT_EQ(nested[0].array_type, ValueType::BOOL);
    EXPECT_FALSE(nested[0].as_array()[0].as_bool());
    EXPECT_TRUE(nested[1].as_array().empty());
    EXPECT_EQ(file.metadata()[0].first, "u8");  // file order is kept
  }
}

TEST(GgufFile, AccessorsNameTheKeyOnMismatch) {
  const auto bytes = every_value_type(3);
  const auto file = GgufFile::parse(bytes);
  EXPECT_THROW(file.get("missing"), Error);
  EXPECT_FALSE(file.get_int("missing").has_value());
  try {
    (void)file.get_string("u32");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "metadata 'u32' is u32, expected a string");
  }
  EXPECT_THROW((void)file.get_int("u64"), Error);  // does not fit int64
  EXPECT_THROW((void)file.get_int("string"), Error);
  EXPECT_EQ(file.get("strings").to_display_string(), "[2 x string] \"a\", \"bc\"");
}

TEST(GgufFile, TensorsPointIntoTheData) {
  const auto bytes = every_value_type(3);
  const auto file = GgufFile::parse(bytes);
  const auto* t = file.find_tensor("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, DType::F16);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->n_elements, 6);
  EXPECT_EQ(t->n_bytes, 12);
  EXPECT_EQ(file.data_offset() % 32, 0u);
  EXPECT_EQ(t->data, bytes.data() + file.data_offset());
  std::vector<float> values(6);
  ref::dequantize_row(t->type, t->data, values.data(), 6);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[5], 1.0f + 5.0f / 1024);
  EXPECT_EQ(file.find_tensor("nope"), nullptr);
}

TEST(GgufFile, NoTensorsNeedsNoDataSection) {
  const auto bytes = GgufBuilder().header(0, 1).kv_u32("x", 7).bytes;
  const auto file = GgufFile::parse(bytes);
  EXPECT_TRUE(file.tensors().empty());
  EXPECT_EQ(file.get_int("x"), 7);
}

}  // namespace
}  // namespace ridge::gguf
