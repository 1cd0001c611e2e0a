#pragma once
// What a ridge server says about its own steps (GET /metrics/json, its "slo" part): the roofline
// fractions `ridge bench serve` prints after a run. Other servers have none.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "loadgen/openai_api.h"

namespace ridge::loadgen {

std::optional<nlohmann::json> fetch_server_roofline(const Endpoint& endpoint);
// "server roofline: decode steps at 41% of 15.5 GB/s; attention 30% ..., step model error 12%" (empty: nothing to say).
std::string describe_server_roofline(const nlohmann::json& slo);

}  // namespace ridge::loadgen
