#pragma once
// Communicator over NCCL between CUDA devices, one device per rank. Built when CMake finds CUDA,
// MPI and NCCL (RIDGE_HAVE_NCCL; nccl_built() says so at run time).
//
// Pointers are device memory on this rank's device, and must be ready: the caller synchronizes
// the stream that wrote them (NCCL runs on a stream of its own). Every call returns when the
// transfer is done. NCCL has no tags: send/recv between two ranks match in the order they are
// called, whatever the tag.
#include <memory>

#include "dist/communicator.h"

namespace ridge::dist {

// Every rank of `bootstrap` (host memory, MPI or local) calls it: rank 0 makes the NCCL unique
// id, the bootstrap broadcasts it, and each rank joins with its bootstrap rank on `cuda_device`.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int cuda_device);

}  // namespace ridge::dist
