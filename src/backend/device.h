#pragma once
// Where the forward pass runs: the CPU, a CUDA GPU, or "auto" (the GPU when one is present, else
// the CPU). Chosen once per engine or tool; `ridge run|serve|batch|bench run --device cuda` fails
// with a clear message when this build has no CUDA backend or the machine has no GPU.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kv/kv_dtype.h"
#include "model/weights.h"

namespace ridge {

enum class Device { Cpu, Cuda, Auto };

std::string_view device_name(Device device);
std::optional<Device> parse_device(std::string_view name);  // "cpu", "cuda", "auto"
Device parse_device_or_fail(std::string_view name);

bool cuda_built();               // this binary has the CUDA backend (-DRIDGE_CUDA=ON)
int cuda_device_count();         // 0 without the backend, a driver or a device
Device resolve_device(Device d);  // Auto -> Cuda or Cpu; Cuda without a GPU -> Error

class PagedForward;
struct PagedForwardConfig;
// The engine's forward pass on config.device (resolved as above), with its KV store.
std::unique_ptr<PagedForward> make_paged_forward(const Model& model, const PagedForwardConfig& config);

}  // namespace ridge
