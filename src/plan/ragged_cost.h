#pragma once
// The cost of one engine step as the scheduler builds it: a ragged batch of runs, each a request's
// positions n_past .. n_past + n_new - 1 (a decode is a run of one, a prefill chunk a longer one).
// The same counting as step_cost (cost_model.h): the weights are read once for the whole step and
// shared by every token; attention reads each run's KV history once per layer. The result is split
// into the three stages a roofline chart tells apart: attention (its projections and the attention
// itself), the FFN (dense, router, shared and routed experts) and the output head (with the
// embedding rows). Built once per model; a step's cost is a few dozen multiplications.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "plan/cost_model.h"
#include "plan/hardware.h"
#include "plan/run_shape.h"

namespace ridge::plan {


enum class Stage { Attention, Ffn, Head };
inline constexpr std::array<Stage, 3> kStages = {Stage::Attention, Stage::Ffn, Stage::Head};
std::string_view stage_name(Stage s);  // "attention", "ffn", "head"

struct StageCost {
  double flops = 0;
  double bytes = 0;             // weights, KV and activations
  double gemm_flops = 0;        // of flops, in weight GEMMs (the rest is attention's score and value work)
  double memory_s = 0;          // bytes / bandwidth
  double gemm_compute_s = 0;    // GEMM FLOPs at the weights' compute class peak
  double attention_compute_s = 0;  // attention FLOPs at the activations' peak
};

struct RaggedStepCost {
  std::array<StageCost, 3> stages;  // by Stage
  int64_t tokens = 0;
  const StageCost& operator[](Stage s) const { return stages[size_t(s)]; }
  double flops() const;
  double bytes() const;
  double memory_s() const;
  double compute_s() const;  // GEMM and attention compute, each at its peak
  double roofline_s() const;  // sum over stages of max(memory, compute)
};

class RaggedCostModel {
 public:
  RaggedCostModel(const ModelSpec& spec, const Precision& precision, const HardwareSpec& hw);
  RaggedStepCost cost(std::span<const RunShape> runs) const;
  const HardwareSpec& hardware() const { return hw_; }
  const ModelSpec& spec() const { return spec_; }

 private:
  struct Matrix {
    Stage stage;
    double params = 0;       // one copy, all layers
    double n_copies = 1;     // routed experts
    double n_used = 1;       // copies per token
    double act_per_row = 0;  // (n_in + n_out) x layers
  };
  ModelSpec spec_;
  Precision precision_;
  HardwareSpec hw_;
  std::vector<Matrix> matrices_;
  double gemm_peak_ = 0, attention_peak_ = 0;
  double attention_flops_per_pair_ = 0;  // all layers
  double kv_bytes_per_position_ = 0;     // all layers, one of K/V read or written
  double attention_act_per_token_ = 0;
  double head_params_ = 0, head_act_per_row_ = 0, embd_bytes_per_token_ = 0;
};

}  // namespace ridge::plan
