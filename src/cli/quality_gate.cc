#include "cli/quality_gate.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/humaneval_run.h"
#include "core/error.h"
#include "eval/kl_eval.h"

namespace ridge::cli {
namespace {

double number(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail("--gate: {}={} is not a non-negative number", key, value);
}

// The code of the HumanEval problems as one text: what a code model is for, always at hand.
std::string humaneval_text_file() {
  HumanEvalArgs a;
  std::string text;
  for (const auto& p : load_problems(a)) text += p.prompt + p.canonical_solution + "\n\n";
  const std::string path = (std::filesystem::temp_directory_path() / "ridge-gate-humaneval.txt").string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

double humaneval_pass(const std::string& model, const GateSpec& spec, int threads, nlohmann::json& out) {
  HumanEvalArgs a;
  a.engine.model = model;
  if (threads > 0) a.engine.config.n_threads = threads;
  a.limit = spec.limit;
  const HumanEvalRun run = run_humaneval_for(a);
  out = {{"passed", run.report.passed()}, {"problems", run.report.results.size()}, {"pass_at_1", run.report.pass_at_1()}};
  std::fprintf(stderr, "gate: %s pass@1 %.2f%% (%lld of %zu)\n", model.c_str(), 100 * run.report.pass_at_1(),
               (long long)run.report.passed(), run.report.results.size());
  return run.report.pass_at_1();
}

}  // namespace

GateSpec parse_gate(const std::string& spec, const std::string& default_base) {
  GateSpec g;
  g.base = default_base;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) fail("--gate: '{}' is not key=value", item);
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "base") g.base = value;
    else if (key == "max-kl") g.max_kl = number(key, value);
    else if (key == "max-pass-drop") g.max_pass_drop = number(key, value);
    else if (key == "text") g.text = value;
    else if (key == "chunks") g.chunks = int64_t(number(key, value));
    else if (key == "ctx") g.ctx = int64_t(number(key, value));
    else if (key == "limit") g.limit = int64_t(number(key, value));
    else fail("--gate: unknown key '{}' (base, max-kl, max-pass-drop, text, chunks, ctx, limit)", key);
  }
  if (!g.max_kl && !g.max_pass_drop) fail("--gate needs max-kl=X or max-pass-drop=Y");
  if (g.ctx < 16) fail("--gate: ctx must be at least 16");
  return g;
}

GateResult run_gate(const GateSpec& spec, const std::string& artifact, int threads) {
  GateResult result;
  result.passed = true;
  result.report = {{"base", spec.base}, {"model", artifact}};
  if (spec.max_kl) {
    eval::KlEvalOptions o;
    o.base = spec.base;
    o.model = artifact;
    o.text_file = spec.text.empty() ? humaneval_text_file() : spec.text;
    o.n_ctx = spec.ctx;
    o.max_chunks = spec.chunks;
    o.threads = threads;
    const eval::KlEvalReport r = eval::run_kl_eval(o);
    const double kl = r.stats.mean_kl();
    const bool ok = kl <= *spec.max_kl;
    result.passed &= ok;
    result.report["kl"] = {{"mean", kl},          {"max_allowed", *spec.max_kl}, {"passed", ok},
                           {"top1_agreement", r.stats.top1_agreement()}, {"ppl_base", r.stats.base_perplexity()},
                           {"ppl_model", r.stats.model_perplexity()}, {"scored_tokens", r.stats.count()},
                           {"text", spec.text.empty() ? "humaneval" : spec.text}};
    std::fprintf(stderr, "gate: KL %.6f (at most %.6f): %s\n", kl, *spec.max_kl, ok ? "pass" : "FAIL");
  }
  if (spec.max_pass_drop) {
    nlohmann::json base_run, model_run;
    const double base = humaneval_pass(spec.base, spec, threads, base_run);
    const double model = humaneval_pass(artifact, spec, threads, model_run);
    const double drop = 100 * (base - model);
    const bool ok = drop <= *spec.max_pass_drop;
    result.passed &= ok;
    result.report["humaneval"] = {{"base", base_run}, {"model", model_run}, {"drop_points", drop},
                                  {"max_drop_allowed", *spec.max_pass_drop}, {"passed", ok}};
    std::fprintf(stderr, "gate: pass@1 drop %.2f points (at most %.2f): %s\n", drop, *spec.max_pass_drop, ok ? "pass" : "FAIL");
  }
  result.report["passed"] = result.passed;
  return result;
}

}  // namespace ridge::cli
