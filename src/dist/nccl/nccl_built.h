#pragma once
// Whether this build has the NCCL communicator (CUDA, MPI and NCCL all found by CMake).
namespace ridge::dist {

bool nccl_built();

}  // namespace ridge::dist
