// ridge bench serve: a load generator for any OpenAI-compatible server (like `vllm bench serve`).
// Sends streaming completion or chat requests under a load shape (Poisson or even arrivals at a
// rate, or a fixed number in flight), times each chunk, and reports throughput, TTFT / TPOT / ITL /
// end-to-end percentiles and goodput under an SLO; --sweep-rates draws the throughput-latency curve.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "cli/commands.h"
#include "core/error.h"
#include "loadgen/serve_bench.h"
#include "loadgen/serve_report.h"
#include "loadgen/server_roofline.h"
#include "loadgen/sweep_plot.h"

namespace ridge::cli {
namespace {

using namespace ridge::loadgen;

struct BenchServeArgs {
  ServeBenchConfig config;
  std::string endpoint = "completions";
  std::string rate = "inf";
  std::string arrival = "poisson";
  std::string input_len = "fixed:256", output_len = "fixed:128";
  std::string slo;
  std::vector<std::string> sweep_rates;
  std::vector<int> sweep_concurrency;
  std::string plot;
  bool json = false;
  std::string json_out;
  bool no_ignore_eos = false;
  bool quiet = false;
};

double parse_rate(const std::string& text) {
  if (text == "inf" || text == "infinity") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    fail("bad request rate '{}' (want a positive number or inf)", text);
  return v;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) fail("cannot write '{}'", path);
}

std::string describe_load(const LoadShape& load) {
  const std::string cap = load.max_concurrency > 0 ? fmt::format("concurrency {}", load.max_concurrency) : "no concurrency cap";
  if (std::isinf(load.request_rate)) return fmt::format("all at once, {}", cap);
  return fmt::format("{} req/s ({}), {}", format_load_value(load.request_rate),
                     load.arrival == Arrival::Poisson ? "poisson" : "constant", cap);
}

void validate_and_fill(BenchServeArgs& a) {
  ServeBenchConfig& c = a.config;
  c.endpoint.api = parse_api_kind(a.endpoint);
  parse_base_url(c.endpoint.base_url);
  c.endpoint.ignore_eos = !a.no_ignore_eos;
  if (!(c.endpoint.temperature >= 0) || !(c.endpoint.top_p > 0 && c.endpoint.top_p <= 1))
    fail("--temperature must be >= 0 and --top-p in (0, 1] (got {} and {})", c.endpoint.temperature, c.endpoint.top_p);
  c.load.request_rate = parse_rate(a.rate);
  c.load.arrival = parse_arrival(a.arrival);
  c.load.seed = c.workload.seed;
  c.workload.input_len = LengthDist::parse(a.input_len);
  c.workload.output_len = LengthDist::parse(a.output_len);
  if (c.workload.shared_prefix_fraction < 0 || c.workload.shared_prefix_fraction > 1)
    fail("--shared-prefix-fraction must be between 0 and 1");
  if (!a.slo.empty()) c.slo = parse_slo(a.slo);
  if (c.num_requests < 1) fail("--num-requests must be at least 1");
  if (c.warmup < 0) fail("--warmup cannot be negative");
  if (c.load.max_concurrency < 0) fail("--concurrency cannot be negative");
  if (c.endpoint.timeout_s <= 0) fail("--timeout must be positive");
  if (!a.sweep_rates.empty() && !a.sweep_concurrency.empty()) fail("give --sweep-rates or --sweep-concurrency, not both");
  if (!a.plot.empty() && a.sweep_rates.empty() && a.sweep_concurrency.empty())
    fail("--plot draws a sweep: give --sweep-rates or --sweep-concurrency");
  c.progress = !a.quiet;
}

std::vector<SweepPoint> run_sweep(const BenchServeArgs& a) {
  std::vector<SweepPoint> points;
  const bool by_rate = !a.sweep_rates.empty();
  const size_t n = by_rate ? a.sweep_rates.size() : a.sweep_concurrency.size();
  for (size_t i = 0; i < n; ++i) {
    ServeBenchConfig c = a.config;
    SweepPoint p;
    p.parameter = by_rate ? "rate" : "concurrency";
    if (by_rate) {
      c.load.request_rate = p.value = parse_rate(a.sweep_rates[i]);
    } else {
      if (a.sweep_concurrency[i] < 1) fail("--sweep-concurrency values must be at least 1");
      c.load.max_concurrency = a.sweep_concurrency[i];
      p.value = a.sweep_concurrency[i];
    }
    if (i > 0) c.warmup = 0;  // the server is warm after the first level
    p.summary = run_serve_bench(c, fmt::format("{} {}", p.parameter, format_load_value(p.value)));
    points.push_back(std::move(p));
  }
  return points;
}

void run_bench_serve(BenchServeArgs& a) {
  validate_and_fill(a);
  const ServeBenchConfig& c = a.config;
  const std::string target = c.endpoint.base_url + api_path(c.endpoint.api);
  nlohmann::json out = {{"config", config_json(c)}};
  std::string text;
  int completed = 0;
  if (a.sweep_rates.empty() && a.sweep_concurrency.empty()) {
    const ServeSummary s = run_serve_bench(c, "requests");
    completed = s.completed;
    out["summary"] = summary_json(s);
    text = format_summary(
        s, fmt::format("{} requests to {} (model {}), {}", c.num_requests, target, c.endpoint.model, describe_load(c.load)));
  } else {
    const std::vector<SweepPoint> points = run_sweep(a);
    for (const auto& p : points) completed += p.summary.completed;
    out["sweep"] = sweep_json(points);
    text = fmt::format("sweep: {} requests per level to {} (model {})\n", c.num_requests, target, c.endpoint.model) +
           format_sweep(points);
    if (!a.plot.empty()) {
      write_file(a.plot, sweep_svg(points, fmt::format("{} ({})", target, c.endpoint.model)));
      text += fmt::format("\nplot written to {}\n", a.plot);
    }
  }
  if (auto roof = fetch_server_roofline(c.endpoint)) {  // a ridge server: where its steps ran on the roofline
    out["server_roofline"] = *roof;
    out["server_roofline"].erase("steps");
    text += describe_server_roofline(*roof);
  }
  if (!a.json_out.empty()) write_file(a.json_out, out.dump(2) + "\n");
  std::fputs(a.json ? (out.dump(2) + "\n").c_str() : text.c_str(), stdout);
  std::fflush(stdout);
  if (completed == 0) fail("no request completed (the failures are listed above)");  // a non-zero exit for scripts
}

}  // namespace

