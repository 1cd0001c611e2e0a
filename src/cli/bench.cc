// ridge bench run: prompt-processing (pp N) and generation (tg N) speed, as llama-bench measures
// them, for one or more models and thread counts: mean ± stddev over repetitions, and for each
// generation figure the bandwidth it achieves against the probe's measured read bandwidth.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>

#include "backend/cuda_tools.h"
#include "backend/device.h"
#include "bench/batch_bench.h"
#include "bench/machine_profile.h"
#include "bench/model_bench.h"
#include "cli/commands.h"
#include "cli/parallel_options.h"
#include "core/error.h"
#include "kv/kv_dtype.h"

namespace ridge::cli {
namespace {

std::string human_bytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(bytes) / double(1 << 30));
  return fmt::format("{:.1f} MiB", double(bytes) / double(1 << 20));
}

void print_table(const std::vector<bench::BenchResult>& results, bool have_profile) {
  std::printf("| %-32s | %-9s | %10s | %7s | %7s | %18s | %8s | %8s |\n", "model", "type", "size", "threads", "test",
              "t/s", "GB/s", "% bw");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(34, '-').c_str(), std::string(11, '-').c_str(),
              std::string(12, '-').c_str(), std::string(9, '-').c_str(), std::string(9, '-').c_str(),
              std::string(20, '-').c_str(), std::string(10, '-').c_str(), std::string(10, '-').c_str());
  for (const auto& r : results) {
    const bool decode = r.test.rfind("tg", 0) == 0;
    const std::string speed = fmt::format("{:.2f} ± {:.2f}", r.mean, r.stddev);
    // Prefill rows show their arithmetic rate in the GB/s column's place.
    const std::string rate = decode ? fmt::format("{:.1f}", r.bandwidth_gbs) : fmt::format("{:.0f} GF/s", r.gflops);
    const std::string fraction = r.bandwidth_fraction ? fmt::format("{:.0f}%", *r.bandwidth_fraction * 100) : "";
    // fmt pads by characters, so "±" keeps the columns straight.
    fmt::print("| {:<32} | {:<9} | {:>10} | {:>7} | {:>7} | {:>18} | {:>8} | {:>8} |\n", r.model, r.weight_type,
               human_bytes(r.model_bytes), r.threads, r.test, speed, rate, fraction);
  }
  for (const auto& r : results) {
    if (r.expert_tokens.empty() || r.test.rfind("tg", 0) != 0) continue;
    fmt::print("\n{} {}: decode reads {} per token (the active parameters and KV) of {} stored; tokens per expert {}, "
               "hottest/mean {:.2f} in the worst layer\n",
               r.model, r.test, human_bytes(int64_t(r.bytes_per_token)), human_bytes(r.model_bytes),
               fmt::join(r.expert_tokens, " "), r.expert_imbalance);
  }
  if (!have_profile) std::printf("\n(no machine profile: run `ridge probe` to see each figure against measured bandwidth)\n");
}

