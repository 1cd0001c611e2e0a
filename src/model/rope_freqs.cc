#include "model/rope_freqs.h"

#include <cmath>
#include <numbers>

namespace ridge {

float rope_theta_scale(const ModelSpec& spec) { return std::pow(spec.rope_theta, -2.0f / float(spec.rope_dim)); }

std::vector<float> rope_freq_factors(const ModelSpec& spec, const float* file_factors) {
  const int64_t half = spec.rope_dim / 2;
  if (file_factors) return std::vector<float>(file_factors, file_factors + half);
  const auto& scaling = spec.rope_scaling;
  if (scaling.type != RopeScaling::Type::Llama3) return {};
  // Long wavelengths are slowed by `factor`, short ones kept, the band between interpolated.
  std::vector<float> factors(static_cast<size_t>(half));
  const double low_freq_wavelen = double(scaling.original_context) / scaling.low_freq_factor;
  const double high_freq_wavelen = double(scaling.original_context) / scaling.high_freq_factor;
  for (int64_t i = 0; i < half; ++i) {
    const double freq = std::pow(double(spec.rope_theta), -2.0 * double(i) / double(spec.rope_dim));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double scaled = freq;
    if (wavelen > low_freq_wavelen) {
      scaled = freq / scaling.factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (double(scaling.original_context) / wavelen - scaling.low_freq_factor) /
                            (scaling.high_freq_factor - scaling.low_freq_factor);
      scaled = (1.0 - smooth) * freq / scaling.factor + smooth * freq;
    }
    factors[size_t(i)] = float(freq / scaled);
  }
  return factors;
}

}  // namespace ridge
