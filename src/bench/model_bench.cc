#include "bench/model_bench.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "bench/decode_cost.h"
#include "bench/engine_threads.h"
#include "bench/machine_profile.h"
#include "bench/pinned_team.h"
#include "bench/progress.h"
#include "backend/paged_forward.h"
#include "core/error.h"
#include "dist/lockstep.h"
#include "model/forward.h"
#include "model/model_loader.h"
#include "model/model_store.h"

namespace ridge::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kGenWarmupTokens = 4;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void summarise(BenchResult& r) {
  const auto& x = r.tokens_per_second;
  double sum = 0;
  for (double v : x) sum += v;
  r.mean = x.empty() ? 0 : sum / double(x.size());
  double squares = 0;
  for (double v : x) squares += (v - r.mean) * (v - r.mean);
  r.stddev = x.size() > 1 ? std::sqrt(squares / double(x.size() - 1)) : 0;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t n_vocab, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> id(0, int32_t(n_vocab - 1));
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (auto& t : tokens) t = id(rng);
  return tokens;
}

// One model loaded once, measured at every thread count and test. Split across ranks
// (o.parallel), rank 0 runs the passes through the lockstep forward of every rank.
class ModelRunner {
 public:
  ModelRunner(const std::string& path, int64_t n_ctx, uint32_t seed, const BenchOptions& o)
      : model_(load_model(path, o.shard)), rng_(seed), n_ctx_(n_ctx), parallel_(o.parallel) {
    if (!parallel_) {
      forward_ = std::make_unique<ModelForward>(model_);
      cache_ = std::make_unique<KvCache>(forward_->make_cache(n_ctx));
    }
  }

  const Model& model() const { return model_; }
  void set_threads(int threads) {
    if (forward_) return forward_->set_threads(threads);
    PagedForwardConfig c;
    c.n_threads = threads;
    c.n_blocks = int32_t((n_ctx_ + c.block_size - 1) / c.block_size);
    c.n_ctx = n_ctx_;
    c.parallel = parallel_;
    paged_.reset();  // the workers' pool shape comes with the next one
    paged_ = make_paged_forward(model_, c);
    blocks_.resize(size_t(c.n_blocks));
    for (size_t b = 0; b < blocks_.size(); ++b) blocks_[b] = BlockId(b);
  }
  const MoeStats& moe_stats() const {
    static const MoeStats none;
    if (forward_) return forward_->moe_stats();
    const MoeStats* s = paged_ ? paged_->moe_stats() : nullptr;
    return s ? *s : none;
  }

  // Seconds for one forward pass of n random tokens after `depth` cached ones (filled untimed).
  double prefill(int64_t n, int64_t depth) {
    fill(depth);
    const auto tokens = random_tokens(n, model_.spec.n_vocab, rng_);
    const auto start = Clock::now();
    pass(tokens, depth, /*prompt=*/true);
    return seconds_since(start);
  }

  // Seconds for n single-token forward passes after `depth` cached tokens (filled untimed).
  double generate(int64_t n, int64_t depth) {
    fill(depth);
    const auto tokens = random_tokens(n, model_.spec.n_vocab, rng_);
    const auto start = Clock::now();
    for (int64_t i = 0; i < n; ++i) pass(std::span(tokens).subspan(size_t(i), 1), depth + i, /*prompt=*/false);
    return seconds_since(start);
  }

 private:
  // The cache emptied, then `depth` random prompt tokens in it (a pass at position 0 clears it).
  void fill(int64_t depth) {
    if (depth > 0) pass(random_tokens(depth, model_.spec.n_vocab, rng_), 0, /*prompt=*/true);
  }

  // A prompt's tokens take the prefill kernels, as the engine gives them (SequenceRun::prompt_end).
  void pass(std::span<const int32_t> tokens, int64_t position, bool prompt) {
    if (forward_) {
      if (position == 0) cache_->clear();
      return forward_->forward(tokens, *cache_, /*all_logits=*/false, logits_, prompt);
    }
    const int64_t prompt_end = prompt ? position + int64_t(tokens.size()) : 0;
    const SequenceRun run{int64_t(tokens.size()), position, blocks_, LogitsWanted::Last, prompt_end};
    paged_->forward(TokenBatch{tokens, std::span(&run, 1)}, logits_);
  }

