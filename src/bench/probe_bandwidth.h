#pragma once
// Sustained memory read bandwidth: threads stream through a buffer much larger than the
// last-level cache with the widest loads the CPU has, summing what they read so no load can be dropped.
#include <cstddef>
#include <cstdint>

namespace ridge::bench {

// An anonymous mapping (transparent huge pages requested), first touched by the threads that
// will read it so its pages sit near them.
class ReadBuffer {
 public:
  ReadBuffer(size_t bytes, int touch_threads);
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

// One pass over the whole buffer split into `threads` contiguous slices, one per pinned thread.
// Returns GB/s (1e9 bytes per second).
double read_bandwidth_gbs(const ReadBuffer& buffer, int threads);

// The load width used ("avx512", "avx2" or "scalar").
const char* read_kernel_name();

}  // namespace ridge::bench
