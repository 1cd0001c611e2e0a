#pragma once
// Helpers of the quantizer's end-to-end tests: a temporary file name, a tiny model's logits over a
// fixed prompt, and the relative RMS distance of two logit vectors.
#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "model/forward.h"
#include "model/model_loader.h"

namespace ridge::test {

inline std::string temp_gguf(const std::string& prefix, const std::string& tag) {
  return (std::filesystem::temp_directory_path() / (prefix + "_" + tag + "_" + std::to_string(getpid()) + ".gguf")).string();
}

inline std::vector<float> prompt_logits(const std::string& path) {
  const Model model = load_model(path);
  ModelForward forward(model, 2);
  KvCache cache = forward.make_cache(64);
  std::vector<float> logits;
  const std::vector<int32_t> tokens = {5, 17, 200, 31, 9, 64, 150, 3, 77};
  forward.forward(tokens, cache, /*all_logits=*/true, logits);
  return logits;
}

inline double relative_rms(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, power = 0;
  for (size_t i = 0; i < a.size(); ++i) err += double(a[i] - b[i]) * (a[i] - b[i]), power += double(b[i]) * b[i];
  return std::sqrt(err / power);
}

}  // namespace ridge::test
