#pragma once
// Ranks as threads of one process, over shared memory: the same collectives and messages as the
// MPI backend, for tests of split models without mpirun (and a one-host split without MPI).
#include <memory>
#include <vector>

#include "dist/communicator.h"

namespace ridge::dist {

// n communicators of one group; communicator r is rank r and must be used by one thread.
std::vector<std::unique_ptr<Communicator>> make_thread_group(int n);

}  // namespace ridge::dist
