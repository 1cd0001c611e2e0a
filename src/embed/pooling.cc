#include "embed/pooling.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ridge {

std::string_view pooling_name(PoolingMode mode) {
  switch (mode) {
    case PoolingMode::Mean: return "mean";
    case PoolingMode::Cls: return "cls";
    case PoolingMode::Max: return "max";
    case PoolingMode::MeanSqrtLen: return "mean_sqrt_len";
    case PoolingMode::LastToken: return "last";
  }
  return "?";
}

PoolingMode pooling_from_llama_type(int64_t type) {
  switch (type) {
    case 1: return PoolingMode::Mean;
    case 2: return PoolingMode::Cls;
    case 3: return PoolingMode::LastToken;
    default: fail("pooling type {} is not one ridge runs (1 mean, 2 cls, 3 last)", type);
  }
}

void pool_tokens(const float* states, int64_t n_tokens, int64_t n_embd, PoolingMode mode, int64_t skip, float* out) {
  if (n_tokens <= 0) fail("cannot pool a text of no tokens");
  const int64_t first = mode == PoolingMode::Cls ? 0 : std::min(std::max<int64_t>(skip, 0), n_tokens - 1);
  switch (mode) {
    case PoolingMode::Cls:
      std::copy(states, states + n_embd, out);
      return;
    case PoolingMode::LastToken:
      std::copy(states + (n_tokens - 1) * n_embd, states + n_tokens * n_embd, out);
      return;
    case PoolingMode::Max:
      std::copy(states + first * n_embd, states + (first + 1) * n_embd, out);
      for (int64_t t = first + 1; t < n_tokens; ++t)
        for (int64_t d = 0; d < n_embd; ++d) out[d] = std::max(out[d], states[t * n_embd + d]);
      return;
    case PoolingMode::Mean:
    case PoolingMode::MeanSqrtLen: {
      // Summed in double: a long text's mean does not depend on the order of its tokens' rounding.
      std::vector<double> sum(size_t(n_embd), 0.0);
      for (int64_t t = first; t < n_tokens; ++t)
        for (int64_t d = 0; d < n_embd; ++d) sum[size_t(d)] += double(states[t * n_embd + d]);
      const double count = double(n_tokens - first);
      const double div = mode == PoolingMode::Mean ? count : std::sqrt(count);
      for (int64_t d = 0; d < n_embd; ++d) out[d] = float(sum[size_t(d)] / div);
      return;
    }
  }
}

std::vector<float> DenseLayer::apply(std::span<const float> x) const {
  if (int64_t(x.size()) != in) fail("a Dense layer of {} inputs was given {} values", in, x.size());
  std::vector<float> y(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double acc = bias.empty() ? 0.0 : double(bias[size_t(o)]);
    const float* w = weight.data() + o * in;
    for (int64_t i = 0; i < in; ++i) acc += double(w[i]) * double(x[size_t(i)]);
    y[size_t(o)] = activation == Activation::Tanh      ? float(std::tanh(acc))
                   : activation == Activation::Sigmoid ? float(1.0 / (1.0 + std::exp(-acc)))
                                                       : float(acc);
  }
  return y;
}

void l2_normalize(std::span<float> x) {
  double sum = 0.0;
  for (float v : x) sum += double(v) * double(v);
  // torch.nn.functional.normalize divides by max(norm, 1e-12).
  const double norm = std::max(std::sqrt(sum), 1e-12);
  for (float& v : x) v = float(double(v) / norm);
}

}  // namespace ridge
