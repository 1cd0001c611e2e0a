// Device selection: names, and what cpu / cuda / auto resolve to on this machine; the engine's
// CPU pass through the backend interface is ModelForward's.
#include <gtest/gtest.h>

#include "backend/paged_forward.h"
#include "core/error.h"
#include "model/forward.h"
#include "tiny_model.h"

namespace ridge {
namespace {

TEST(CudaDevice, NamesRoundTrip) {
  for (Device d : {Device::Cpu, Device::Cuda, Device::Auto}) EXPECT_EQ(parse_device(device_name(d)), d);
  EXPECT_EQ(parse_device("gpu"), std::nullopt);
  EXPECT_THROW(parse_device_or_fail("tpu"), Error);
}

TEST(CudaDevice, AutoPicksTheGpuOnlyWhenThereIsOne) {
  EXPECT_EQ(resolve_device(Device::Cpu), Device::Cpu);
  if (cuda_device_count() > 0) {
    EXPECT_TRUE(cuda_built());
    EXPECT_EQ(resolve_device(Device::Auto), Device::Cuda);
    EXPECT_EQ(resolve_device(Device::Cuda), Device::Cuda);
  } else {
    EXPECT_EQ(resolve_device(Device::Auto), Device::Cpu);
    try {
      resolve_device(Device::Cuda);
      FAIL() << "--device cuda without a GPU must fail";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--device cuda"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaDevice, CpuPagedForwardIsModelForward) {
  Model model;
  test::with_tiny_model_file(test::tiny_options(DType::Q8_0, 64, 4, 128, 64), "device_test",
                             [&](const std::string& path) { model = load_model(path); });

  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5};
  const std::vector<BlockId> blocks = {2, 0};
  const SequenceRun run{5, 0, blocks, LogitsWanted::All};
  const TokenBatch batch{tokens, std::span(&run, 1)};
  std::vector<float> want, got;
  ModelForward forward(model, 1);
  KvStore store(forward.kv_layout(4, 3, KvDtype::F16));
  forward.forward(batch, store, want);
  const auto paged = make_paged_forward(model, {Device::Cpu, 1, KvDtype::F16, 4, 3, 64});
  EXPECT_EQ(paged->device(), Device::Cpu);
  paged->forward(batch, got);
  EXPECT_EQ(want, got);
  paged->copy_block(2, 1);  // copy-on-write reaches the owned store
  const std::vector<BlockId> copied = {1, 0};
  const std::vector<int32_t> next = {6};
  const SequenceRun a{1, 5, blocks, LogitsWanted::Last}, b{1, 5, copied, LogitsWanted::Last};
  std::vector<float> la, lb;
  paged->forward(TokenBatch{next, std::span(&a, 1)}, la);
  paged->forward(TokenBatch{next, std::span(&b, 1)}, lb);
  EXPECT_EQ(la, lb);
}

}  // namespace
}  // namespace ridge
