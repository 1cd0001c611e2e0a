#include "slo/slo_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ridge::slo {
namespace {

constexpr int64_t kStreamLimit = 1024;  // the most streams a plan searches
// A chunk may cost the decodes this much of their capacity at the design context.
constexpr double kChunkCapacityLoss = 0.10;

double step_seconds(const StepModel& model, int64_t streams, int64_t context, int64_t chunk, int64_t chunk_past) {
  std::vector<plan::RunShape> runs(size_t(streams), plan::RunShape{context, 1, 1});
  if (chunk > 0) runs.push_back({chunk_past, chunk, 1});
  return model.predict(runs);
}

// Largest n in [0, hi] with ok(n), ok monotone (true then false).
template <typename F>
int64_t largest(int64_t hi, F ok) {
  if (hi <= 0 || !ok(1)) return 0;
  int64_t lo = 1;
  int64_t step = 1;
  while (lo < hi && ok(std::min(hi, lo + step))) lo = std::min(hi, lo + step), step *= 2;
  int64_t top = std::min(hi, lo + step);  // ok(lo), and !ok(top) unless top == lo
  if (top == lo) return lo;
  while (top - lo > 1) {
    const int64_t mid = lo + (top - lo) / 2;
    (ok(mid) ? lo : top) = mid;
  }
  return lo;
}

std::string ms(double s) { return s >= 1 ? fmt::format("{:.2f} s", s) : fmt::format("{:.0f} ms", s * 1e3); }

}  // namespace

int64_t streams_within(const StepModel& model, int64_t context, int64_t chunk, double bound_s, int64_t limit) {
  return largest(limit, [&](int64_t b) { return step_seconds(model, b, context, chunk, 0) <= bound_s; });
}

double prefill_seconds(const StepModel& model, int64_t n, int64_t chunk, int64_t streams, int64_t context) {
  double t = 0;
  for (int64_t done = 0; done < n; done += chunk) t += step_seconds(model, streams, context, std::min(chunk, n - done), done);
  return t;
}

