// probe --dist needs the ranks of an MPI job: alone it says how to start it.
#include <gtest/gtest.h>

#include "bench/probe_dist.h"
#include "core/error.h"

namespace ridge::bench {
namespace {

TEST(ProbeDist, OneRankFailsWithHowToStartIt) {
  const auto local = dist::make_local_communicator();
  try {
    run_dist_probe(*local, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mpirun -np 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ridge::bench
