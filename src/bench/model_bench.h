#pragma once
// `ridge bench run`: llama-bench's two tests through ridge's engine. pp N: one forward pass of N
// random tokens on an empty cache. tg N: N single-token forward passes on an empty cache (the
// first token starts the sequence, as in llama-bench). Each is repeated after a warm-up run, per
// model and thread count; decode figures come with the bandwidth they achieve.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ridge {
namespace dist {
struct Parallel;
}
struct ShardRequest;
}  // namespace ridge

namespace ridge::bench {

struct BenchOptions {
  std::vector<std::string> models = {"default"};
  std::vector<int> threads;          // empty: the number of CPUs
  std::vector<int64_t> n_prompt = {512};  // 0 skips the prefill test
  std::vector<int64_t> n_gen = {128};     // 0 skips the generation test
  std::vector<int64_t> n_depth = {0};     // tokens already in the cache when a test starts (llama-bench -d)
  int repetitions = 5;
  uint32_t seed = 1;
  dist::Parallel* parallel = nullptr;  // split across ranks (mpirun): rank 0 measures, the others serve
  const ShardRequest* shard = nullptr; // this rank's part of the model
};

struct BenchResult {
  std::string model;        // file name without .gguf
  std::string path;
  std::string weight_type;  // the layers' type ("Q4_K>Q4_1": the file's, re-encoded at load as the second)
  int64_t model_bytes = 0;
  int64_t params = 0;
  int threads = 0;
  std::string test;         // "pp512", "tg128", "pp512@d4096"
  int64_t n_tokens = 0;
  int64_t n_depth = 0;      // cached positions before the test's tokens
  std::vector<double> tokens_per_second;  // one per repetition
  double mean = 0, stddev = 0;
  // Decode: bytes read per token (mean over the run) and what they give at the mean speed.
  double bytes_per_token = 0;
  int64_t weight_bytes_per_token = 0;   // of which the weights (a MoE model's active experts only)
  int64_t kv_bytes_per_position = 0;    // and K/V (an MLA model's latent) per cached position
  double bandwidth_gbs = 0;
  std::optional<double> bandwidth_fraction;  // of the probe's read bandwidth at these threads
  // Prefill: arithmetic rate.
  double gflops = 0;
  // MoE models: tokens routed to each expert during this test (summed over layers) and the
  // hottest expert over the mean in the worst layer.
  std::vector<uint64_t> expert_tokens;
  double expert_imbalance = 0;
};

// Runs every (model, threads, test) combination with a progress bar on stderr.
std::vector<BenchResult> run_model_benchmarks(const BenchOptions& options);

nlohmann::json to_json(const BenchResult& r);

}  // namespace ridge::bench
