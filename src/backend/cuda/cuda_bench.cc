// The measuring half of `ridge probe --device cuda` and `ridge bench run --device cuda`.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "backend/cuda/cuda_entry.h"
#include "backend/cuda/cuda_forward.h"
#include "core/error.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "plan/hardware.h"

namespace ridge::cuda {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The datasheet entry whose first word ("H200") is in the device's name ("NVIDIA H200").
std::optional<plan::HardwareSpec> datasheet_for(const std::string& device) {
  for (const auto& h : plan::datasheet_hardware()) {
    const std::string key = h.name.substr(0, h.name.find(' '));
    if (device.find(key) != std::string::npos) return h;
  }
  return std::nullopt;
}

// Best time in ms of `reps` runs of f, measured with events on stream s.
template <typename F>
double best_ms(int reps, Stream s, F&& f) {
  void* a = event_create();
  void* b = event_create();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    event_record(a, s);
    f();
    event_record(b, s);
    best = std::min(best, double(event_elapsed_ms(a, b)));
  }
  event_destroy(a);
  event_destroy(b);
  return best;
}

void mean_stddev(const std::vector<double>& x, double& mean, double& stddev) {
  mean = 0;
  for (double v : x) mean += v;
  mean /= double(std::max<size_t>(x.size(), 1));
  double sq = 0;
  for (double v : x) sq += (v - mean) * (v - mean);
  stddev = x.size() > 1 ? std::sqrt(sq / double(x.size() - 1)) : 0;
}

