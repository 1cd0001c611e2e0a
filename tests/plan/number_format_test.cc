// The planner's formats agree with the bytes ridge's files hold: a serving format that has a GGUF
// type (nvfp4, mxfp4) prices the same bits per value as that type's blocks, and every GGUF type's
// bits are its block bytes over its block values.
#include <gtest/gtest.h>

#include "plan/number_format.h"

namespace ridge::plan {
namespace {

TEST(NumberFormat, ServingFormatsWithAGgufTypePriceItsBlocks) {
  for (const auto& [name, type] : {std::pair{"nvfp4", DType::NVFP4}, std::pair{"mxfp4", DType::MXFP4}}) {
    EXPECT_DOUBLE_EQ(number_format(name).bits, number_format_from_dtype(type).bits) << name;
    EXPECT_DOUBLE_EQ(number_format(name).bits, 8.0 * double(dtype_row_bytes(type, 4096)) / 4096) << name;
  }
  EXPECT_DOUBLE_EQ(number_format("nvfp4").bits, 4.5);
  EXPECT_DOUBLE_EQ(number_format("mxfp4").bits, 4.25);
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::BF16})
    EXPECT_DOUBLE_EQ(number_format(dtype_name(t)).bits, 8.0 * double(dtype_row_bytes(t, 4096)) / 4096) << dtype_name(t);
}

}  // namespace
}  // namespace ridge::plan
