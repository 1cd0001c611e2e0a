#include "bench/batch_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "bench/progress.h"
#include "core/error.h"
#include "dist/lockstep.h"
#include "model/gguf/gguf_file.h"
#include "model/load_gguf.h"
#include "model/model_store.h"

namespace ridge::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct DecodeTiming {
  double seconds = 0;
  int64_t tokens = 0, steps = 0;
};

// One run at `concurrency` sequences: all prompts are admitted (prefill untimed), then every
// step that decodes exactly one token per running sequence is timed.
DecodeTiming run_once(Engine& engine, const BatchBenchOptions& o, int concurrency, int64_t n_vocab, std::mt19937& rng,
                      ProgressBar& progress) {
  for (int i = 0; i < concurrency; ++i) {
    RequestOptions r;
    r.prompt.resize(size_t(o.n_prompt));
    for (auto& t : r.prompt) t = int32_t(rng() % uint32_t(n_vocab));
    r.max_tokens = int32_t(o.n_gen);
    r.ignore_eos = true;
    engine.submit(std::move(r), {});
  }
  DecodeTiming timing;
  int64_t prev_steps = engine.stats().steps;
  for (;;) {
    const auto start = Clock::now();
    if (!engine.step()) break;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const EngineStats s = engine.stats();
    if (s.steps == prev_steps) continue;
    prev_steps = s.steps;
    // A pure decode step of the full batch: one token per sequence, every sequence running.
    if (s.last_batch_tokens == s.last_batch_seqs && s.last_batch_seqs == concurrency) {
      timing.seconds += seconds;
      timing.tokens += s.last_batch_tokens;
      ++timing.steps;
      progress.advance(1);
    }
  }
  return timing;
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / double(v.size() - 1));
}

}  // namespace

std::vector<BatchBenchResult> run_batch_benchmark(const BatchBenchOptions& o, std::string& model_name, int64_t& weight_bytes) {
  if (o.n_prompt < 1 || o.n_gen < 2) fail("bench batch needs a prompt of at least 1 token and at least 2 generated tokens");
  const std::string path = resolve_model_path(o.model);
  const auto file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  const Model model = load_gguf_model(file, o.shard);
  if (o.engine.parallel && !o.engine.parallel->is_driver()) {
    dist::run_worker(model, o.engine.n_threads, *o.engine.parallel);
    return {};
  }
  const Tokenizer tokenizer = Tokenizer::from_gguf(*file);
  model_name = path.substr(path.find_last_of('/') + 1);
  const int max_c = *std::max_element(o.concurrency.begin(), o.concurrency.end());
  EngineConfig c = o.engine;
  c.n_ctx = o.n_prompt + o.n_gen;
  c.max_num_seqs = max_c;
  c.max_batched_tokens = std::max<int64_t>(c.max_batched_tokens, o.n_prompt * max_c);  // prefill all at once
  c.prefix_caching = false;
  c.kv_memory_bytes = 0;  // room for max_c full sequences
  Engine engine(model, tokenizer, c);
  weight_bytes = engine.weight_bytes();

  std::vector<BatchBenchResult> results;
  std::mt19937 rng(o.seed);
  int64_t total_steps = 0;
  for (size_t i = 0; i < o.concurrency.size(); ++i) total_steps += int64_t(o.repetitions + 1) * (o.n_gen - 1);
  ProgressBar progress("bench batch", total_steps);
  for (int conc : o.concurrency) {
    if (conc < 1) fail("concurrency must be at least 1, got {}", conc);
    BatchBenchResult r;
    r.concurrency = conc;
    run_once(engine, o, conc, model.spec.n_vocab, rng, progress);  // warm-up
    double step_seconds = 0;
    int64_t steps = 0;
    for (int rep = 0; rep < o.repetitions; ++rep) {
      const DecodeTiming t = run_once(engine, o, conc, model.spec.n_vocab, rng, progress);
      if (t.steps == 0) fail("no full decode step was measured at concurrency {}", conc);
      r.decode_tps.push_back(double(t.tokens) / t.seconds);
      step_seconds += t.seconds;
      steps += t.steps;
    }
    r.mean = mean_of(r.decode_tps);
    r.stddev = stddev_of(r.decode_tps);
    r.per_sequence = r.mean / conc;
    r.step_ms = 1e3 * step_seconds / double(steps);
    r.weight_gbs = double(weight_bytes) / (step_seconds / double(steps)) / 1e9;
    results.push_back(r);
  }
  progress.finish();
  return results;
}

nlohmann::json to_json(const BatchBenchResult& r) {
  return {{"concurrency", r.concurrency}, {"decode_tps", r.decode_tps}, {"mean_tps", r.mean},
          {"stddev_tps", r.stddev},       {"per_sequence_tps", r.per_sequence}, {"step_ms", r.step_ms},
          {"weight_gbs", r.weight_gbs}};
}

}  // namespace ridge::bench