std::optional<json> load_profile() {
  std::ifstream in(cuda_profile_path());
  if (!in) return std::nullopt;
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

json run_probe(int repetitions) {
  const int reps = std::max(1, repetitions);
  set_device(0);
  const DeviceProps p = device_props(0);
  Stream s = stream_create();
  json out = {{"device", p.name},
              {"sms", p.n_sms},
              {"memory_gib", double(p.memory_bytes) / double(1 << 30)},
              {"l2_mib", double(p.l2_bytes) / double(1 << 20)},
              {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
              {"driver", driver_versions()}};
  {
    const int64_t bytes = std::min<int64_t>(int64_t(2) << 30, p.memory_bytes / 8) / 16 * 16;
    DeviceBuffer a(bytes), b(bytes), sink(int64_t(read_probe_blocks()) * 4);
    fill_zero(a.get(), bytes, s);
    fill_zero(b.get(), bytes, s);
    fill_zero(sink.get(), sink.bytes(), s);
    copy_on_device(b.get(), a.get(), bytes, s);  // warm-up
    const double copy_ms = best_ms(reps, s, [&] { copy_on_device(b.get(), a.get(), bytes, s); });
    read_probe(a.get(), bytes, sink.as<float>(), s);
    const double read_ms = best_ms(reps, s, [&] { read_probe(a.get(), bytes, sink.as<float>(), s); });
    out["copy_gbs"] = 2.0 * double(bytes) / (copy_ms * 1e-3) / 1e9;
    out["read_gbs"] = double(bytes) / (read_ms * 1e-3) / 1e9;
    out["probe_bytes"] = bytes;
  }
  {
    constexpr int64_t n = 8192;
    GemmLt gemm;
    DeviceBuffer w(n * n * 2), x(n * n * 2), y(n * n * 4), scales(8);
    fill_random_bf16(w.as<uint16_t>(), n * n, 1, 0.05f, s);
    fill_random_bf16(x.as<uint16_t>(), n * n, 2, 1.0f, s);
    auto bf16 = [&] { gemm.bf16(w.as<uint16_t>(), x.as<uint16_t>(), y.as<float>(), n, n, n, false, s); };
    bf16();
    bf16();
    out["bf16_tflops"] = 2.0 * double(n * n) * double(n) / (best_ms(reps + 2, s, bf16) * 1e-3) / 1e12;
    fill_random_fp8(w.as<uint8_t>(), n * n, 3, 4.0f, s);
    fill_random_fp8(x.as<uint8_t>(), n * n, 4, 4.0f, s);
    const float ones[2] = {1.0f, 1.0f};
    copy_to_device(scales.get(), ones, 8, s);
    auto fp8 = [&] {
      gemm.fp8(w.as<uint8_t>(), x.as<uint8_t>(), y.as<uint16_t>(), n, n, n, scales.as<float>(), scales.as<float>() + 1, s);
    };
    fp8();
    fp8();
    out["fp8_tflops"] = 2.0 * double(n * n) * double(n) / (best_ms(reps + 2, s, fp8) * 1e-3) / 1e12;
    out["gemm_size"] = n;
  }
  stream_sync(s);
  stream_destroy(s);
  if (const auto d = datasheet_for(p.name))
    out["datasheet"] = {{"name", d->name},
                        {"bandwidth_gbs", d->memory_bw / 1e9},
                        {"bf16_tflops", d->peak_bf16 / 1e12},
                        {"fp8_tflops", d->peak_fp8 / 1e12}};
  return out;
}

json run_bench(const CudaBenchOptions& o) {
  set_device(0);
  const DeviceProps props = device_props(0);
  const auto profile = load_profile();
  const auto sheet = datasheet_for(props.name);
  // Decode is read-bound: its roof is the probe's read bandwidth when measured, else the datasheet's.
  double roof_gbs = sheet ? sheet->memory_bw / 1e9 : props.datasheet_bandwidth_gbs;
  std::string roof_source = sheet ? "datasheet " + sheet->name : "memory clock";
  if (profile && profile->value("read_gbs", 0.0) > 0) {
    roof_gbs = (*profile)["read_gbs"].get<double>();
    roof_source = "ridge probe --device cuda (read)";
  }
  const double bf16_peak = profile && profile->value("bf16_tflops", 0.0) > 0 ? (*profile)["bf16_tflops"].get<double>()
                           : sheet                                            ? sheet->peak_bf16 / 1e12
                                                                              : 0.0;
  json out = {{"device", props.name},          {"driver", driver_versions()}, {"bandwidth_gbs", roof_gbs},
              {"bandwidth_source", roof_source}, {"bf16_peak_tflops", bf16_peak}, {"models", json::array()}};
  if (profile) out["probe"] = *profile;

  const int reps = std::max(1, o.repetitions);
  std::mt19937 rng(o.seed);
  for (const std::string& arg : o.models) {
    const std::string path = resolve_model_path(arg);
    std::fprintf(stderr, "bench: loading %s\n", path.c_str());
    const Model model = load_model(path);
    const ModelSpec& s = model.spec;
    std::uniform_int_distribution<int32_t> token(0, int32_t(s.n_vocab - 1));
    auto random_tokens = [&](int64_t n) {
      std::vector<int32_t> t(static_cast<size_t>(n));
      for (auto& id : t) id = token(rng);
      return t;
    };
    int64_t max_prompt = 1, max_gen = 1, max_batch = 1;
    for (int64_t n : o.n_prompt) max_prompt = std::max(max_prompt, n);
    for (int64_t n : o.n_gen) max_gen = std::max(max_gen, n);
    for (int64_t b : o.batch) max_batch = std::max(max_batch, b);
    constexpr int32_t kBlock = 16;
    const int64_t n_ctx = (std::max(max_prompt, max_gen) + 1 + 255) / 256 * 256;
    const int64_t prompt_blocks = (max_prompt + kBlock - 1) / kBlock, gen_blocks = (max_gen + kBlock) / kBlock;
    const auto n_blocks = int32_t(std::max(prompt_blocks, max_batch * gen_blocks));
    CudaForwardOptions fo;
    fo.n_ctx = n_ctx;
    CudaForward fwd(model, fo);
    DeviceKvStore store(fwd.kv_layout(kBlock, n_blocks, o.kv_dtype));
    std::vector<BlockId> all_blocks(static_cast<size_t>(n_blocks));
    for (int32_t b = 0; b < n_blocks; ++b) all_blocks[size_t(b)] = b;
    auto seq_blocks = [&](int64_t seq) {
      return std::span<const BlockId>(all_blocks).subspan(size_t(seq * gen_blocks), size_t(gen_blocks));
    };
    json m = {{"model", std::filesystem::path(path).stem().string()},
              {"path", path},
              {"weight_device_bytes", double(fwd.weight_device_bytes())},
              {"kv_dtype", std::string(kv_dtype_name(o.kv_dtype))},
              {"tests", json::array()}};
    std::vector<int32_t> ids;

    for (int64_t n : o.n_prompt) {
      if (n <= 0) continue;
      auto prefill = [&] {
        const auto tokens = random_tokens(n);
        const SequenceRun run{n, 0, std::span<const BlockId>(all_blocks).first(size_t((n + kBlock - 1) / kBlock)),
                              LogitsWanted::Last};
        fwd.forward_argmax(TokenBatch{tokens, std::span(&run, 1)}, store, ids);
      };
      std::fprintf(stderr, "bench: pp%lld\n", (long long)n);
      prefill();
      fwd.reset_costs();
      std::vector<double> tps;
      double seconds = 0;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        prefill();
        const double dt = seconds_since(t0);
        seconds += dt;
        tps.push_back(double(n) / dt);
      }
      const CostLedger per = fwd.costs().scaled(1.0 / reps);
      double mean, sd;
      mean_stddev(tps, mean, sd);
      const double step_s = seconds / reps;
      const double tflops = per.total().flops / step_s / 1e12;
      m["tests"].push_back({{"test", fmt::format("pp{}", n)}, {"batch", 1}, {"tokens_per_second", mean}, {"stddev", sd},
                            {"step_ms", step_s * 1e3}, {"bytes_per_step", per.total().bytes},
                            {"flops_per_step", per.total().flops}, {"gbs", per.total().bytes / step_s / 1e9},
                            {"tflops", tflops}, {"fraction", bf16_peak > 0 ? tflops / bf16_peak : 0.0},
                            {"gemm_tflops", per[KernelKind::Gemm].flops / step_s / 1e12}});
    }

    for (int64_t batch : o.batch) {
      for (int64_t n : o.n_gen) {
        if (n <= 0 || batch <= 0) continue;
        std::fprintf(stderr, "bench: tg%lld x %lld sequences\n", (long long)n, (long long)batch);
        auto generate = [&](int64_t steps) {
          std::vector<SequenceRun> runs(static_cast<size_t>(batch));
          for (int64_t i = 0; i < steps; ++i) {
            const auto tokens = random_tokens(batch);
            for (int64_t b = 0; b < batch; ++b) runs[size_t(b)] = {1, i, seq_blocks(b), LogitsWanted::Last};
            fwd.forward_argmax(TokenBatch{tokens, runs}, store, ids);
          }
        };
        generate(std::min<int64_t>(n, 4));  // warm-up: captures the bucket's graph
        fwd.reset_costs();
        std::vector<double> tps;
        double seconds = 0;
        for (int r = 0; r < reps; ++r) {
          const auto t0 = Clock::now();
          generate(n);
          const double dt = seconds_since(t0);
          seconds += dt;
          tps.push_back(double(n * batch) / dt);
        }
        const CostLedger per = fwd.costs().scaled(1.0 / double(reps * n));
        double mean, sd;
        mean_stddev(tps, mean, sd);
        const double step_s = seconds / double(reps * n);
        const double gbs = per.total().bytes / step_s / 1e9;
        m["tests"].push_back({{"test", fmt::format("tg{}", n)}, {"batch", batch}, {"tokens_per_second", mean},
                              {"stddev", sd}, {"step_ms", step_s * 1e3}, {"bytes_per_step", per.total().bytes},
                              {"flops_per_step", per.total().flops}, {"gbs", gbs},
                              {"tflops", per.total().flops / step_s / 1e12}, {"fraction", roof_gbs > 0 ? gbs / roof_gbs : 0.0}});
      }
    }

    if (o.profile) {
      constexpr int64_t kSteps = 8;
      fwd.set_profiling(true);
      fwd.reset_costs();
      std::vector<SequenceRun> run(1);
      for (int64_t i = 0; i < kSteps; ++i) {
        const auto tokens = random_tokens(1);
        run[0] = {1, std::min<int64_t>(i, max_gen - 1), seq_blocks(0), LogitsWanted::Last};
        fwd.forward_argmax(TokenBatch{tokens, run}, store, ids);
      }
      fwd.set_profiling(false);
      const CostLedger per = fwd.costs().scaled(1.0 / kSteps);
      m["kernels"] = json::array();
      for (int k = 0; k < kKernelKinds; ++k) {
        const KernelCost& c = per[KernelKind(k)];
        const double us = fwd.profile_ms()[size_t(k)] * 1e3 / kSteps;
        if (c.launches == 0) continue;
        const double gbs = us > 0 ? c.bytes / (us * 1e-6) / 1e9 : 0.0;
        m["kernels"].push_back({{"kernel", std::string(kernel_kind_name(KernelKind(k)))}, {"launches", c.launches / kSteps},
                                {"bytes", c.bytes}, {"flops", c.flops}, {"us", us}, {"gbs", gbs},
                                {"fraction", roof_gbs > 0 ? gbs / roof_gbs : 0.0}});
      }
    }
    out["models"].push_back(std::move(m));
  }
  return out;
}

}  // namespace ridge::cuda
