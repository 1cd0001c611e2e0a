// The printing half of the CUDA tools (no CUDA needed); the measuring half is backend/cuda/cuda_bench.cc.
#include "backend/cuda_tools.h"

#include <fmt/format.h>

#include "model/model_store.h"

namespace ridge {

std::string cuda_profile_path() { return ridge_home() + "/cuda_device.json"; }

void print_cuda_probe(const nlohmann::json& p) {
  fmt::print("device   {} ({} SMs, {:.1f} GiB), {}\n", p.value("device", "?"), p.value("sms", 0), p.value("memory_gib", 0.0),
             p.value("driver", ""));
  fmt::print("copy     {:.0f} GB/s (device to device, bytes read + written)\n", p.value("copy_gbs", 0.0));
  fmt::print("read     {:.0f} GB/s (16-byte loads)\n", p.value("read_gbs", 0.0));
  fmt::print("bf16     {:.0f} TFLOP/s (cuBLASLt {}^3)\n", p.value("bf16_tflops", 0.0), p.value("gemm_size", 0));
  fmt::print("fp8      {:.0f} TFLOP/s (cuBLASLt E4M3)\n", p.value("fp8_tflops", 0.0));
  if (p.contains("datasheet")) {
    const auto& d = p["datasheet"];
    fmt::print("datasheet {}: {:.0f} GB/s, bf16 {:.0f}, fp8 {:.0f} TFLOP/s\n", d.value("name", ""), d.value("bandwidth_gbs", 0.0),
               d.value("bf16_tflops", 0.0), d.value("fp8_tflops", 0.0));
  }
}

void print_cuda_bench(const nlohmann::json& r) {
  fmt::print("device {} | read bandwidth {:.0f} GB/s ({}) | bf16 peak {:.0f} TFLOP/s\n", r.value("device", "?"),
             r.value("bandwidth_gbs", 0.0), r.value("bandwidth_source", ""), r.value("bf16_peak_tflops", 0.0));
  for (const auto& m : r["models"]) {
    fmt::print("\n{} ({:.2f} GiB of weights on the device, KV {})\n", m.value("model", ""),
               m.value("weight_device_bytes", 0.0) / double(1 << 30), m.value("kv_dtype", ""));
    fmt::print("| {:>8} | {:>5} | {:>18} | {:>9} | {:>12} | {:>9} | {:>10} | {:>7} |\n", "test", "batch", "tok/s", "step ms",
               "MB/step", "GB/s", "TFLOP/s", "% roof");
    fmt::print("|{:-<10}|{:-<7}|{:-<20}|{:-<11}|{:-<14}|{:-<11}|{:-<12}|{:-<9}|\n", "", "", "", "", "", "", "", "");
    for (const auto& t : m["tests"])
      fmt::print("| {:>8} | {:>5} | {:>18} | {:>9.3f} | {:>12.1f} | {:>9.0f} | {:>10.1f} | {:>6.0f}% |\n", t.value("test", ""),
                 t.value("batch", 1), fmt::format("{:.1f} ± {:.1f}", t.value("tokens_per_second", 0.0), t.value("stddev", 0.0)),
                 t.value("step_ms", 0.0), t.value("bytes_per_step", 0.0) / 1e6, t.value("gbs", 0.0), t.value("tflops", 0.0),
                 100 * t.value("fraction", 0.0));
    if (!m.contains("kernels")) continue;
    fmt::print("\nper kernel, one decode step at batch 1 (events around each launch, no graph):\n");
    fmt::print("| {:<12} | {:>8} | {:>10} | {:>9} | {:>8} | {:>8} |\n", "kernel", "launches", "MB", "us", "GB/s", "% bw");
    for (const auto& k : m["kernels"])
      fmt::print("| {:<12} | {:>8} | {:>10.2f} | {:>9.1f} | {:>8.0f} | {:>7.0f}% |\n", k.value("kernel", ""), k.value("launches", 0),
                 k.value("bytes", 0.0) / 1e6, k.value("us", 0.0), k.value("gbs", 0.0), 100 * k.value("fraction", 0.0));
  }
}

}  // namespace ridge
