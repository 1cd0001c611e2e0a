// The CUDA runtime behind cuda_kernels.h: devices, memory, copies, streams, graphs, events.
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"

namespace ridge::cuda {
namespace {

cudaStream_t as_stream(Stream s) { return static_cast<cudaStream_t>(s); }

}  // namespace

void check_cuda(int status, const char* what) {
  if (status != cudaSuccess) {
    const auto e = static_cast<cudaError_t>(status);
    fail("CUDA: {} failed: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
  }
}

void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear it: no driver or no device is an answer, not an error
    return 0;
  }
  return n;
}

DeviceProps device_props(int device) {
  cudaDeviceProp p{};
  check_cuda(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  DeviceProps out;
  out.name = p.name;
  out.major = p.major;
  out.minor = p.minor;
  out.n_sms = p.multiProcessorCount;
  out.memory_bytes = int64_t(p.totalGlobalMem);
  out.l2_bytes = p.l2CacheSize;
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess)
    out.datasheet_bandwidth_gbs = 2.0 * double(clock_khz) * 1e3 * double(bus_bits) / 8.0 / 1e9;  // double data rate
  cudaGetLastError();
  return out;
}

void set_device(int device) { check_cuda(cudaSetDevice(device), "cudaSetDevice"); }

std::string driver_versions() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaGetLastError();
  return fmt::format("driver {}.{}, runtime {}.{}", driver / 1000, driver % 1000 / 10, runtime / 1000,
                     runtime % 1000 / 10);
}

void* device_malloc(int64_t bytes) {
  void* p = nullptr;
  if (bytes <= 0) return nullptr;
  const cudaError_t e = cudaMalloc(&p, size_t(bytes));
  if (e != cudaSuccess) {
    cudaGetLastError();
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    cudaGetLastError();
    fail("CUDA: cannot allocate {:.1f} MiB of device memory ({:.1f} MiB free): {}", double(bytes) / double(1 << 20),
         double(free_bytes) / double(1 << 20), cudaGetErrorString(e));
  }
  return p;
}

void device_free(void* p) {
  if (p) cudaFree(p);
}

void* pinned_malloc(int64_t bytes) {
  void* p = nullptr;
  if (bytes <= 0) return nullptr;
  check_cuda(cudaMallocHost(&p, size_t(bytes)), "cudaMallocHost");
  return p;
}

void pinned_free(void* p) {
  if (p) cudaFreeHost(p);
}

void copy_to_device(void* dst, const void* src, int64_t bytes, Stream s) {
  if (bytes > 0) check_cuda(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyHostToDevice, as_stream(s)), "copy to device");
}

void copy_to_host(void* dst, const void* src, int64_t bytes, Stream s) {
  if (bytes > 0) check_cuda(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToHost, as_stream(s)), "copy to host");
}

void copy_on_device(void* dst, const void* src, int64_t bytes, Stream s) {
  if (bytes > 0) check_cuda(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice, as_stream(s)), "device copy");
}

void fill_zero(void* dst, int64_t bytes, Stream s) {
  if (bytes > 0) check_cuda(cudaMemsetAsync(dst, 0, size_t(bytes), as_stream(s)), "cudaMemsetAsync");
}

Stream stream_create() {
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return s;
}

void stream_destroy(Stream s) {
  if (s) cudaStreamDestroy(as_stream(s));
}

void stream_sync(Stream s) { check_cuda(cudaStreamSynchronize(as_stream(s)), "cudaStreamSynchronize"); }

void device_sync() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void capture_begin(Stream s) {
  check_cuda(cudaStreamBeginCapture(as_stream(s), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
}

void* capture_end(Stream s) {
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamEndCapture(as_stream(s), &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(e, "cudaGraphInstantiate");
  return exec;
}

void graph_launch(void* exec, Stream s) {
  check_cuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), as_stream(s)), "cudaGraphLaunch");
}

void graph_destroy(void* exec) {
  if (exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

void* event_create() {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreate(&e), "cudaEventCreate");
  return e;
}

void event_destroy(void* e) {
  if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}

void event_record(void* e, Stream s) {
  check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(e), as_stream(s)), "cudaEventRecord");
}

float event_elapsed_ms(void* start, void* end) {
  check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(end)), "cudaEventSynchronize");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
             "cudaEventElapsedTime");
  return ms;
}

}  // namespace ridge::cuda
