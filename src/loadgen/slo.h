#pragma once
// Service-level objectives for goodput: "ttft=1s,tpot=50ms,itl=40ms,e2e=10s", any subset (a bare
// number is milliseconds; "ttft:1s" also reads). A request meets them when it succeeded, its TTFT,
// TPOT and end-to-end latency are within bounds, and its longest gap between chunks is within the
// ITL bound.
#include <optional>
#include <string>
#include <string_view>

#include "loadgen/request_result.h"

namespace ridge::loadgen {

struct Slo {
  std::optional<double> ttft_s, tpot_s, itl_s, e2e_s;

  bool empty() const { return !ttft_s && !tpot_s && !itl_s && !e2e_s; }
  std::string describe() const;  // "ttft <= 1000 ms, tpot <= 50 ms"
};

double parse_duration_s(std::string_view text);  // "50ms", "1.5s", "200us", "40" (ms)
Slo parse_slo(std::string_view spec);            // Error on an unknown metric or a bad duration
bool meets_slo(const RequestResult& request, const Slo& slo);

}  // namespace ridge::loadgen
