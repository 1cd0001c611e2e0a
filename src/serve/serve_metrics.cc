#include "serve/serve_metrics.h"

#include <tuple>
#include <cmath>

namespace ridge {
namespace {

std::vector<double> token_count_buckets() {
  return {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
}

const char* success_help() { return "Finished requests by finish reason."; }

}  // namespace

ServeMetrics::ServeMetrics()
    : ttft_(registry_.histogram("ridge:time_to_first_token_seconds", "Time from arrival to the first token.", latency_buckets())),
      itl_(registry_.histogram("ridge:inter_token_latency_seconds", "Time between consecutive tokens of a request.", latency_buckets())),
      tpot_(registry_.histogram("ridge:time_per_output_token_seconds",
                                "Mean time per output token after the first, per request.", latency_buckets())),
      e2e_(registry_.histogram("ridge:e2e_request_latency_seconds", "Time from arrival to the last token.", latency_buckets())),
      queue_(registry_.histogram("ridge:request_queue_time_seconds", "Time waiting before the first scheduled step.", latency_buckets())),
      prompt_len_(registry_.histogram("ridge:request_prompt_tokens", "Prompt tokens per request.", token_count_buckets())),
      generation_len_(registry_.histogram("ridge:request_generation_tokens", "Generated tokens per request.", token_count_buckets())),
      finished_stop_(registry_.counter("ridge:request_success_total", success_help(), {{"finished_reason", "stop"}})),
      finished_length_(registry_.counter("ridge:request_success_total", success_help(), {{"finished_reason", "length"}})),
      finished_abort_(registry_.counter("ridge:request_success_total", success_help(), {{"finished_reason", "abort"}})),
      prompt_tokens_(registry_.counter("ridge:prompt_tokens_total", "Prompt tokens of admitted requests.")),
      generation_tokens_(registry_.counter("ridge:generation_tokens_total", "Generated tokens.")),
      grammar_compile_(registry_.histogram("ridge:grammar_compile_seconds",
                                           "Time to get a compiled grammar for a request (cache hits included).",
                                           latency_buckets())),
      grammar_rejected_(registry_.counter("ridge:grammar_rejected_total",
                                          "Requests refused for a bad or unsupported schema, regex or grammar.")),
      recent_ttft_(std::chrono::seconds(60), 4096),
      recent_itl_(std::chrono::seconds(60), 16384),
      recent_e2e_(std::chrono::seconds(60), 4096) {}

void ServeMetrics::observe_first_token(double seconds) {
  ttft_.observe(seconds);
  recent_ttft_.add(seconds);
}

void ServeMetrics::observe_inter_token(double seconds) {
  itl_.observe(seconds);
  recent_itl_.add(seconds);
}

void ServeMetrics::count_tokens(int64_t prompt_tokens, int64_t generated_tokens) {
  if (prompt_tokens) prompt_tokens_.add(double(prompt_tokens));
  if (generated_tokens) generation_tokens_.add(double(generated_tokens));
}

void ServeMetrics::observe_queue_time(double seconds) { queue_.observe(seconds); }

void ServeMetrics::observe_finished(const Finished& f) {
  switch (f.reason) {
    case FinishReason::Length: finished_length_.add(); break;
    case FinishReason::Abort: finished_abort_.add(); break;
    default: finished_stop_.add(); break;
  }
  e2e_.observe(f.e2e_seconds);
  recent_e2e_.add(f.e2e_seconds);
  if (f.generation_tokens > 1) tpot_.observe(f.decode_seconds / double(f.generation_tokens - 1));
  prompt_len_.observe(double(f.prompt_tokens));
  generation_len_.observe(double(f.generation_tokens));
  count_slo(f);
}

void ServeMetrics::set_slo(const loadgen::Slo& slo) {
  slo_ = slo;
  slo_counters_.clear();
  if (slo.empty()) return;
  auto add = [&](const std::string& name) {
    slo_counters_.push_back(
        {name,
         &registry_.counter("ridge:requests_slo_met_total", "Finished requests that met each latency objective (all: every one).",
                            {{"slo", name}}),
         &registry_.counter("ridge:requests_slo_missed_total", "Finished requests that missed each latency objective.",
                            {{"slo", name}})});
  };
  if (slo.ttft_s) add("ttft");
  if (slo.tpot_s) add("tpot");
  if (slo.itl_s) add("itl");
  if (slo.e2e_s) add("e2e");
  add("all");
}

void ServeMetrics::count_slo(const Finished& f) {
  if (slo_counters_.empty()) return;
  const bool ok = f.reason != FinishReason::Abort && f.ttft_seconds >= 0;
  const double tpot = f.generation_tokens > 1 ? f.decode_seconds / double(f.generation_tokens - 1) : 0;
  bool all = ok;
  for (const SloCounters& c : slo_counters_) {
    bool met = ok;
    if (c.name == "ttft") met = ok && f.ttft_seconds <= *slo_.ttft_s;
    if (c.name == "tpot") met = ok && tpot <= *slo_.tpot_s;
    if (c.name == "itl") met = ok && f.max_itl_seconds <= *slo_.itl_s;
    if (c.name == "e2e") met = ok && f.e2e_seconds <= *slo_.e2e_s;
    if (c.name == "all") met = all;
    all = all && met;
    (met ? c.met : c.missed)->add();
  }
}

void ServeMetrics::mirror(const EngineStats& s) {
  auto& r = registry_;
  mirror_slo(s.slo);
  r.gauge("ridge:num_requests_running", "Requests in the running batch.").set(double(s.running));
  r.gauge("ridge:num_requests_waiting", "Requests queued or preempted.").set(double(s.waiting));
  r.gauge("ridge:kv_cache_usage_perc", "Fraction of KV cache blocks in use (1 = full).")
      .set(s.kv_blocks_total > 0 ? double(s.kv_blocks_used) / double(s.kv_blocks_total) : 0.0);
  r.gauge("ridge:kv_cache_blocks_used", "KV cache blocks in use.").set(double(s.kv_blocks_used));
  r.gauge("ridge:kv_cache_blocks_total", "KV cache blocks in the pool.").set(double(s.kv_blocks_total));
  r.gauge("ridge:batch_num_seqs", "Sequences in the last engine step.").set(double(s.last_batch_seqs));
  r.gauge("ridge:batch_num_tokens", "Tokens in the last engine step.").set(double(s.last_batch_tokens));
  r.counter("ridge:num_preemptions_total", "Preemptions (a running request sent back to wait).").set(double(s.preemptions));
  r.counter("ridge:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.").set(double(s.prefix_query_tokens));
  r.counter("ridge:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.").set(double(s.prefix_hit_tokens));
  r.counter("ridge:kv_evictions_total", "Cached KV blocks evicted for reuse.").set(double(s.evictions));
  r.counter("ridge:engine_steps_total", "Engine steps (forward passes).").set(double(s.steps));
  r.counter("ridge:prefill_tokens_computed_total", "Prompt (and recomputed) tokens run through the model.")
      .set(double(s.tokens_prefilled));
  r.counter("ridge:engine_step_seconds_total", "Time spent inside engine steps.").set(s.step_seconds);
  r.counter("ridge:grammar_requests_total", "Requests with structured output (a schema, regex, choice or grammar).")
      .set(double(s.grammar_requests));
  r.counter("ridge:grammar_masks_total", "Token masks computed for structured output.").set(double(s.grammar_masks));
  r.counter("ridge:grammar_mask_seconds_total", "Time computing token masks (beside the forward pass).")
      .set(s.grammar_mask_seconds);
  r.gauge("ridge:grammar_mask_max_seconds", "Longest token mask computation since start.").set(s.grammar_mask_max_seconds);
  r.histogram("ridge:grammar_mask_seconds", "Time per token mask (on the mask worker, beside the forward pass).",
              {kGrammarMaskBuckets.begin(), kGrammarMaskBuckets.end()})
      .assign({s.grammar_mask_histogram.begin(), s.grammar_mask_histogram.end()}, s.grammar_mask_seconds);
  r.counter("ridge:grammar_forced_tokens_total", "Tokens the grammar forced, appended without sampling (jump-forward).")
      .set(double(s.grammar_forced_tokens));
  r.counter("ridge:spec_decode_num_drafts_total", "Speculative verify runs (a request's decode with its draft tokens).")
      .set(double(s.spec_drafts));
  r.counter("ridge:spec_decode_num_draft_tokens_total", "Draft tokens verified.").set(double(s.spec_draft_tokens));
  r.counter("ridge:spec_decode_num_accepted_tokens_total", "Draft tokens kept.").set(double(s.spec_accepted_tokens));
  for (size_t i = 0; i < s.spec_accepted_per_pos.size(); ++i)
    if (s.spec_accepted_per_pos[i] > 0 || i == 0)
      r.counter("ridge:spec_decode_num_accepted_tokens_per_pos_total", "Draft tokens kept, by position in the draft.",
                {{"position", std::to_string(i)}})
          .set(double(s.spec_accepted_per_pos[i]));
  r.counter("ridge:grammar_dead_ends_total", "Requests ended because their grammar allowed no token.")
      .set(double(s.grammar_dead_ends));
  for (size_t e = 0; e < s.moe_expert_tokens.size(); ++e)
    r.counter("ridge:moe_expert_tokens_total", "Tokens routed to each expert, summed over the MoE layers.",
              {{"expert", std::to_string(e)}})
        .set(double(s.moe_expert_tokens[e]));
  for (size_t rank = 0; rank < s.moe_rank_tokens.size(); ++rank)
    r.counter("ridge:moe_rank_tokens_total", "Expert parallelism: tokens routed to the experts each rank holds.",
              {{"rank", std::to_string(rank)}})
        .set(double(s.moe_rank_tokens[rank]));
  // Disaggregated prefill/decode (both sides: a decode instance receives, a prefill instance sends).
  r.gauge("ridge:kv_transfer_waiting_requests", "Requests waiting for their prompt's K/V from a prefill instance.")
      .set(double(s.awaiting_remote));
  r.counter("ridge:kv_transfer_remote_prefills_total", "Prompts prefilled by another instance, their K/V received.")
      .set(double(s.remote_prefills));
  r.counter("ridge:kv_transfer_failures_total", "Transfers that failed or timed out (the prompt was then computed here).")
      .set(double(s.remote_prefill_failures));
  r.counter("ridge:kv_transfer_re_prefills_total", "Prompts computed here after their transfer failed.")
      .set(double(s.remote_prefill_failures));
  r.counter("ridge:kv_transfer_received_tokens_total", "Prompt positions whose K/V arrived from a prefill instance.")
      .set(double(s.kv_tokens_received));
  r.counter("ridge:kv_transfer_received_bytes_total", "K/V bytes received from prefill instances.").set(double(s.kv_bytes_received));
  r.histogram("ridge:kv_transfer_seconds", "Time from asking a prefill instance to the last byte of its K/V.",
              {kKvTransferBuckets.begin(), kKvTransferBuckets.end()})
      .assign({s.kv_transfer_histogram.begin(), s.kv_transfer_histogram.end()}, s.kv_transfer_seconds);
  r.histogram("ridge:kv_transfer_received_bytes", "K/V bytes of each transfer received.", {kKvBytesBuckets.begin(), kKvBytesBuckets.end()})
      .assign({s.kv_received_bytes_histogram.counts.begin(), s.kv_received_bytes_histogram.counts.end()}, s.kv_received_bytes_histogram.sum);
  r.gauge("ridge:kv_transfer_quarantined_blocks", "Blocks held until a failed transfer can no longer write into them.")
      .set(double(s.kv_blocks_quarantined));
  if (s.kv_tiers) {  // the tiers below the KV pool (--kv-offload-ram / --kv-offload-dir)
    r.counter("ridge:kv_offload_loads_total", "Admissions that loaded prefix blocks from a tier instead of computing them.")
        .set(double(s.tier_loads));
    r.counter("ridge:kv_offload_load_failures_total", "Tier loads that failed (a corrupt file): the prompt was computed.")
        .set(double(s.tier_load_failures));
    r.counter("ridge:kv_offload_loaded_tokens_total", "Prompt positions whose K/V came from a tier.").set(double(s.tier_tokens_loaded));
    r.counter("ridge:kv_offload_loaded_bytes_total", "K/V bytes loaded back from the tiers.").set(double(s.tier_bytes_loaded));
    r.counter("ridge:kv_offload_stored_blocks_total", "Prefix blocks evicted from the pool into the tiers.")
        .set(double(s.tier_blocks_offloaded));
    for (const auto& [tier, blocks, bytes, hits] : {std::tuple{"ram", s.tier.ram_blocks, s.tier.ram_bytes, s.tier.ram_hits},
                                                    std::tuple{"disk", s.tier.disk_blocks, s.tier.disk_bytes, s.tier.disk_hits}}) {
      r.gauge("ridge:kv_offload_blocks", "Blocks held by each tier.", {{"tier", tier}}).set(double(blocks));
      r.gauge("ridge:kv_offload_bytes", "Bytes held by each tier.", {{"tier", tier}}).set(double(bytes));
      r.counter("ridge:kv_offload_hits_total", "Blocks loaded back from each tier.", {{"tier", tier}}).set(double(hits));
    }
    r.counter("ridge:kv_offload_corrupt_files_total", "Disk-tier files found corrupt or truncated (deleted, never served).")
        .set(double(s.tier.corrupt_files));
    r.counter("ridge:kv_offload_disk_writes_total", "Blocks written to the disk tier.").set(double(s.tier.disk_writes));
    r.counter("ridge:kv_offload_disk_write_failures_total", "Disk-tier writes that failed (a full or broken file system): the block is dropped.")
        .set(double(s.tier.disk_write_failures));
    r.counter("ridge:kv_offload_disk_write_drops_total", "Blocks dropped because the disk writer's queue was full.")
        .set(double(s.tier.disk_write_drops));
  }
  r.counter("ridge:kv_transfer_sent_total", "Prefills whose K/V this instance sent to a decode instance.").set(double(s.kv_transfers_sent));
  r.counter("ridge:kv_transfer_send_failures_total", "Transfers this instance could not complete.").set(double(s.kv_send_failures));
  r.counter("ridge:kv_transfer_sent_bytes_total", "K/V bytes sent to decode instances.").set(double(s.kv_bytes_sent));
  r.histogram("ridge:kv_transfer_sent_bytes", "K/V bytes of each transfer sent.", {kKvBytesBuckets.begin(), kKvBytesBuckets.end()})
      .assign({s.kv_sent_bytes_histogram.counts.begin(), s.kv_sent_bytes_histogram.counts.end()}, s.kv_sent_bytes_histogram.sum);
  r.histogram("ridge:kv_transfer_send_bandwidth_bytes_per_second",
              "Achieved rate of each transfer sent: its bytes over first put to last byte landed.",
              {kKvBandwidthBuckets.begin(), kKvBandwidthBuckets.end()})
      .assign({s.kv_send_bandwidth_histogram.counts.begin(), s.kv_send_bandwidth_histogram.counts.end()}, s.kv_send_bandwidth_histogram.sum);
  r.histogram("ridge:kv_transfer_send_exposed_seconds",
              "Time each transfer sent ran past the end of its prompt's compute (the part not hidden behind it).",
              {kKvTransferBuckets.begin(), kKvTransferBuckets.end()})
      .assign({s.kv_send_exposed_histogram.counts.begin(), s.kv_send_exposed_histogram.counts.end()}, s.kv_send_exposed_histogram.sum);
  if (!s.moe_expert_tokens.empty())
    r.gauge("ridge:moe_expert_imbalance", "The hottest expert's tokens over the mean, in the worst layer (1 = balanced).")
        .set(s.moe_layer_imbalance);
}

void ServeMetrics::observe_grammar_compile(double seconds, bool ok) {
  grammar_compile_.observe(seconds);
  if (!ok) grammar_rejected_.add();
}

std::string with_metrics_prefix(const std::string& text, const std::string& prefix) {
  if (prefix == "ridge") return text;
  std::string out;
  out.reserve(text.size());
  size_t line = 0;
  while (line < text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string::npos) end = text.size() - 1;
    std::string_view l(text.data() + line, end - line + 1);
    for (std::string_view head : {"# HELP ", "# TYPE ", ""}) {  // a name opens a sample line or follows these
      if (l.substr(0, head.size()) == head && l.substr(head.size(), 6) == "ridge:") {
        out.append(head).append(prefix).append(":");
        l.remove_prefix(head.size() + 6);
        break;
      }
    }
    out.append(l);
    line = end + 1;
  }
  return out;
}

std::string ServeMetrics::prometheus(const EngineStats& stats) {
  mirror(stats);
  return registry_.render();
}

nlohmann::json ServeMetrics::json(const EngineStats& s) {
  auto latency = [](RecentSamples& samples) {
    const auto p = samples.percentiles({0.5, 0.99});
    auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return nlohmann::json{{"p50", finite(p[0])}, {"p99", finite(p[1])}};
  };
  return {
      {"uptime_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()},
      {"running", s.running},
      {"waiting", s.waiting},
      {"kv_blocks_used", s.kv_blocks_used},
      {"kv_blocks_total", s.kv_blocks_total},
      {"kv_cache_usage", s.kv_blocks_total > 0 ? double(s.kv_blocks_used) / double(s.kv_blocks_total) : 0.0},
      {"batch_seqs", s.last_batch_seqs},
      {"batch_tokens", s.last_batch_tokens},
      {"steps", s.steps},
      {"preemptions", s.preemptions},
      {"prefix_cache_queries", s.prefix_query_tokens},
      {"prefix_cache_hits", s.prefix_hit_tokens},
      {"kv_evictions", s.evictions},
      {"grammar", {{"requests", s.grammar_requests}, {"masks", s.grammar_masks},
                   {"mask_seconds_mean", s.grammar_masks ? s.grammar_mask_seconds / double(s.grammar_masks) : 0.0},
                   {"mask_seconds_max", s.grammar_mask_max_seconds}, {"forced_tokens", s.grammar_forced_tokens},
                   {"dead_ends", s.grammar_dead_ends}}},
      {"spec_decode", {{"drafts", s.spec_drafts}, {"draft_tokens", s.spec_draft_tokens},
                       {"accepted_tokens", s.spec_accepted_tokens},
                       {"acceptance_rate", s.spec_draft_tokens ? double(s.spec_accepted_tokens) / double(s.spec_draft_tokens) : 0.0}}},
      {"moe", {{"expert_tokens", s.moe_expert_tokens}, {"imbalance", s.moe_layer_imbalance}, {"rank_tokens", s.moe_rank_tokens}}},
      {"prompt_tokens_total", prompt_tokens_.value()},
      {"generation_tokens_total", generation_tokens_.value()},
      {"requests", {{"stop", finished_stop_.value()}, {"length", finished_length_.value()}, {"abort", finished_abort_.value()}}},
      {"ttft_seconds", latency(recent_ttft_)},
      {"itl_seconds", latency(recent_itl_)},
      {"e2e_seconds", latency(recent_e2e_)},
      {"slo", slo_json(s.slo)},
  };
}

}  // namespace ridge
