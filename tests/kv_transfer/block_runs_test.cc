#include <gtest/gtest.h>

#include "core/error.h"
#include "kv_transfer/block_runs.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {
namespace {

TEST(BlockRuns, ContiguousOnBothSidesIsOneRun) {
  const std::vector<BlockId> src = {4, 5, 6, 7}, dst = {10, 11, 12, 13};
  const auto runs = coalesce_blocks(src, dst);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].src, 4);
  EXPECT_EQ(runs[0].dst, 10);
  EXPECT_EQ(runs[0].n, 4);
}

TEST(BlockRuns, ABreakOnEitherSideStartsARun) {
  const std::vector<BlockId> src = {0, 1, 2, 9, 10, 11}, dst = {5, 6, 8, 9, 10, 20};
  const auto runs = coalesce_blocks(src, dst);
  ASSERT_EQ(runs.size(), 4u);  // {0,1}->{5,6}; 2->8; {9,10}->{9,10}; 11->20
  EXPECT_EQ(runs[0].n, 2);
  EXPECT_EQ(runs[1].src, 2);
  EXPECT_EQ(runs[1].dst, 8);
  EXPECT_EQ(runs[2].n, 2);
  EXPECT_EQ(runs[3].dst, 20);
  int total = 0;
  for (const auto& r : runs) total += r.n;
  EXPECT_EQ(total, 6);
}

TEST(BlockRuns, MismatchedLengthsAreAnError) {
  const std::vector<BlockId> src = {1, 2}, dst = {1};
  EXPECT_THROW(coalesce_blocks(src, dst), Error);
  EXPECT_TRUE(coalesce_blocks({}, {}).empty());
}

TEST(Base64, RoundTripsEveryLengthAndRejectsGarbage) {
  std::string bytes;
  for (int n = 0; n < 40; ++n) {
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
    bytes += char(n * 37 + 11);
  }
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_THROW(base64_decode("abc"), Error);
  EXPECT_THROW(base64_decode("ab!d"), Error);
  EXPECT_THROW(base64_decode("a=bc"), Error);
}

TEST(LoopbackTransport, PutsLandInThePeersRegionAndTheNoteFollows) {
  auto sender = make_loopback_transport(), receiver = make_loopback_transport();
  auto* region = static_cast<uint8_t*>(receiver->allocate(64));
  std::string note;
  receiver->on_note([&](const std::string& n) { note = n; });
  const std::string data = "0123456789";
  sender->put(receiver->address(), {{data.data(), 0, 20, 10}});
  bool done = false;
  sender->notify(receiver->address(), "landed", [&](bool ok, const std::string&) { done = ok; });
  EXPECT_TRUE(done);
  EXPECT_EQ(note, "landed");
  EXPECT_EQ(std::string(reinterpret_cast<char*>(region) + 20, 10), data);
  EXPECT_EQ(region[19], 0);
  EXPECT_THROW(sender->put(receiver->address(), {{data.data(), 0, 60, 10}}), Error);  // outside the region
  bool failed = false;
  sender->notify("loopback:nobody", "x", [&](bool ok, const std::string&) { failed = !ok; });
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace ridge::kvx
