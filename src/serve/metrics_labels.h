#pragma once
// Several models' Prometheus texts as one: each sample gains a model_name label (vLLM's), and the
// samples of one metric family stay together under a single HELP / TYPE, as the format requires.
#include <string>
#include <utility>
#include <vector>

namespace ridge {

// (model name, its metrics text) pairs -> one text. Samples that already carry model_name keep it.
std::string merge_model_metrics(const std::vector<std::pair<std::string, std::string>>& texts);

}  // namespace ridge
