#pragma once
// Shared by the tests that run CUDA kernels: skip (never pass) without a device, and move vectors
// to and from device memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cuda/device_buffer.h"
#include "kernels/cuda/cuda_kernels.h"

#define RIDGE_REQUIRE_CUDA()                                                \
  do {                                                                      \
    if (::ridge::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

namespace ridge::cuda::test {

template <typename T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b(std::max<int64_t>(16, int64_t(v.size() * sizeof(T))));
  copy_to_device(b.get(), v.data(), int64_t(v.size() * sizeof(T)), nullptr);
  device_sync();
  return b;
}

template <typename T>
std::vector<T> from_device(const void* p, size_t n) {
  std::vector<T> v(n);
  copy_to_host(v.data(), p, int64_t(n * sizeof(T)), nullptr);
  device_sync();
  return v;
}

// |got - want| <= abs + rel * |want| for every element; reports the first that is not.
inline ::testing::AssertionResult all_near(const std::vector<float>& got, const std::vector<float>& want, float abs,
                                           float rel) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= abs + rel * std::fabs(want[i])))
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs " << want[i];
  return ::testing::AssertionSuccess();
}

}  // namespace ridge::cuda::test
