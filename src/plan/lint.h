#pragma once
// `ridge lint`: a model's shapes against the second seed's guidelines. Dimensions multiples of 128
// (better 256 / 512, the clusterMMA and CGA tiles); weight matrices not too skinny; width against
// depth; layers that split evenly into pipeline stages; heads that split for tensor parallelism.
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace ridge::plan {

enum class LintLevel { Ok, Note, Warn };
std::string_view lint_level_name(LintLevel level);

struct LintFinding {
  LintLevel level = LintLevel::Ok;
  std::string check;    // "align.n_embd", "skinny.ffn_down", "depth", "pipeline", "tp.kv_heads"
  std::string value;    // the numbers behind it: "576 = 4.5 x 128"
  std::string message;  // what it means and which guideline
};

std::vector<LintFinding> lint_model(const ModelSpec& spec);

}  // namespace ridge::plan
