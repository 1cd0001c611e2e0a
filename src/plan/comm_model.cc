#include "plan/comm_model.h"

#include <fmt/format.h>

#include "core/error.h"
#include "plan/table.h"

namespace ridge::plan {

CommFit fit_comm(std::span<const double> bytes, std::span<const double> seconds) {
  if (bytes.size() != seconds.size()) fail("fit_comm: {} sizes but {} times", bytes.size(), seconds.size());
  // In MB and µs, so the sums stay well inside a double's range.
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double x = bytes[i] * 1e-6, y = seconds[i] * 1e6;
    if (!(y > 0)) fail("fit_comm: times must be positive, got {} s at {} bytes", seconds[i], bytes[i]);
    const double w = 1.0 / (y * y);
    s += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double det = s * sxx - sx * sx;
  if (bytes.size() < 2 || !(det > 1e-12 * s * sxx)) fail("fit_comm: needs at least two distinct message sizes");
  double slope = (s * sxy - sx * sy) / det;  // µs per MB
  double intercept = (sy - slope * sx) / s;  // µs
  if (intercept < 0) intercept = 0, slope = sxy / sxx;  // through the origin
  if (!(slope > 0)) fail("fit_comm: time does not grow with the message size");
  return {intercept * 1e-6, 1e12 / slope};  // µs -> s; µs per MB -> bytes/s
}

CommModel generic_comm_model(double link_bw, double latency_s) {
  CommModel m;
  m.all_reduce_bus = {latency_s, link_bw};
  m.send_recv = {latency_s, link_bw};
  return m;
}

CommModel measured_comm_model(const CommFit& all_reduce, const CommFit& send_recv, int64_t ranks,
                              const std::string& transport, const std::string& source) {
  if (ranks < 2) fail("a measured all-reduce needs at least 2 ranks, got {}", ranks);
  CommModel m;
  const double bus_factor = 2.0 * double(ranks - 1) / double(ranks);
  m.all_reduce_bus = {all_reduce.latency_s, all_reduce.bandwidth * bus_factor};
  m.send_recv = send_recv;
  m.measured = true;
  m.shares_host = transport == "shared memory";
  m.ranks = ranks;
  m.transport = transport;
  m.source = source;
  return m;
}

double all_reduce_seconds(const CommModel& m, double bytes, int64_t n) {
  if (n <= 1) return 0;
  return m.all_reduce_bus.latency_s + 2.0 * double(n - 1) / double(n) * bytes / m.all_reduce_bus.bandwidth;
}

double all_gather_seconds(const CommModel& m, double bytes_per_rank, int64_t n) {
  if (n <= 1) return 0;
  return m.all_reduce_bus.latency_s + double(n - 1) * bytes_per_rank / m.all_reduce_bus.bandwidth;
}

double send_seconds(const CommModel& m, double bytes) { return m.send_recv.seconds(bytes); }

double tp_comm_seconds(const CommModel& m, int64_t n_layer, double hidden_bytes, int64_t tp) {
  return 2.0 * double(n_layer) * all_reduce_seconds(m, hidden_bytes, tp);
}

double pp_comm_seconds(const CommModel& m, double hidden_bytes, int64_t pp) {
  return double(pp - 1) * send_seconds(m, hidden_bytes);
}

std::string describe_comm_model(const CommModel& m) {
  auto line = [](const CommFit& f) {
    return fmt::format("{} + bytes / {}", format_seconds(f.latency_s), format_rate(f.bandwidth, "B/s"));
  };
  if (!m.measured)
    return fmt::format("generic figures: a {} link, {} per message",
                       format_rate(m.send_recv.bandwidth, "B/s"), format_seconds(m.send_recv.latency_s));
  return fmt::format("measured over {} by ridge probe --dist ({} ranks, {}): all-reduce {} (bus), send/recv {}", m.transport,
                     m.ranks, m.source, line(m.all_reduce_bus), line(m.send_recv));
}

}  // namespace ridge::plan