SloPlan plan_for_slo(const StepModel& model, const SloPlanInputs& in) {
  SloPlan p;
  p.itl_s = in.slo.itl_s.value_or(in.slo.tpot_s.value_or(0));
  p.ttft_s = in.slo.ttft_s.value_or(0);
  p.step_bound_s = p.itl_s * in.margin;
  const int64_t n_ctx = std::max<int64_t>(in.n_ctx, 2);
  p.design_context = in.design_context > 0 ? std::min(in.design_context, n_ctx) : std::min<int64_t>(1024, n_ctx / 2);
  p.max_batched_tokens = in.max_batched_tokens > 0 ? in.max_batched_tokens : std::min<int64_t>(2048, n_ctx);
  auto by_memory = [&](int64_t context) {
    return in.kv_tokens > 0 ? std::min<int64_t>(kStreamLimit, in.kv_tokens / std::max<int64_t>(context, 1)) : kStreamLimit;
  };
  const int64_t mem_design = by_memory(p.design_context);

  if (p.itl_s > 0) {
    // The chunk: the largest that leaves the decodes 90% of the streams they hold without one.
    const bool one_measured = in.measured_one_stream_s > 0 && in.measured_one_stream_s <= p.step_bound_s && mem_design > 0;
    const int64_t without = std::min(mem_design, streams_within(model, p.design_context, 0, p.step_bound_s, kStreamLimit));
    if (without == 0 && one_measured)
      p.notes.push_back(fmt::format("the model predicts one stream at context {} at {}, but one measured {}: planning one",
                                    p.design_context, ms(step_seconds(model, 1, p.design_context, 0, 0)), ms(in.measured_one_stream_s)));
    else if (without == 0)
      p.notes.push_back(fmt::format("even one stream at context {} misses ITL <= {}: a decode step is predicted at {}{}", p.design_context,
                                    ms(p.itl_s), ms(step_seconds(model, 1, p.design_context, 0, 0)),
                                    in.measured_one_stream_s > 0 ? fmt::format(" (measured {})", ms(in.measured_one_stream_s)) : ""));
    p.prefill_chunk = 16;
    for (int64_t chunk = 16; chunk <= p.max_batched_tokens; chunk *= 2) {
      const int64_t with = std::min(mem_design, streams_within(model, p.design_context, chunk, p.step_bound_s, kStreamLimit));
      if (with < 1 || double(with) < (1.0 - kChunkCapacityLoss) * double(without)) break;
      p.prefill_chunk = chunk;
    }
    p.design_streams = std::min(mem_design, streams_within(model, p.design_context, p.prefill_chunk, p.step_bound_s, kStreamLimit));
    if (one_measured) p.design_streams = std::max<int64_t>(p.design_streams, 1);
    const double decodes_s = step_seconds(model, std::max<int64_t>(p.design_streams, 1), p.design_context, 0, 0);
    const double with_chunk_s = step_seconds(model, std::max<int64_t>(p.design_streams, 1), p.design_context, p.prefill_chunk, 0);
    p.decode_bound_s = std::max(0.0, p.step_bound_s - (with_chunk_s - decodes_s));
    // Short requests may run more at once; the admission check holds longer ones to the bound.
    const int64_t short_streams = streams_within(model, std::min<int64_t>(256, n_ctx), p.prefill_chunk, p.step_bound_s, kStreamLimit);
    p.max_num_seqs = int32_t(std::clamp<int64_t>(std::min(short_streams, by_memory(std::min<int64_t>(256, n_ctx))), 1, 256));
    for (int64_t c = 256; c <= n_ctx; c *= 2) {
      ContextCapacity cap;
      cap.context = c;
      cap.by_latency = streams_within(model, c, p.prefill_chunk, p.step_bound_s, kStreamLimit);
      if (one_measured && c <= p.design_context) cap.by_latency = std::max<int64_t>(cap.by_latency, 1);
      cap.by_memory = by_memory(c);
      p.capacity.push_back(cap);
    }
  } else {
    p.prefill_chunk = std::min<int64_t>(256, p.max_batched_tokens);
    p.max_num_seqs = int32_t(std::clamp<int64_t>(by_memory(p.design_context), 1, 256));
    p.design_streams = p.max_num_seqs;
  }
  if (p.ttft_s > 0) {
    const int64_t longest = n_ctx - 1;
    p.max_prompt_idle = largest(longest, [&](int64_t n) {
      return prefill_seconds(model, n, p.max_batched_tokens, 0, 0) <= p.ttft_s;
    });
    p.max_prompt_loaded = largest(longest, [&](int64_t n) {
      return prefill_seconds(model, n, p.prefill_chunk, p.design_streams, p.design_context) <= p.ttft_s;
    });
    if (p.max_prompt_idle == 0) p.notes.push_back(fmt::format("no prompt meets TTFT <= {} even on an idle engine", ms(p.ttft_s)));
  }
  p.idle_ttft_2k_s = prefill_seconds(model, std::min<int64_t>(2000, n_ctx - 1), p.max_batched_tokens, 0, 0);
  return p;
}

std::string describe(const SloPlan& p) {
  std::string out;
  if (p.itl_s > 0) {
    out += fmt::format("at ITL <= {} this machine holds {} concurrent streams at context <= {}", ms(p.itl_s), p.design_streams,
                       p.design_context);
    if (p.ttft_s > 0)
      out += fmt::format("; prompts above {} tokens will miss TTFT <= {} (on an idle engine: above {})", p.max_prompt_loaded,
                         ms(p.ttft_s), p.max_prompt_idle);
    out += ".\n";
    out += fmt::format("  chosen: --max-num-seqs {} --max-batched-tokens {} --prefill-chunk {}; steps that decode are held to {} "
                       "(admissions while the decodes fit {})\n",
                       p.max_num_seqs, p.max_batched_tokens, p.prefill_chunk, ms(p.step_bound_s), ms(p.decode_bound_s));
    out += "  context   streams within ITL   streams the KV pool holds   streams\n";
    for (const ContextCapacity& c : p.capacity)
      out += fmt::format("  {:>7}   {:>18}   {:>25}   {:>7}\n", c.context, c.by_latency, c.by_memory, c.streams());
  } else if (p.ttft_s > 0) {
    out += fmt::format("no inter-token objective: --max-num-seqs {} --max-batched-tokens {} --prefill-chunk {}; prompts above {} "
                       "tokens will miss TTFT <= {} on an idle engine.\n",
                       p.max_num_seqs, p.max_batched_tokens, p.prefill_chunk, p.max_prompt_idle, ms(p.ttft_s));
  }
  out += fmt::format("  a 2,000-token prompt alone: first token in {}\n", ms(p.idle_ttft_2k_s));
  for (const std::string& n : p.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace ridge::slo
