#pragma once
// `ridge quantize ... --gate base=FILE,max-kl=X,max-pass-drop=Y`: the new artifact judged
// against a base on the user's terms (next-token KL over a text, HumanEval pass@1), so a
// quantized file is rolled out only when it holds up on the task, not only on perplexity.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ridge::cli {

struct GateSpec {
  std::string base;                     // default: the quantizer's input
  std::optional<double> max_kl;         // mean next-token KL (nats)
  std::optional<double> max_pass_drop;  // HumanEval pass@1 drop, in percentage points
  std::string text;                     // KL text; default: the HumanEval prompts and solutions
  int64_t chunks = 16;                  // KL chunks of `ctx` tokens
  int64_t ctx = 512;
  int64_t limit = 0;                    // HumanEval problems; 0: all
};

// "base=A.gguf,max-kl=0.05,max-pass-drop=2,text=F,chunks=N,ctx=N,limit=N". Error on an unknown
// key, a bad number, or a gate with neither max-kl nor max-pass-drop.
GateSpec parse_gate(const std::string& spec, const std::string& default_base);

struct GateResult {
  bool passed = false;
  nlohmann::json report;  // every measurement, its threshold and the verdict
};

// Measures `artifact` against the spec's base; prints what it finds as it goes (stderr).
GateResult run_gate(const GateSpec& spec, const std::string& artifact, int threads);

}  // namespace ridge::cli
