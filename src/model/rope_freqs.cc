#include "model/rope_freqs.h"

#include <cmath>
#include <numbers>

namespace ridge {

std::vector<float> rope_inv_freq(const ModelSpec& spec, const float* freq_factors) {
  const int64_t half = spec.rope_dim / 2;
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const auto& scaling = spec.rope_scaling;
  const double low_freq_wavelen = double(scaling.original_context) / scaling.low_freq_factor;
  const double high_freq_wavelen = double(scaling.original_context) / scaling.high_freq_factor;
  for (int64_t i = 0; i < half; ++i) {
    double freq = std::pow(double(spec.rope_theta), -2.0 * double(i) / double(spec.rope_dim));
    if (freq_factors) {
      freq /= freq_factors[i];
    } else if (scaling.type == RopeScaling::Type::Llama3) {
      // Long wavelengths are slowed by `factor`, short ones kept, the band between interpolated.
      const double wavelen = 2.0 * std::numbers::pi / freq;
      if (wavelen > low_freq_wavelen) {
        freq /= scaling.factor;
      } else if (wavelen >= high_freq_wavelen) {
        const double smooth = (double(scaling.original_context) / wavelen - scaling.low_freq_factor) /
                              (scaling.high_freq_factor - scaling.low_freq_factor);
        freq = (1.0 - smooth) * freq / scaling.factor + smooth * freq;
      }
    }
    inv_freq[size_t(i)] = float(freq);
  }
  return inv_freq;
}

}  // namespace ridge
