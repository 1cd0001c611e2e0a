// ridge eval: quality of a model against a base, for gating quantized artifacts.
//   ridge eval kl --base A --model B -f TEXT   next-token KL, top-1 agreement and perplexities
//   ridge eval humaneval -m FILE                pass@1 on the HumanEval problems (cli/humaneval_run.cc)
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/humaneval_run.h"
#include "eval/kl_eval.h"

namespace ridge::cli {
namespace {

struct KlArgs {
  eval::KlEvalOptions options;
  bool json = false;
};

nlohmann::json kl_json(const eval::KlEvalReport& r, const eval::KlEvalOptions& o) {
  const auto& s = r.stats;
  return {{"base", o.base}, {"model", o.model}, {"text", o.text_file}, {"ctx_size", o.n_ctx},
          {"chunks", r.n_chunks}, {"scored_tokens", s.count()}, {"kl_mean", s.mean_kl()},
          {"kl_mean_stderr", s.mean_kl_stderr()}, {"kl_median", s.kl_quantile(0.5)}, {"kl_p99", s.kl_quantile(0.99)},
          {"kl_max", s.max_kl()}, {"top1_agreement", s.top1_agreement()}, {"ppl_base", s.base_perplexity()},
          {"ppl_model", s.model_perplexity()}, {"seconds", r.seconds}};
}

void run_kl(const KlArgs& a) {
  const auto r = eval::run_kl_eval(a.options);
  if (a.json) {
    std::printf("%s\n", kl_json(r, a.options).dump(2).c_str());
    return;
  }
  const auto& s = r.stats;
  std::printf("%lld chunks of %lld tokens, %lld scored\n", (long long)r.n_chunks, (long long)a.options.n_ctx,
              (long long)s.count());
  std::printf("  KL divergence   mean %.6f ± %.6f   median %.6f   p99 %.6f   max %.6f\n", s.mean_kl(), s.mean_kl_stderr(),
              s.kl_quantile(0.5), s.kl_quantile(0.99), s.max_kl());
  std::printf("  top-1 agreement %.2f%%\n", 100 * s.top1_agreement());
  std::printf("  perplexity      base %.4f   model %.4f   (%+.2f%%)\n", s.base_perplexity(), s.model_perplexity(),
              100 * (s.model_perplexity() / s.base_perplexity() - 1));
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* eval = app.add_subcommand("eval", "Measure a model's quality (against a base model)");
  eval->require_subcommand(1);
  auto* kl = eval->add_subcommand("kl", "Next-token KL divergence, top-1 agreement and perplexity of a model vs a base");
  auto a = std::make_shared<KlArgs>();
  kl->add_option("--base", a->options.base, "the reference GGUF (path or model name)")->required();
  kl->add_option("-m,--model", a->options.model, "the GGUF to judge (same vocabulary)")->required();
  kl->add_option("-f,--file", a->options.text_file, "text to score")->required();
  kl->add_option("-c,--ctx-size", a->options.n_ctx, "tokens per chunk; the second half of each is scored")->capture_default_str();
  kl->add_option("--chunks", a->options.max_chunks, "score at most this many chunks (0: the whole text)");
  kl->add_option("-t,--threads", a->options.threads, "threads (default: one per core)");
  kl->add_flag("--json", a->json, "print a JSON report");
  kl->callback([a] {
    a->options.progress = !a->json;
    run_kl(*a);
  });
  add_humaneval_command(eval);
}

}  // namespace ridge::cli
