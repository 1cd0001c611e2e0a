#include "plan/lint.h"

#include <fmt/format.h>

#include <algorithm>

#include "plan/cost_model.h"

namespace ridge::plan {
namespace {

// Guideline 2: multiples of 128 at least; 256 (clusterMMA) or 512 (CGA) fill the larger tiles.
void check_alignment(const std::string& what, int64_t d, std::vector<LintFinding>& out) {
  if (d <= 0) return;
  LintFinding f;
  f.check = "align." + what;
  if (d % 512 == 0) {
    f.value = fmt::format("{} = {} x 512", d, d / 512);
    f.message = "fills 128, 256 (clusterMMA) and 512 (CGA) tiles";
  } else if (d % 256 == 0) {
    f.level = LintLevel::Note;
    f.value = fmt::format("{} = {} x 256", d, d / 256);
    f.message = "fills clusterMMA tiles; a multiple of 512 would also fill CGA tiles (guideline 2)";
  } else if (d % 128 == 0) {
    f.level = LintLevel::Note;
    f.value = fmt::format("{} = {} x 128", d, d / 128);
    f.message = "the safe minimum; 256 or 512 multiples fill the larger cooperative tiles (guideline 2)";
  } else {
    f.level = LintLevel::Warn;
    const int64_t up = (d + 127) / 128 * 128;
    f.value = fmt::format("{} = {:.2f} x 128", d, double(d) / 128.0);
    f.message = fmt::format("not a multiple of 128: edge tiles run padded ({:.1f}% of a 128-tile grid wasted); {} would align",
                            100.0 * (1.0 - double(d) / double(up)), up);
  }
  out.push_back(f);
}

// Guideline 1: near-square matrices; a small N or K keeps a GEMM memory-bound at any batch.
void check_skinny(const Linear& lin, std::vector<LintFinding>& out) {
  const int64_t lo = std::min(lin.n_out, lin.n_in), hi = std::max(lin.n_out, lin.n_in);
  const double aspect = double(hi) / double(lo);
  LintFinding f;
  f.check = "shape." + lin.name;
  f.value = fmt::format("N {} x K {} (aspect {:.1f})", lin.n_out, lin.n_in, aspect);
  if (lo <= 512) {  // the second seed's example: K = 512 stays memory-bound at 16K tokens
    f.level = LintLevel::Warn;
    f.message = fmt::format("a {} of {} limits arithmetic intensity whatever the batch (guideline 1)",
                            lin.n_in == lo ? "reduction dimension K" : "projection dimension N", lo);
  } else if (aspect > 8) {
    f.level = LintLevel::Note;
    f.message = "skinny: the short side bounds reuse per weight byte (guideline 1)";
  } else {
    f.message = "near-square enough";
  }
  out.push_back(f);
}

// Guideline 3: for a parameter budget, wider and shallower runs larger GEMMs on a shorter critical path.
void check_depth(const ModelSpec& s, std::vector<LintFinding>& out) {
  const double ratio = double(s.n_embd) / double(s.n_layer);
  LintFinding f;
  f.check = "width_vs_depth";
  f.value = fmt::format("H {} / L {} = {:.0f}", s.n_embd, s.n_layer, ratio);
  if (ratio < 32) {
    f.level = LintLevel::Warn;
    f.message = "deep and narrow: many small ops on a long sequential path (guideline 3)";
  } else if (ratio < 64) {
    f.level = LintLevel::Note;
    f.message = "on the deep side; wider layers raise arithmetic intensity (guideline 3)";
  } else {
    f.message = "width per layer in the usual range of hardware-friendly models";
  }
  out.push_back(f);
}

// Guideline 6: a repeating layer pattern that splits evenly into pipeline stages.
void check_pipeline(const ModelSpec& s, std::vector<LintFinding>& out) {
  std::vector<int64_t> even;
  for (int64_t stages : {2, 4, 8, 16})
    if (s.n_layer % stages == 0) even.push_back(stages);
  LintFinding f;
  f.check = "pipeline";
  std::string stages;
  for (int64_t n : even) stages += fmt::format("{}{}", stages.empty() ? "" : ",", n);
  f.value = even.empty() ? fmt::format("L {}: no even split into 2/4/8/16 stages", s.n_layer)
                         : fmt::format("L {}: even stages {}", s.n_layer, stages);
  if (s.is_moe() && s.n_layer_dense_lead > 0) {
    f.level = LintLevel::Note;
    f.message = fmt::format("{} leading dense layers break the repeating pattern: stages holding them differ (guideline 6)",
                            s.n_layer_dense_lead);
  } else if (s.n_layer % 4 != 0) {
    f.level = LintLevel::Warn;
    f.message = "the layers do not split into 4 equal stages: pipeline bubbles (guideline 6)";
  } else {
    f.message = "splits evenly into the common stage counts";
  }
  out.push_back(f);
}

// Guideline 7: TP splits attention only up to the KV heads; past that the KV cache is replicated.
void check_tensor_parallel(const ModelSpec& s, std::vector<LintFinding>& out) {
  LintFinding f;
  f.check = "tp.kv_heads";
  if (s.is_mla()) {
    f.level = LintLevel::Note;
    f.value = fmt::format("MLA latent {} shared by {} heads", s.kv_lora_rank, s.n_head);
    f.message =
        "TP cannot split the latent KV; shard it by sequence with Helix (--helix N, the TP group of N) or use data-parallel "
        "attention (guideline 7)";
  } else if (s.n_head_kv < 8) {
    f.level = LintLevel::Note;
    f.value = fmt::format("{} KV heads", s.n_head_kv);
    f.message = fmt::format("TP beyond {} replicates the KV cache; TP=8 (an NVLink domain) cannot split it; Helix (--helix N) "
                            "shards it by sequence instead (guideline 7)",
                            s.n_head_kv);
  } else {
    f.value = fmt::format("{} KV heads", s.n_head_kv);
    f.message = "TP up to 8 splits the KV cache without replicating it";
  }
  out.push_back(f);
}

}  // namespace

std::string_view lint_level_name(LintLevel level) {
  switch (level) {
    case LintLevel::Ok: return "ok";
    case LintLevel::Note: return "note";
    case LintLevel::Warn: return "warn";
  }
  return "?";
}

std::vector<LintFinding> lint_model(const ModelSpec& s) {
  std::vector<LintFinding> out;
  check_alignment("n_embd", s.n_embd, out);
  check_alignment("n_ff", s.n_ff, out);
  check_alignment("q_dim", s.q_dim(), out);
  if (!s.is_mla()) check_alignment("kv_dim", s.kv_dim(), out);
  check_alignment("n_vocab", s.n_vocab, out);
  if (s.is_moe()) check_alignment("n_ff_expert", s.n_ff_expert, out);
  if (s.is_mla()) {
    check_alignment("kv_lora_rank", s.kv_lora_rank, out);
    if (s.q_lora_rank > 0) check_alignment("q_lora_rank", s.q_lora_rank, out);
  }
  for (const auto& lin : model_linears(s))
    if (lin.name != "moe_router") check_skinny(lin, out);
  check_depth(s, out);
  check_pipeline(s, out);
  check_tensor_parallel(s, out);
  return out;
}

}  // namespace ridge::plan
