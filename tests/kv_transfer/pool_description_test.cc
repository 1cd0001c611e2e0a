// Two pools' agreement (kv_transfer/pool_description.h): equal descriptions agree, any field of the
// layout that differs or is missing is named, and a block count no block id can name is refused.
#include <gtest/gtest.h>

#include "kv_transfer/pool_description.h"

namespace ridge::kvx {
namespace {

nlohmann::json pool() {
  return {{"model", "abc"}, {"n_layer", 2}, {"n_kv_heads", 2}, {"head_dim", 64}, {"block_size", 16}, {"dtype", "f16"},
          {"keys_only", false}, {"n_blocks", 100}};
}

TEST(PoolDescription, NamesWhatDisagrees) {
  EXPECT_EQ(incompatibility(pool(), pool()), "");
  nlohmann::json other = pool();
  other["n_blocks"] = 7;  // the block count may differ
  EXPECT_EQ(incompatibility(pool(), other), "");
  other["head_dim"] = 128;
  EXPECT_NE(incompatibility(pool(), other).find("head_dim"), std::string::npos);
  other = pool();
  other.erase("dtype");
  EXPECT_NE(incompatibility(pool(), other).find("dtype"), std::string::npos);
  for (const nlohmann::json& blocks : {nlohmann::json(0), nlohmann::json("100"), nlohmann::json(int64_t(1) << 40)}) {
    other = pool();
    other["n_blocks"] = blocks;
    EXPECT_NE(incompatibility(pool(), other), "") << blocks.dump();
  }
}

}  // namespace
}  // namespace ridge::kvx