void add_batch_bench(CLI::App& bench) {
  auto o = std::make_shared<bench::BatchBenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto kv_dtype = std::make_shared<std::string>("f16");
  CLI::App* cmd = bench.add_subcommand("batch", "Total decode throughput at 1, 4, 16, 64 concurrent sequences (continuous batching)");
  cmd->add_option("-m,--model", o->model, "GGUF file or 'default'")->capture_default_str();
  cmd->add_option("-c,--concurrency", o->concurrency, "concurrent sequences, e.g. 1,4,16,64")->delimiter(',')->capture_default_str();
  cmd->add_option("-p,--n-prompt", o->n_prompt, "prompt tokens per sequence")->capture_default_str();
  cmd->add_option("-n,--n-gen", o->n_gen, "generated tokens per sequence")->capture_default_str();
  cmd->add_option("-r,--repetitions", o->repetitions, "timed runs per concurrency")->capture_default_str();
  cmd->add_option("-t,--threads", o->engine.n_threads, "threads (default: all cores)");
  cmd->add_option("--kv-dtype", *kv_dtype, "KV cache type: f16, bf16, fp8, int8")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the random prompts")->capture_default_str();
  cmd->add_flag("--json", *json, "print the results as JSON");
  auto parallel = std::make_shared<ParallelCliOptions>();
  add_parallel_options(cmd, *parallel);
  cmd->callback([o, json, kv_dtype, parallel] {
    o->engine.parallel = parallel_for(*parallel);
    o->engine.n_threads = default_threads(o->engine.n_threads);
    const auto shard = shard_request(o->engine.parallel, *parallel);
    o->shard = shard.get();
    const auto dtype = parse_kv_dtype(*kv_dtype);
    if (!dtype) fail("unknown --kv-dtype '{}'", *kv_dtype);
    o->engine.kv_dtype = *dtype;
    std::string model;
    int64_t weight_bytes = 0;
    const auto results = bench::run_batch_benchmark(*o, model, weight_bytes);
    if (o->engine.parallel && !o->engine.parallel->is_driver()) return;  // rank 0 reports
    if (*json) {
      nlohmann::json out = {{"model", model}, {"weight_bytes", weight_bytes}, {"n_prompt", o->n_prompt}, {"n_gen", o->n_gen},
                            {"results", nlohmann::json::array()}};
      for (const auto& r : results) out["results"].push_back(bench::to_json(r));
      std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    fmt::print("{} ({}), prompt {} + {} generated tokens per sequence\n", model, human_bytes(weight_bytes), o->n_prompt, o->n_gen);
    fmt::print("| {:>11} | {:>20} | {:>14} | {:>9} | {:>10} | {:>14} |\n", "concurrency", "decode tok/s (total)", "per sequence",
               "vs 1 seq", "step ms", "weights GB/s");
    fmt::print("|{:-<13}|{:-<22}|{:-<16}|{:-<11}|{:-<12}|{:-<16}|\n", "", "", "", "", "", "");
    const double base = results.empty() ? 1.0 : results.front().mean / results.front().concurrency;
    for (const auto& r : results)
      fmt::print("| {:>11} | {:>20} | {:>14.2f} | {:>8.2f}x | {:>10.2f} | {:>14.1f} |\n", r.concurrency,
                 fmt::format("{:.1f} ± {:.1f}", r.mean, r.stddev), r.per_sequence, r.mean / base, r.step_ms, r.weight_gbs);
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto o = std::make_shared<bench::BenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto device = std::make_shared<std::string>("cpu");
  auto cuda = std::make_shared<CudaBenchOptions>();
  auto kv_dtype = std::make_shared<std::string>("f16");
  CLI::App* run = bench->add_subcommand("run", "Prompt processing and generation speed (like llama-bench)");
  run->add_option("-m,--model", o->models, "GGUF file, Hugging Face checkpoint directory or 'default' (repeatable)")->capture_default_str();
  run->add_option("-t,--threads", o->threads, "Thread counts, e.g. 1,2 (default: all CPUs)")->delimiter(',');
  run->add_option("-p,--n-prompt", o->n_prompt, "Prompt sizes (0 skips)")->delimiter(',')->capture_default_str();
  run->add_option("-n,--n-gen", o->n_gen, "Generation lengths (0 skips)")->delimiter(',')->capture_default_str();
  run->add_option("-d,--n-depth", o->n_depth, "Tokens already in the cache when each test starts, e.g. 0,8192 (filled untimed)")
      ->delimiter(',')->capture_default_str();
  run->add_option("-r,--repetitions", o->repetitions, "Timed runs per test")->capture_default_str();
  run->add_option("--seed", o->seed, "Seed of the random prompt tokens")->capture_default_str();
  run->add_flag("--json", *json, "Print the results as JSON");
  run->add_option("--device", *device, "cpu, cuda or auto (cuda: GB/s and TFLOP/s per test and per kernel)")->capture_default_str();
  run->add_option("-b,--batch", cuda->batch, "cuda: decode batch sizes, e.g. 1,8,32,128")->delimiter(',')->capture_default_str();
  run->add_option("--kv-dtype", *kv_dtype, "cuda: KV cache type (f16, bf16, fp8, int8)")->capture_default_str();
  auto parallel = std::make_shared<ParallelCliOptions>();
  add_parallel_options(run, *parallel);
  add_bench_serve_command(*bench);
  add_bench_grammar_command(*bench);
  add_bench_kv_transfer_command(*bench);
  add_batch_bench(*bench);
  run->callback([o, json, device, cuda, kv_dtype, parallel] {
    o->parallel = parallel_for(*parallel);
    const auto shard = shard_request(o->parallel, *parallel);
    o->shard = shard.get();
    if (o->parallel && o->threads.empty()) o->threads = {default_threads(0)};
    if (resolve_device(parse_device_or_fail(*device)) == Device::Cuda) {
      cuda->models = o->models;
      cuda->n_prompt = o->n_prompt;
      cuda->n_gen = o->n_gen;
      cuda->repetitions = o->repetitions;
      cuda->seed = o->seed;
      const auto dtype = parse_kv_dtype(*kv_dtype);
      if (!dtype) fail("unknown --kv-dtype '{}'", *kv_dtype);
      cuda->kv_dtype = *dtype;
      const nlohmann::json results = run_cuda_bench(*cuda);
      if (*json) std::printf("%s\n", results.dump(2).c_str());
      else print_cuda_bench(results);
      return;
    }
    const auto results = bench::run_model_benchmarks(*o);
    if (o->parallel && !o->parallel->is_driver()) return;  // rank 0 reports
    const auto profile = bench::load_machine_profile();
    if (*json) {
      nlohmann::json out = {{"results", nlohmann::json::array()}};
      for (const auto& r : results) out["results"].push_back(bench::to_json(r));
      out["machine"] = profile ? *profile : nlohmann::json(nullptr);
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      print_table(results, profile.has_value());
    }
  });
}

}  // namespace ridge::cli
