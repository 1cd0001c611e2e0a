#pragma once
// When each request of a run is due, in seconds from its start: a Poisson process (exponential gaps
// of mean 1/rate), evenly spaced, or all at once when the rate is infinite.
#include <cstdint>
#include <string_view>
#include <vector>

namespace ridge::loadgen {

enum class Arrival { Poisson, Constant };
Arrival parse_arrival(std::string_view name);  // "poisson" | "constant"

// The first request is due at 0.
std::vector<double> arrival_times(int count, double rate, Arrival arrival, uint64_t seed);

}  // namespace ridge::loadgen