  Model model_;
  std::unique_ptr<ModelForward> forward_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<PagedForward> paged_;  // split across ranks
  std::vector<BlockId> blocks_;
  std::vector<float> logits_;
  std::mt19937 rng_;
  int64_t n_ctx_;
  dist::Parallel* parallel_;
};

std::string model_label(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// The layers' type; "Q4_K>Q4_1" when the file's type was re-encoded at load.
std::string layer_type(const Model& model) {
  if (model.weights.layers.empty()) return std::string(1, '?');
  const LayerWeights& first = model.weights.layers[0];
  // A MoE model's FFN is its experts (DeepSeek's first layers are dense, so look at the last layer).
  const LayerWeights& last = model.weights.layers.back();
  const WeightRef& up = first.w_up.present() ? first.w_up : !last.experts.empty() ? last.experts[0].w_up : first.wq;
  if (!up.recoded_from) return std::string(dtype_name(up.type));
  return fmt::format("{}>{}", dtype_name(*up.recoded_from), dtype_name(up.type));
}

// The expert counts the test added (warm-up and timed runs).
void record_experts(BenchResult& r, const std::vector<uint64_t>& before, const MoeStats& stats) {
  r.expert_tokens = stats.per_expert();
  for (size_t e = 0; e < r.expert_tokens.size(); ++e) r.expert_tokens[e] -= before[e];
  r.expert_imbalance = stats.worst_imbalance();
}

BenchResult describe(const std::string& path, const Model& model, const ModelCost& cost, int threads, std::string test,
                     int64_t n_tokens) {
  BenchResult r;
  r.model = model_label(path);
  r.path = path;
  r.weight_type = layer_type(model);
  r.model_bytes = cost.file_weight_bytes;
  r.params = cost.matmul_params;
  r.threads = threads;
  r.test = std::move(test);
  r.n_tokens = n_tokens;
  return r;
}

}  // namespace

