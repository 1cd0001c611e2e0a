// hf:// names where models are named for serving: `-m hf://ORG/REPO[:QUANT]` and `-m NAME=hf://...`.
#include <gtest/gtest.h>

#include "core/error.h"
#include "models/model_source.h"

namespace ridge::testing {
namespace {

TEST(HubModelName, ServedUnderTheRepositorysName) {
  EXPECT_EQ(models::default_model_name("hf://org/SmolLM2-135M-Instruct-GGUF:Q4_K_M"), "SmolLM2-135M-Instruct-GGUF");
  const models::ModelSource plain = models::parse_model_arg("hf://Qwen/Qwen2.5-0.5B-Instruct@main");
  EXPECT_EQ(plain.name, "Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(plain.source, "hf://Qwen/Qwen2.5-0.5B-Instruct@main");
  const models::ModelSource named = models::parse_model_arg("coder=hf://org/repo:Q8_0");
  EXPECT_EQ(named.name, "coder");
  EXPECT_EQ(named.source, "hf://org/repo:Q8_0");
  EXPECT_THROW(models::parse_model_arg("hf://org/.."), Error);
}

}  // namespace
}  // namespace ridge::testing
