#pragma once
// Weight matrices for the microbenchmarks: random valid rows of any weight type, sized in bytes
// so every type is measured on the same footprint (one that fits in L2, one several times the LLC).
#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "kernels/ref/matmul.h"

namespace ridge::microbench {

enum class Footprint { L2, Dram };
std::string footprint_name(Footprint f);

// Bytes of weights for a footprint on this machine (from machine.json, else sysfs): half of L2,
// or max(256 MiB, 4 × L3) but at most an eighth of memory.
int64_t footprint_bytes(Footprint f);

struct BenchMatrix {
  std::shared_ptr<uint8_t[]> bytes;
  ref::WeightMatrix view;
  int64_t size_bytes;
};

// A rows × kCols matrix of `type` filling about footprint_bytes(f); the most recent DRAM-sized
// matrix is kept for reuse, older ones are freed.
const BenchMatrix& bench_matrix(DType type, Footprint f);

inline constexpr int64_t kCols = 4096;  // a multiple of every block size

}  // namespace ridge::microbench
