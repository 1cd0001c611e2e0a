#include "backend/device.h"

#include "backend/cuda_tools.h"
#include "backend/paged_forward.h"
#include "core/error.h"
#include "dist/lockstep.h"

#if RIDGE_HAVE_CUDA
#include "backend/cuda/cuda_entry.h"
#include "kernels/cuda/cuda_kernels.h"
#endif

namespace ridge {

std::string_view device_name(Device device) {
  switch (device) {
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
    case Device::Auto: return "auto";
  }
  return "?";
}

std::optional<Device> parse_device(std::string_view name) {
  for (Device d : {Device::Cpu, Device::Cuda, Device::Auto})
    if (name == device_name(d)) return d;
  return std::nullopt;
}

Device parse_device_or_fail(std::string_view name) {
  const auto d = parse_device(name);
  if (!d) fail("unknown --device '{}' (cpu, cuda, auto)", name);
  return *d;
}

#if RIDGE_HAVE_CUDA
bool cuda_built() { return true; }
int cuda_device_count() { return cuda::device_count(); }
#else
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
#endif

Device resolve_device(Device d) {
  if (d == Device::Cpu) return d;
  const int n = cuda_device_count();
  if (d == Device::Auto) return n > 0 ? Device::Cuda : Device::Cpu;
  if (!cuda_built()) fail("--device cuda: this ridge was built without the CUDA backend (configure with -DRIDGE_CUDA=ON)");
  if (n == 0) fail("--device cuda: no CUDA device is visible (no GPU or no driver); use --device cpu or auto");
  return d;
}

std::unique_ptr<PagedForward> make_paged_forward(const Model& model, const PagedForwardConfig& config) {
  PagedForwardConfig c = config;
  c.device = resolve_device(config.device);
  if (c.parallel && c.parallel->distributed()) return dist::make_lockstep_forward(model, c, *c.parallel);
#if RIDGE_HAVE_CUDA
  if (c.device == Device::Cuda) return cuda::make_cuda_paged_forward(model, c);
#endif
  return make_cpu_paged_forward(model, c);
}

}  // namespace ridge

namespace ridge {

nlohmann::json run_cuda_bench(const CudaBenchOptions& options) {
  resolve_device(Device::Cuda);
#if RIDGE_HAVE_CUDA
  return cuda::run_bench(options);
#else
  (void)options;
  return {};
#endif
}

nlohmann::json run_cuda_probe(int repetitions) {
  resolve_device(Device::Cuda);
#if RIDGE_HAVE_CUDA
  return cuda::run_probe(repetitions);
#else
  (void)repetitions;
  return {};
#endif
}

}  // namespace ridge
