// The NCCL communicator on one rank (the most one device can check): every collective gives back
// its input. Skipped, never passed, without a CUDA device; compiled only in builds with NCCL.
#include <gtest/gtest.h>

#include "dist/nccl/nccl_built.h"

namespace ridge::dist {
namespace {

TEST(NcclBuilt, MatchesTheBuild) {
#if defined(RIDGE_HAVE_NCCL)
  EXPECT_TRUE(nccl_built());
#else
  EXPECT_FALSE(nccl_built());
#endif
}

}  // namespace
}  // namespace ridge::dist

#if defined(RIDGE_HAVE_NCCL)
#include <cstdint>
#include <numeric>
#include <vector>

#include "../cuda/cuda_test_util.h"
#include "dist/nccl/nccl_communicator.h"

namespace ridge::dist {
namespace {

using cuda::test::from_device;
using cuda::test::to_device;

std::vector<float> iota(size_t n, float first) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

class NcclOneRank : public ::testing::Test {
 protected:
  void SetUp() override {
    RIDGE_REQUIRE_CUDA();
    local_ = make_local_communicator();
    comm_ = make_nccl_communicator(*local_, 0);
  }
  std::unique_ptr<Communicator> local_, comm_;
};

TEST_F(NcclOneRank, IsOneRank) {
  EXPECT_EQ(comm_->backend(), "nccl");
  EXPECT_EQ(comm_->rank(), 0);
  EXPECT_EQ(comm_->size(), 1);
  comm_->barrier();
  auto sub = comm_->split(0, 0);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(sub->backend(), "nccl");
}

TEST_F(NcclOneRank, AllReduceKeepsTheData) {
  const auto want = iota(1000, -3.5f);
  auto d = to_device(want);
  comm_->all_reduce_sum(d.as<float>(), int64_t(want.size()));
  EXPECT_EQ(from_device<float>(d.get(), want.size()), want);
}

TEST_F(NcclOneRank, AllGatherAndBroadcastCopyTheBytes) {
  const auto want = iota(37, 1.0f);
  auto send = to_device(want);
  auto recv = to_device(std::vector<float>(want.size(), 0.0f));
  comm_->all_gather(send.get(), int64_t(want.size() * sizeof(float)), recv.get());
  EXPECT_EQ(from_device<float>(recv.get(), want.size()), want);
  auto recv_v = to_device(std::vector<float>(want.size(), 0.0f));
  const std::vector<int64_t> counts{int64_t(want.size() * sizeof(float))};
  comm_->all_gather_v(send.get(), counts[0], recv_v.get(), counts);
  EXPECT_EQ(from_device<float>(recv_v.get(), want.size()), want);
  comm_->broadcast(send.get(), int64_t(want.size() * sizeof(float)), 0);
  EXPECT_EQ(from_device<float>(send.get(), want.size()), want);
}

TEST_F(NcclOneRank, ReduceScatterIsTheRanksSlice) {
  const auto want = iota(64, 0.5f);
  auto send = to_device(want);
  auto recv = to_device(std::vector<float>(want.size(), 0.0f));
  comm_->reduce_scatter_sum(send.as<float>(), recv.as<float>(), int64_t(want.size()));
  EXPECT_EQ(from_device<float>(recv.get(), want.size()), want);
}

TEST_F(NcclOneRank, AllToAllAndGatherMoveToTheOffsets) {
  const std::vector<float> src = iota(8, 10.0f);
  auto send = to_device(src);
  auto recv = to_device(std::vector<float>(12, 0.0f));
  // Floats 2..5 of send land at floats 6..9 of recv.
  const std::vector<int64_t> bytes{4 * sizeof(float)}, send_at{2 * sizeof(float)}, recv_at{6 * sizeof(float)};
  comm_->all_to_all_v(send.get(), bytes, send_at, recv.get(), bytes, recv_at);
  std::vector<float> want(12, 0.0f);
  std::copy(src.begin() + 2, src.begin() + 6, want.begin() + 6);
  EXPECT_EQ(from_device<float>(recv.get(), want.size()), want);

  auto gathered = to_device(std::vector<float>(src.size(), 0.0f));
  const std::vector<int64_t> counts{int64_t(src.size() * sizeof(float))};
  comm_->gather_v(send.get(), counts[0], gathered.get(), counts, 0);
  EXPECT_EQ(from_device<float>(gathered.get(), src.size()), src);
}

}  // namespace
}  // namespace ridge::dist
#endif
