#include "serve/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace ridge {
namespace {

// Prometheus number syntax: integers without a fraction, +Inf/-Inf/NaN spelled as Go parses them.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::trunc(v) && std::abs(v) < 1e15) return fmt::format("{}", int64_t(v));
  return fmt::format("{}", v);
}

std::string escape_label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string label_text(const MetricLabels& labels, const std::string& extra_name = {}, const std::string& extra_value = {}) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(fmt::format("{}=\"{}\"", k, escape_label_value(v)));
  if (!extra_name.empty()) parts.push_back(fmt::format("{}=\"{}\"", extra_name, extra_value));
  return parts.empty() ? std::string() : fmt::format("{{{}}}", fmt::join(parts, ","));
}

bool valid_metric_name(const std::string& name) {
  if (name.empty() || std::isdigit((unsigned char)name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == ':'; });
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()) || std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    fail("histogram buckets must be strictly increasing");
}

void Histogram::observe(double v) {
  const size_t bucket = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());  // le: v <= bound
  std::lock_guard lock(mutex_);
  ++counts_[bucket];
  sum_ += v;
  ++count_;
}

void Histogram::assign(const std::vector<uint64_t>& per_bucket, double sum) {
  if (per_bucket.size() != counts_.size()) fail("histogram: {} counts for {} buckets", per_bucket.size(), counts_.size());
  std::lock_guard lock(mutex_);
  counts_ = per_bucket;
  sum_ = sum;
  count_ = 0;
  for (uint64_t c : counts_) count_ += c;
}

Histogram::Snapshot Histogram::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot s{bounds_, {}, sum_, count_};
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  return s;
}

double Histogram::Snapshot::quantile(double q) const {
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  const double rank = q * double(count);
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    if (double(cumulative[i]) < rank) continue;
    const double lower = i == 0 ? 0.0 : upper_bounds[i - 1];
    const double below = i == 0 ? 0.0 : double(cumulative[i - 1]);
    const double in_bucket = double(cumulative[i]) - below;
    return in_bucket > 0 ? lower + (upper_bounds[i] - lower) * (rank - below) / in_bucket : upper_bounds[i];
  }
  return upper_bounds.empty() ? std::numeric_limits<double>::quiet_NaN() : upper_bounds.back();  // rank in +Inf
}

std::vector<double> latency_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
          2.5,   5.0,   7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0};
}

MetricsRegistry::Child& MetricsRegistry::child(const std::string& name, const std::string& help, Type type,
                                               const MetricLabels& labels) {
  if (!valid_metric_name(name)) fail("invalid metric name '{}'", name);
  std::lock_guard lock(mutex_);
  Family* family = nullptr;
  for (auto& f : families_)
    if (f->name == name) family = f.get();
  if (!family) {
    families_.push_back(std::make_unique<Family>(Family{name, help, type, {}}));
    family = families_.back().get();
  }
  if (family->type != type) fail("metric '{}' registered with two types", name);
  for (auto& c : family->children)
    if (c->labels == labels) return *c;
  family->children.push_back(std::make_unique<Child>());
  Child& c = *family->children.back();
  c.labels = labels;
  if (type != Type::TypeHistogram) c.value = std::make_unique<MetricValue>();  // histogram() makes the rest: it knows the buckets
  return c;
}

Counter& MetricsRegistry::counter(const std::string& name, const std::string& help, const MetricLabels& labels) {
  return *child(name, help, Type::TypeCounter, labels).value;
}

Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help, const MetricLabels& labels) {
  return *child(name, help, Type::TypeGauge, labels).value;
}

Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help, std::vector<double> upper_bounds) {
  Child& c = child(name, help, Type::TypeHistogram, {});
  std::lock_guard lock(mutex_);
  if (!c.histogram) c.histogram = std::make_unique<Histogram>(std::move(upper_bounds));
  return *c.histogram;
}

std::string MetricsRegistry::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& f : families_) {
    const char* type = f->type == Type::TypeCounter ? "counter" : f->type == Type::TypeGauge ? "gauge" : "histogram";
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f->name, f->help, f->name, type);
    for (const auto& c : f->children) {
      if (c->value) out += fmt::format("{}{} {}\n", f->name, label_text(c->labels), number(c->value->value()));
      if (!c->histogram) continue;
      const Histogram::Snapshot s = c->histogram->snapshot();
      for (size_t i = 0; i < s.cumulative.size(); ++i) {
        const std::string le = i < s.upper_bounds.size() ? number(s.upper_bounds[i]) : "+Inf";
        out += fmt::format("{}_bucket{} {}\n", f->name, label_text(c->labels, "le", le), s.cumulative[i]);
      }
      out += fmt::format("{}_sum{} {}\n", f->name, label_text(c->labels), number(s.sum));
      out += fmt::format("{}_count{} {}\n", f->name, label_text(c->labels), s.count);
    }
  }
  return out;
}

void RecentSamples::expire(Clock::time_point now) {
  while (!samples_.empty() && (samples_.size() > max_samples_ || now - samples_.front().first > window_)) samples_.pop_front();
}

void RecentSamples::add(double v, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  samples_.emplace_back(now, v);
  expire(now);
}

std::vector<double> RecentSamples::percentiles(const std::vector<double>& qs, Clock::time_point now) {
  std::vector<double> values;
  {
    std::lock_guard lock(mutex_);
    expire(now);
    for (const auto& s : samples_) values.push_back(s.second);
  }
  std::sort(values.begin(), values.end());
  std::vector<double> out;
  for (double q : qs) {
    if (values.empty()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    const size_t rank = size_t(std::ceil(q * double(values.size())));
    out.push_back(values[std::clamp<size_t>(rank, 1, values.size()) - 1]);
  }
  return out;
}

}  // namespace ridge
