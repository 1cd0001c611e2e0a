#include "plan/hardware.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace ridge::plan {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Dense (not sparse) datasheet numbers. H100/H200/B200 as the first seed tabulates them; Blackwell's
// FP4 doubles FP8. GB300 (Blackwell Ultra): 15 PFLOPS dense FP4 and 8 TB/s, the numbers that
// reproduce the second seed's GEMM timings; its INT8 rate is cut, so INT8 falls back to FP8.
std::vector<HardwareSpec> make_datasheet() {
  auto gpu = [](const char* name, double mem_gb, double bw_tbs, double f32, double bf16, double fp8, double int8,
                double fp4, double link_gbs, int64_t domain) {
    HardwareSpec h;
    h.name = name;
    h.source = "datasheet";
    h.memory_bytes = mem_gb * kGiga;
    h.memory_bw = bw_tbs * kTera;
    h.peak_f32 = f32 * kTera;
    h.peak_bf16 = bf16 * kTera;
    h.peak_fp8 = fp8 * kTera;
    h.peak_int8 = int8 * kTera;
    h.peak_fp4 = fp4 * kTera;
    h.interconnect_bw = link_gbs * kGiga;
    h.domain_size = domain;
    return h;
  };
  return {
      gpu("H100 SXM", 80, 3.35, 67, 989, 1979, 1979, 0, 900, 8),
      gpu("H200 SXM", 141, 4.8, 67, 989, 1979, 1979, 0, 900, 8),
      gpu("B200", 192, 8.0, 80, 2250, 4500, 4500, 9000, 1800, 8),
      gpu("GB300", 288, 8.0, 75, 2500, 5000, 0, 15000, 1800, 72),
  };
}

std::string lower(std::string_view s) {
  std::string out;
  for (unsigned char c : s)
    if (!std::isspace(c) && c != '-' && c != '_') out += char(std::tolower(c));
  return out;
}

}  // namespace

double HardwareSpec::peak(ComputeClass c) const {
  switch (c) {
    case ComputeClass::FP4:
      if (peak_fp4 > 0) return peak_fp4;
      [[fallthrough]];
    case ComputeClass::FP8:
      if (peak_fp8 > 0) return peak_fp8;
      return peak(ComputeClass::BF16);
    case ComputeClass::INT8:
      if (peak_int8 > 0) return peak_int8;
      if (peak_fp8 > 0) return peak_fp8;
      return peak(ComputeClass::BF16);
    case ComputeClass::BF16:
      if (peak_bf16 > 0) return peak_bf16;
      return peak_f32;
    case ComputeClass::F32:
      if (peak_f32 > 0) return peak_f32;
      return peak_bf16;
  }
  return 0;
}

const std::vector<HardwareSpec>& datasheet_hardware() {
  static const std::vector<HardwareSpec> db = make_datasheet();
  return db;
}

HardwareSpec find_hardware(const std::string& name, const std::vector<HardwareSpec>& extra) {
  const std::string key = lower(name);
  for (const auto* list : {&extra, &datasheet_hardware()}) {
    for (const auto& h : *list)
      if (lower(h.name) == key) return h;
    for (const auto& h : *list)
      if (lower(h.name).rfind(key, 0) == 0) return h;  // "h100" -> "H100 SXM"
  }
  std::string known;
  for (const auto* list : {&extra, &datasheet_hardware()})
    for (const auto& h : *list) known += (known.empty() ? "" : ", ") + h.name;
  fail("unknown hardware '{}' (known: {}, or 'local' for this machine's probe profile)", name, known);
}

}  // namespace ridge::plan
