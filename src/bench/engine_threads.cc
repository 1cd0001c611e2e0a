#include "bench/engine_threads.h"

#include <omp.h>

namespace ridge::bench {

// The reference kernels parallelise with OpenMP; when the forward pass gets its own thread pool
// knob, this is the call to change.
void set_engine_threads(int threads) { omp_set_num_threads(threads); }

}  // namespace ridge::bench
