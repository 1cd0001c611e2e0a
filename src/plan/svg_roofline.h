#pragma once
// A roofline plot as hand-written SVG: log-log axes of arithmetic intensity (FLOPs/byte) against
// attainable FLOP/s, the memory slope and one flat roof per precision the hardware runs, and the
// model's ops placed at the rate the roofline predicts for them.
#include <string>
#include <vector>

#include "plan/hardware.h"

namespace ridge::plan {

struct RooflinePoint {
  std::string label;   // "ffn_down"
  std::string series;  // "decode b=1", "prefill 1024": one colour per series
  double intensity = 0;  // FLOPs per byte
  double flops_per_s = 0;  // predicted attained rate
};

std::string roofline_svg(const HardwareSpec& hw, const std::vector<RooflinePoint>& points, const std::string& title);

}  // namespace ridge::plan
