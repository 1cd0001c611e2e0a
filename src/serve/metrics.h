#pragma once
// A small Prometheus registry: counters and gauges (optionally labelled), histograms with fixed
// buckets, all safe to update from any thread, rendered in the text exposition format (0.0.4):
//   # HELP name text
//   # TYPE name counter|gauge|histogram
//   name{label="value"} 42
//   name_bucket{le="0.1"} 3 ... name_bucket{le="+Inf"} 5, name_sum 0.42, name_count 5
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ridge {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// A counter or gauge value. Counters only add (or mirror a total counted elsewhere, such as the
// engine's counters read at scrape time); gauges set. The type is the family's, given at registration.
class MetricValue {
 public:
  void add(double v = 1) { value_.fetch_add(v, std::memory_order_relaxed); }
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};
using Counter = MetricValue;
using Gauge = MetricValue;

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);  // increasing; +Inf is implied
  void observe(double v);
  // Replaces the contents with counts kept elsewhere (one per bucket, +Inf last; not cumulative).
  void assign(const std::vector<uint64_t>& per_bucket, double sum);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative;  // per bound, then the +Inf bucket (== count)
    double sum = 0;
    uint64_t count = 0;
    // Prometheus' histogram_quantile: linear within the bucket holding the rank; NaN when empty.
    double quantile(double q) const;
  };
  Snapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), the last one is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Buckets for latencies from 1 ms to 10 min, close to vLLM's.
std::vector<double> latency_buckets();

class MetricsRegistry {
 public:
  // Registering a name again with other labels adds a child to the same family; the same name and
  // labels return the same metric. References stay valid for the registry's life.
  Counter& counter(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, std::vector<double> upper_bounds);

  std::string render() const;

 private:
  enum class Type { TypeCounter, TypeGauge, TypeHistogram };
  struct Child {
    MetricLabels labels;
    std::unique_ptr<MetricValue> value;      // counters and gauges
    std::unique_ptr<Histogram> histogram;  // histograms
  };
  struct Family {
    std::string name, help;
    Type type;
    std::vector<std::unique_ptr<Child>> children;
  };
  Child& child(const std::string& name, const std::string& help, Type type, const MetricLabels& labels);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;  // in registration order
};

// Recent observations (a bounded time window) for live percentiles, which the cumulative
// histograms cannot give once they hold hours of history.
class RecentSamples {
 public:
  using Clock = std::chrono::steady_clock;
  RecentSamples(std::chrono::seconds window, size_t max_samples) : window_(window), max_samples_(max_samples) {}
  void add(double v, Clock::time_point now = Clock::now());
  // Nearest-rank percentiles of the samples inside the window; NaN when there are none.
  std::vector<double> percentiles(const std::vector<double>& qs, Clock::time_point now = Clock::now());

 private:
  void expire(Clock::time_point now);  // under mutex_

  std::mutex mutex_;
  std::chrono::seconds window_;
  size_t max_samples_;
  std::deque<std::pair<Clock::time_point, double>> samples_;
};

}  // namespace ridge