std::vector<BenchResult> run_model_benchmarks(const BenchOptions& o) {
  std::vector<int> thread_counts = o.threads.empty() ? std::vector<int>{int(allowed_cpus().size())} : o.threads;
  if (o.parallel) {
    // Each rank runs its own threads; a worker only follows rank 0's passes.
    if (o.models.size() != 1) fail("a model split across ranks is benchmarked one model at a time");
    if (thread_counts.size() != 1) fail("a model split across ranks runs one thread count (-t) at a time");
    if (!o.parallel->is_driver()) {
      const Model model = load_model(resolve_model_path(o.models[0]), o.shard);
      dist::run_worker(model, thread_counts[0], *o.parallel);
      return {};
    }
  }
  const auto profile = load_machine_profile();
  const int reps = std::max(1, o.repetitions);
  int64_t tests_per_setting = 0, n_ctx = 1, max_depth = 0;
  const std::vector<int64_t> depths = o.n_depth.empty() ? std::vector<int64_t>{0} : o.n_depth;
  for (int64_t d : depths) {
    if (d < 0) fail("--n-depth must be 0 or more, not {}", d);
    max_depth = std::max(max_depth, d);
  }
  for (const auto* sizes : {&o.n_prompt, &o.n_gen}) {
    for (int64_t n : *sizes) {
      if (n <= 0) continue;
      tests_per_setting += int64_t(depths.size());
      n_ctx = std::max(n_ctx, n + max_depth);
    }
  }
  ProgressBar progress("bench", tests_per_setting * int64_t(o.models.size() * thread_counts.size()) * (reps + 1));

  std::vector<BenchResult> results;
  for (const std::string& model_arg : o.models) {
    const std::string path = resolve_model_path(model_arg);
    progress.set_note(fmt::format("loading {}", model_label(path)));
    ModelRunner runner(path, n_ctx, o.seed, o);
    const ModelCost cost = model_cost(runner.model());
    for (int threads : thread_counts) {
      set_engine_threads(threads);
      runner.set_threads(threads);
      // A warm-up run, then `reps` timed runs of one test.
      auto measure = [&](BenchResult& r, const auto& warm_up, const auto& timed_seconds) {
        const std::string label = fmt::format("{} t={} {}", r.model, threads, r.test);
        const std::vector<uint64_t> before = runner.moe_stats().per_expert();
        progress.set_note(label + " warm-up");
        warm_up();
        progress.advance(1);
        for (int rep = 1; rep <= reps; ++rep) {
          progress.set_note(fmt::format("{} rep {}/{}", label, rep, reps));
          r.tokens_per_second.push_back(double(r.n_tokens) / timed_seconds());
          progress.advance(1);
        }
        summarise(r);
        record_experts(r, before, runner.moe_stats());
      };
      auto at = [](int64_t d) { return d > 0 ? fmt::format("@d{}", d) : std::string(); };
      for (int64_t d : depths)
      for (int64_t n : o.n_prompt) {
        if (n <= 0) continue;
        BenchResult r = describe(path, runner.model(), cost, threads, fmt::format("pp{}{}", n, at(d)), n);
        r.n_depth = d;
        measure(r, [&] { runner.prefill(n, d); }, [&] { return runner.prefill(n, d); });
        // The FLOPs of these n tokens: a prefill of d + n less one of d (causal attention over the depth included).
        r.gflops = (prefill_flops(cost, d + n) - prefill_flops(cost, d)) * r.mean / double(n) / 1e9;
        results.push_back(std::move(r));
      }
      for (int64_t d : depths)
      for (int64_t n : o.n_gen) {
        if (n <= 0) continue;
        BenchResult r = describe(path, runner.model(), cost, threads, fmt::format("tg{}{}", n, at(d)), n);
        r.n_depth = d;
        measure(r, [&] { runner.generate(std::min(n, kGenWarmupTokens), d); }, [&] { return runner.generate(n, d); });
        r.bytes_per_token = generation_bytes_per_token(cost, d, n);
        r.weight_bytes_per_token = cost.weight_bytes_per_token;
        r.kv_bytes_per_position = cost.kv_bytes_per_position;
        r.bandwidth_gbs = r.bytes_per_token * r.mean / 1e9;
        const auto peak = profile ? profile_value_at_threads(*profile, "read_bandwidth_gbs", threads) : std::nullopt;
        if (peak && *peak > 0) r.bandwidth_fraction = r.bandwidth_gbs / *peak;
        results.push_back(std::move(r));
      }
    }
  }
  progress.finish();
  return results;
}

nlohmann::json to_json(const BenchResult& r) {
  nlohmann::json j = {{"model", r.model},          {"path", r.path},       {"type", r.weight_type},
                      {"model_bytes", r.model_bytes}, {"params", r.params}, {"threads", r.threads},
                      {"test", r.test},            {"n_tokens", r.n_tokens}, {"n_depth", r.n_depth},
                      {"tokens_per_second", r.tokens_per_second},
                      {"mean_tps", r.mean},        {"stddev_tps", r.stddev}};
  if (r.test.rfind("tg", 0) == 0) {
    j["bytes_per_token"] = r.bytes_per_token;
    j["weight_bytes_per_token"] = r.weight_bytes_per_token;
    j["kv_bytes_per_position"] = r.kv_bytes_per_position;
    j["bandwidth_gbs"] = r.bandwidth_gbs;
    j["bandwidth_fraction"] = r.bandwidth_fraction ? nlohmann::json(*r.bandwidth_fraction) : nlohmann::json(nullptr);
  } else {
    j["gflops"] = r.gflops;
  }
  if (!r.expert_tokens.empty()) {
    j["expert_tokens"] = r.expert_tokens;
    j["expert_imbalance"] = r.expert_imbalance;
  }
  return j;
}

}  // namespace ridge::bench
