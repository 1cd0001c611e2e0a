#pragma once
// How many tokens each expert of each MoE layer has been routed, so a hot expert is visible
// (`/metrics`, `ridge bench`).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ridge {

struct MoeStats {
  int64_t n_layer = 0, n_expert = 0;
  std::vector<uint64_t> tokens;  // (n_layer, n_expert)

  void reset(int64_t layers, int64_t experts) {
    n_layer = layers;
    n_expert = experts;
    tokens.assign(size_t(layers * experts), 0);
  }
  void add(int64_t layer, int64_t expert, uint64_t n) { tokens[size_t(layer * n_expert + expert)] += n; }
  uint64_t of(int64_t layer, int64_t expert) const { return tokens[size_t(layer * n_expert + expert)]; }
  // Summed over layers.
  std::vector<uint64_t> per_expert() const {
    std::vector<uint64_t> out(size_t(n_expert), 0);
    for (int64_t l = 0; l < n_layer; ++l)
      for (int64_t e = 0; e < n_expert; ++e) out[size_t(e)] += of(l, e);
    return out;
  }
  // max / mean of a layer's expert counts, the largest over layers (1 = perfectly balanced; 0: nothing routed).
  double worst_imbalance() const {
    double worst = 0;
    for (int64_t l = 0; l < n_layer; ++l) {
      uint64_t max = 0, sum = 0;
      for (int64_t e = 0; e < n_expert; ++e) max = std::max(max, of(l, e)), sum += of(l, e);
      if (sum > 0) worst = std::max(worst, double(max) * double(n_expert) / double(sum));
    }
    return worst;
  }
};

}  // namespace ridge
