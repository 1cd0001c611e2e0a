#include "loadgen/serve_report.h"

#include <fmt/format.h>

#include <cmath>

#include "plan/table.h"

namespace ridge::loadgen {
namespace {

using nlohmann::json;

std::string ms(double seconds) { return fmt::format("{:.2f}", seconds * 1e3); }

json stats_json(const LatencyStats& s) {
  return {{"count", s.count},   {"mean", s.mean * 1e3}, {"p50", s.p50 * 1e3},
          {"p90", s.p90 * 1e3}, {"p99", s.p99 * 1e3},   {"max", s.max * 1e3}};
}

std::string goodput_cell(const ServeSummary& s) { return s.goodput ? fmt::format("{:.2f}", *s.goodput) : "-"; }

}  // namespace

std::string format_load_value(double value) { return std::isinf(value) ? "inf" : fmt::format("{:g}", value); }

std::string format_summary(const ServeSummary& s, const std::string& title) {
  std::string out = title + "\n";
  auto line = [&](const char* name, const std::string& value) { out += fmt::format("  {:<20}{}\n", name, value); };
  line("duration", fmt::format("{:.2f} s", s.duration_s));
  line("requests", fmt::format("{} completed, {} failed", s.completed, s.failed));
  line("request throughput", fmt::format("{:.2f} req/s", s.request_throughput));
  line("input tokens", fmt::format("{} ({:.1f} tok/s)", s.input_tokens, s.input_throughput));
  line("output tokens", fmt::format("{} ({:.1f} tok/s)", s.output_tokens, s.output_throughput));
  if (s.goodput)
    line("goodput", fmt::format("{:.2f} req/s ({} of {} meet {})", *s.goodput, s.good_requests, s.completed, s.slo.describe()));
  if (s.with_usage < s.completed)
    out += fmt::format("  ({} of {} responses had no usage: their token counts are estimates)\n", s.completed - s.with_usage,
                       s.completed);
  if (s.completed > 0) {
    plan::TextTable table({"latency (ms)", "mean", "p50", "p90", "p99", "max"});
    auto row = [&](const char* name, const LatencyStats& l) {
      if (l.count) table.add_row({name, ms(l.mean), ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max)});
    };
    row("TTFT", s.ttft);
    row("TPOT", s.tpot);
    row("ITL", s.itl);
    row("E2E", s.e2e);
    out += '\n';
    out += table.render();
  }
  if (!s.errors.empty()) {
    out += "\n  failures:\n";
    for (const auto& [message, count] : s.errors) out += fmt::format("  {:>6} x {}\n", count, message);
  }
  return out;
}

json summary_json(const ServeSummary& s) {
  json errors = json::array();
  for (const auto& [message, count] : s.errors) errors.push_back({{"message", message}, {"count", count}});
  json slo = json::object();
  auto bound = [&](const char* name, const std::optional<double>& b) {
    if (b) slo[name] = *b * 1e3;
  };
  bound("ttft_ms", s.slo.ttft_s);
  bound("tpot_ms", s.slo.tpot_s);
  bound("itl_ms", s.slo.itl_s);
  bound("e2e_ms", s.slo.e2e_s);
  return {{"duration_s", s.duration_s},
          {"completed", s.completed},
          {"failed", s.failed},
          {"completed_with_usage", s.with_usage},
          {"total_input_tokens", s.input_tokens},
          {"total_output_tokens", s.output_tokens},
          {"request_throughput", s.request_throughput},
          {"input_throughput", s.input_throughput},
          {"output_throughput", s.output_throughput},
          {"ttft_ms", stats_json(s.ttft)},
          {"tpot_ms", stats_json(s.tpot)},
          {"itl_ms", stats_json(s.itl)},
          {"e2e_ms", stats_json(s.e2e)},
          {"slo", slo},
          {"good_requests", s.good_requests},
          {"goodput", s.goodput ? json(*s.goodput) : json(nullptr)},
          {"errors", errors}};
}

std::string format_sweep(const std::vector<SweepPoint>& points) {
  const std::string parameter = points.empty() ? "rate" : points.front().parameter;
  plan::TextTable table({parameter, "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "goodput", "failed"});
  for (const auto& p : points) {
    const ServeSummary& s = p.summary;
    table.add_row({format_load_value(p.value), fmt::format("{:.2f}", s.request_throughput),
                   fmt::format("{:.1f}", s.output_throughput), ms(s.ttft.p50), ms(s.ttft.p99), ms(s.itl.p50), ms(s.itl.p99),
                   goodput_cell(s), std::to_string(s.failed)});
  }
  std::string out = "  (latencies in ms, goodput in req/s)\n";
  return out + table.render();
}

json sweep_json(const std::vector<SweepPoint>& points) {
  json out = json::array();
  for (const auto& p : points) {
    json point = summary_json(p.summary);
    point[p.parameter] = std::isinf(p.value) ? json("inf") : json(p.value);
    out.push_back(point);
  }
  return out;
}

}  // namespace ridge::loadgen
