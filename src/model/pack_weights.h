#pragma once
// Regroups the weight matrices the CPU's AVX-512 VNNI kernels read into their packed layout
// (kernels/cpu/packed_layout.h), once at load. Q4_0, Q4_1, Q8_0 and the K-quants are packed in
// place; Q5_0 is first re-encoded as Q8_0 (kernels/ref/recode.h) into a new buffer, and the old
// bytes given back, and so is Q4_K as Q4_1 where the AMX tiles run the prefill. Skipped on other
// CPUs, or with RIDGE_PACK=0.
#include <memory>
#include <vector>

#include "core/huge_pages.h"
#include "model/weights.h"

namespace ridge {

struct PackedWeights {
  int packed = 0;   // matrices in the packed layout
  int recoded = 0;  // of which re-encoded from another type
  std::vector<std::unique_ptr<HugePageBuffer>> buffers;  // the re-encoded matrices' bytes: keep alive
};

// `data` must be the model's own writable copy of the weights.
PackedWeights pack_weights_for_cpu(ModelWeights& weights);

}  // namespace ridge