void add_bench_serve_command(CLI::App& bench) {
  auto a = std::make_shared<BenchServeArgs>();
  ServeBenchConfig& c = a->config;
  CLI::App* cmd = bench.add_subcommand("serve", "Load-test an OpenAI-compatible server (throughput, TTFT, ITL, goodput)");
  cmd->footer(
      "Lengths: fixed:N, uniform:A:B or normal:MEAN:STD tokens (synthetic prompts are random common words, about a\n"
      "token each). SLO: ttft=1s,tpot=50ms,itl=40ms,e2e=10s, any subset; itl bounds a request's longest gap.\n"
      "Examples:\n"
      "  ridge bench serve --request-rate 4 -n 200 --slo ttft=1s,tpot=50ms\n"
      "  ridge bench serve --endpoint chat --concurrency 8 --dataset sharegpt.jsonl\n"
      "  ridge bench serve --sweep-rates 1,2,4,8 --plot curve.svg");
  cmd->add_option("--base-url", c.endpoint.base_url, "Server address, without /v1")->type_name("URL")->capture_default_str();
  cmd->add_option("--endpoint", a->endpoint, "completions (/v1/completions) or chat (/v1/chat/completions)")
      ->type_name("KIND")
      ->capture_default_str();
  cmd->add_option("--model", c.endpoint.model, "Model name sent with each request")->type_name("NAME")->capture_default_str();
  cmd->add_option("--api-key", c.endpoint.api_key, "Bearer token")->type_name("KEY")->envname("OPENAI_API_KEY");
  cmd->add_option("-n,--num-requests", c.num_requests, "Measured requests (per level in a sweep)")->capture_default_str();
  cmd->add_option("--warmup", c.warmup, "Requests sent first and left out of the figures")->capture_default_str();
  cmd->add_option("--request-rate", a->rate, "Requests per second, or inf to send all at once")
      ->type_name("RATE")
      ->capture_default_str();
  cmd->add_option("--arrival", a->arrival, "Arrival process at a finite rate: poisson or constant")->capture_default_str();
  cmd->add_option("-c,--concurrency", c.load.max_concurrency,
                  "Most requests in flight (0 = no cap); with rate inf, a closed loop")
      ->capture_default_str();
  cmd->add_option("--input-len", a->input_len, "Prompt length distribution, tokens")->type_name("DIST")->capture_default_str();
  CLI::Option* output_len = cmd->add_option("--output-len", a->output_len, "Output length distribution, tokens (max_tokens)")
                                ->type_name("DIST")
                                ->capture_default_str();
  cmd->add_option("--dataset", c.workload.dataset,
                  "Replay prompts from JSONL: ShareGPT conversations or {\"prompt\", \"max_tokens\"} lines")
      ->type_name("FILE");
  cmd->add_option("--shared-prefix-fraction", c.workload.shared_prefix_fraction,
                  "Fraction of requests that open with the same prefix")
      ->capture_default_str();
  cmd->add_option("--shared-prefix-len", c.workload.shared_prefix_len, "Length of that prefix, tokens (inside --input-len)")
      ->capture_default_str();
  cmd->add_option("--seed", c.workload.seed, "Seed of prompts, lengths and arrivals")->capture_default_str();
  cmd->add_option("--slo", a->slo, "Goodput objectives, e.g. ttft=1s,tpot=50ms")->type_name("SPEC");
  cmd->add_option("--timeout", c.endpoint.timeout_s, "Seconds to connect, or to wait between two chunks")->capture_default_str();
  cmd->add_flag("--no-ignore-eos", a->no_ignore_eos, "Do not send ignore_eos (for servers that reject it)");
  cmd->add_option("--temperature", c.endpoint.temperature, "Sampling temperature of every request (0: greedy)")
      ->capture_default_str();
  cmd->add_option("--top-p", c.endpoint.top_p, "Nucleus sampling threshold of every request (1: off)")->capture_default_str();
  cmd->add_option("--sweep-rates", a->sweep_rates, "Run each request rate in turn, e.g. 1,2,4,8,inf")
      ->type_name("RATES")
      ->delimiter(',');
  cmd->add_option("--sweep-concurrency", a->sweep_concurrency, "Run each concurrency in turn, e.g. 1,2,4,8")
      ->type_name("LIST")
      ->delimiter(',');
  cmd->add_option("--plot", a->plot, "With a sweep: write the throughput-latency curve as SVG")->type_name("FILE");
  cmd->add_flag("--json", a->json, "Print JSON instead of the table");
  cmd->add_option("--json-out", a->json_out, "Also write the JSON to this file")->type_name("FILE");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress bar");
  cmd->callback([a, output_len] {
    a->config.workload.output_len_given = output_len->count() > 0;  // overrides a dataset's lengths
    run_bench_serve(*a);
  });
}

}  // namespace ridge::cli
