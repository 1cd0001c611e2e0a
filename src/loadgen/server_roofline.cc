#include "loadgen/server_roofline.h"

#include <fmt/format.h>
#include <httplib.h>

namespace ridge::loadgen {

std::optional<nlohmann::json> fetch_server_roofline(const Endpoint& endpoint) {
  try {
    const BaseUrl url = parse_base_url(endpoint.base_url);
    httplib::Client client(url.scheme_host_port);
    client.set_connection_timeout(5);
    client.set_read_timeout(10);
    if (!endpoint.api_key.empty()) client.set_bearer_token_auth(endpoint.api_key);
    auto res = client.Get(url.path_prefix + "/metrics/json");
    if (!res || res->status != 200) return std::nullopt;
    const nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    if (!j.is_object() || !j.contains("slo") || !j["slo"].is_object()) return std::nullopt;
    return j["slo"];
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string describe_server_roofline(const nlohmann::json& slo) {
  const double bw = slo.value("memory_bw", 0.0);
  if (bw <= 0) return {};
  std::string out = fmt::format("server roofline: decode-only steps at {:.0f}% of {:.1f} GB/s", 100 * slo.value("decode_bandwidth_fraction", 0.0),
                                bw / 1e9);
  if (slo.contains("stages"))
    for (const auto& s : slo["stages"]) {
      const double seconds = s.value("seconds", 0.0);
      if (seconds <= 0) continue;
      out += fmt::format("; {} {:.0f}% of bandwidth, {:.1f} GFLOP/s", s.value("name", "?"),
                         100 * s.value("bytes", 0.0) / seconds / bw, s.value("flops", 0.0) / seconds / 1e9);
    }
  out += fmt::format("; step model error {:.0f}%", 100 * slo.value("model_error", 0.0));
  if (!slo.value("measured_machine", true)) out += " (placeholder roofs: run ridge probe on the server)";
  return out + "\n";
}

}  // namespace ridge::loadgen
