#pragma once
// The throughput-latency curve of a sweep as a standalone SVG: output tokens/s across, and two
// panels, TTFT and ITL (p50 and p99, ms), each point labelled with its load level.
#include <string>
#include <vector>

#include "loadgen/serve_report.h"

namespace ridge::loadgen {

std::string sweep_svg(const std::vector<SweepPoint>& points, const std::string& title);

}  // namespace ridge::loadgen
