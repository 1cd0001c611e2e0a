#pragma once
// Error checks shared by the CUDA files of ridge_cuda (host side; no CUDA header needed here).
namespace ridge::cuda {

// Throws ridge::Error naming `what` when `status` (a cudaError_t) is not success.
void check_cuda(int status, const char* what);
// After a kernel launch: the launch's error, if any, as above.
void check_launch(const char* kernel);

}  // namespace ridge::cuda
