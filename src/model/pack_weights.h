#pragma once
// Regroups the weight matrices the CPU's AVX-512 VNNI kernels read into their packed layout
// (kernels/cpu/packed_layout.h), in place, once at load. Skipped on other CPUs, or with RIDGE_PACK=0.
#include "model/weights.h"

namespace ridge {

// `data` must be the model's own writable copy of the weights. Returns the matrices packed.
int pack_weights_for_cpu(ModelWeights& weights);

}  // namespace ridge
