#pragma once
// Owning handles of device memory (cudaMalloc) and page-locked host memory, so every buffer of the
// CUDA backend is freed exactly once. Contents are not kept when a buffer grows.
#include <cstdint>
#include <utility>

#include "kernels/cuda/cuda_kernels.h"

namespace ridge::cuda {

template <void* (*Alloc)(int64_t), void (*Free)(void*)>
class OwnedBytes {
 public:
  OwnedBytes() = default;
  explicit OwnedBytes(int64_t bytes) : p_(Alloc(bytes)), bytes_(bytes) {}
  ~OwnedBytes() { Free(p_); }
  OwnedBytes(OwnedBytes&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  OwnedBytes& operator=(OwnedBytes&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  OwnedBytes(const OwnedBytes&) = delete;
  OwnedBytes& operator=(const OwnedBytes&) = delete;

  // At least `bytes`; true when it had to reallocate (device pointers held elsewhere are stale).
  bool reserve(int64_t bytes) {
    if (bytes <= bytes_) return false;
    Free(p_);
    p_ = nullptr;
    bytes_ = 0;
    p_ = Alloc(bytes);
    bytes_ = bytes;
    return true;
  }
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  int64_t bytes_ = 0;
};

using DeviceBuffer = OwnedBytes<device_malloc, device_free>;
using PinnedBuffer = OwnedBytes<pinned_malloc, pinned_free>;

}  // namespace ridge::cuda
