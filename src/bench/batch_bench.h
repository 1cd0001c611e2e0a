#pragma once
// `ridge bench batch`: total decode throughput of the continuous-batching engine at several
// numbers of concurrent sequences. Each sequence decodes from its own random prompt; only steps
// that decode one token for every running sequence are timed, so the figure is what one weight
// read per step buys at that batch size (the first seed's amortisation), free of prefill.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "model/shard.h"

namespace ridge::bench {

struct BatchBenchOptions {
  std::string model = "default";
  std::vector<int> concurrency = {1, 4, 16, 64};
  int64_t n_prompt = 64;  // tokens of each sequence's prompt
  int64_t n_gen = 64;     // tokens each sequence generates
  int repetitions = 2;
  uint32_t seed = 1;
  EngineConfig engine;    // threads, KV type, block size, ranks (the rest is set per run)
  const ShardRequest* shard = nullptr;  // split across ranks: this rank's part of the model
};

struct BatchBenchResult {
  int concurrency = 0;
  std::vector<double> decode_tps;  // total decode tokens per second, one per repetition
  double mean = 0, stddev = 0;
  double per_sequence = 0;         // mean / concurrency
  double step_ms = 0;              // mean decode step
  double weight_gbs = 0;           // weight bytes x decode steps per second
};

std::vector<BatchBenchResult> run_batch_benchmark(const BatchBenchOptions& options, std::string& model_name,
                                                  int64_t& weight_bytes);
nlohmann::json to_json(const BatchBenchResult& r);

}  // namespace ridge::bench
