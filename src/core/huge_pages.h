#pragma once
// Anonymous memory advised for transparent huge pages. Decode reads every weight once per token:
// from 4 KiB pages, page-table walks and TLB misses cost more than the reads on virtual machines.
#include <cstddef>
#include <cstdint>

namespace ridge {

class HugePageBuffer {
 public:
  explicit HugePageBuffer(size_t size);  // error when the memory cannot be had
  ~HugePageBuffer();
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Returns the whole pages inside [p, p + size) of anonymous memory to the system (they read as
// zeros afterwards): for bytes that are dead but share a buffer with live ones.
void release_pages(void* p, size_t size);

}  // namespace ridge
