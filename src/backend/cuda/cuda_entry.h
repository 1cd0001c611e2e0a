#pragma once
// What backend/device.cc calls when the binary has the CUDA backend. No CUDA header needed.
#include <memory>

#include "backend/cuda_tools.h"
#include "backend/paged_forward.h"

namespace ridge::cuda {

std::unique_ptr<PagedForward> make_cuda_paged_forward(const Model& model, const PagedForwardConfig& config);
nlohmann::json run_bench(const CudaBenchOptions& options);
nlohmann::json run_probe(int repetitions);

}  // namespace ridge::cuda
