#include "core/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"

namespace ridge {

HugePageBuffer::HugePageBuffer(size_t size) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("cannot allocate {} bytes for the weights", size);
  ::madvise(p, size, MADV_HUGEPAGE);  // advisory: without THP the buffer still works
  data_ = static_cast<uint8_t*>(p);
}

HugePageBuffer::~HugePageBuffer() { ::munmap(data_, size_); }

void release_pages(void* p, size_t size) {
  const auto page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(p) + page - 1) / page * page, end = (uintptr_t(p) + size) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace ridge
