// ridge eval humaneval -m FILE: greedy pass@1 on the HumanEval problems.
#include "cli/humaneval_run.h"

#include <filesystem>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace ridge::cli {
namespace {

struct HumanEvalCommand {
  HumanEvalArgs args;
  std::string output;  // JSONL of every problem's answer and result
  bool json = false;
  bool check_harness = false;
};

// The problems' own solutions through the same sandbox: every one must pass, or the harness
// (interpreter, limits, guard) is what fails, not the model.
void check_harness(const HumanEvalCommand& c) {
  const std::vector<eval::CodeProblem> problems = load_problems(c.args);
  std::vector<std::string> solutions;
  for (const auto& p : problems) solutions.push_back(p.prompt + p.canonical_solution);
  eval::SandboxLimits limits;
  limits.timeout_seconds = c.args.timeout;
  const auto runs = eval::run_tests(problems, solutions, limits, 0, !c.json);
  nlohmann::json failed = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].status != eval::RunStatus::Passed)
      failed.push_back({{"task_id", problems[i].task_id}, {"status", eval::run_status_name(runs[i].status)}, {"output", runs[i].output}});
  if (c.json) {
    std::printf("%s\n", nlohmann::json{{"problems", problems.size()}, {"failed", failed}}.dump(2).c_str());
  } else {
    std::printf("canonical solutions: %zu of %zu pass\n", problems.size() - failed.size(), problems.size());
    for (const auto& f : failed) std::printf("  %s: %s\n", f["task_id"].get<std::string>().c_str(), f["status"].get<std::string>().c_str());
  }
  if (!failed.empty()) fail("{} canonical solutions fail in this sandbox", failed.size());
}

nlohmann::json summary_json(const HumanEvalRun& run, const HumanEvalArgs& a) {
  const auto& r = run.report;
  int64_t timed_out = 0, errors = 0, truncated = 0;
  for (const auto& p : r.results) {
    timed_out += p.status == eval::RunStatus::TimedOut;
    errors += p.status == eval::RunStatus::Error;
    truncated += p.finish == FinishReason::Length;
  }
  return {{"model", run.model_name},
          {"problems", r.results.size()},
          {"passed", r.passed()},
          {"pass_at_1", r.pass_at_1()},
          {"timed_out", timed_out},
          {"errors", errors},
          {"hit_max_tokens", truncated},
          {"prompt_style", eval::prompt_style_name(run.style)},
          {"max_tokens", a.max_tokens},
          {"generated_tokens", r.generated_tokens()},
          {"generate_seconds", r.generate_seconds},
          {"execute_seconds", r.execute_seconds}};
}

void write_results(const HumanEvalRun& run, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) fail("cannot write '{}'", path);
  for (const auto& p : run.report.results) {
    const nlohmann::json j = {{"task_id", p.task_id},  {"status", eval::run_status_name(p.status)},
                              {"passed", p.status == eval::RunStatus::Passed},
                              {"finish_reason", finish_reason_name(p.finish)},
                              {"completion_tokens", p.completion_tokens}, {"completion", p.generated},
                              {"solution", p.solution}, {"output", p.output}, {"error", p.error}};
    std::fprintf(f, "%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  if (std::fclose(f) != 0) fail("cannot write '{}'", path);
}

void run_command(HumanEvalCommand& c) {
  if (c.check_harness) return check_harness(c);
  const HumanEvalRun run = run_humaneval_for(c.args);
  if (!c.output.empty()) write_results(run, c.output);
  const nlohmann::json s = summary_json(run, c.args);
  if (c.json) {
    std::printf("%s\n", s.dump(2).c_str());
    return;
  }
  std::printf("%s: pass@1 %.2f%% (%lld of %zu) | %s prompts, greedy, max %d tokens | %lld timed out, %lld hit max tokens\n",
              run.model_name.c_str(), 100 * run.report.pass_at_1(), (long long)run.report.passed(), run.report.results.size(),
              eval::prompt_style_name(run.style), c.args.max_tokens, (long long)s["timed_out"].get<int64_t>(),
              (long long)s["hit_max_tokens"].get<int64_t>());
  std::printf("generated %lld tokens in %.1f s (%.1f tok/s), tests ran in %.1f s\n", (long long)run.report.generated_tokens(),
              run.report.generate_seconds, double(run.report.generated_tokens()) / run.report.generate_seconds,
              run.report.execute_seconds);
}

}  // namespace

std::vector<eval::CodeProblem> load_problems(const HumanEvalArgs& a) {
  const std::string path = a.data.empty() ? eval::default_humaneval_path() : a.data;
  if (a.data.empty() && !std::filesystem::exists(path))
    fail("the HumanEval problems are not in {} yet: run python3 tools/fetch_model.py humaneval", path);
  std::vector<eval::CodeProblem> problems = eval::load_code_problems(path);
  if (a.limit < 0) fail("--limit must be >= 0");
  if (a.limit > 0 && size_t(a.limit) < problems.size()) problems.resize(size_t(a.limit));
  return problems;
}

HumanEvalRun run_humaneval_for(HumanEvalArgs& a) {
  if (a.max_tokens < 1) fail("--max-tokens must be >= 1");
  if (!(a.timeout > 0)) fail("--timeout must be > 0");
  const std::vector<eval::CodeProblem> problems = load_problems(a);
  const auto m = load_model_for_engine(a.engine);
  Engine engine(m->model, m->tokenizer, engine_config(a.engine, *m));

  HumanEvalRun run;
  run.model_name = m->name;
  run.style = a.style == "auto" ? (m->chat.source.empty() ? eval::PromptStyle::Completion : eval::PromptStyle::Chat)
                                : eval::prompt_style_from_name(a.style);
  const eval::PromptStyle style = run.style;
  const eval::EncodeProblem encode = [&m, style](const eval::CodeProblem& p) {
    if (style == eval::PromptStyle::Completion) return m->tokenizer.encode(p.prompt, /*add_special=*/true, /*parse_special=*/false);
    ChatMessage user;
    user.role = "user";
    user.content = eval::chat_instruction(p);
    std::vector<int32_t> tokens = encode_chat(*m, {user});
    const std::vector<int32_t> prefix = m->tokenizer.encode(eval::chat_answer_prefix(), /*add_special=*/false, /*parse_special=*/false);
    tokens.insert(tokens.end(), prefix.begin(), prefix.end());
    return tokens;
  };
  eval::HumanEvalOptions options;
  options.style = style;
  options.max_tokens = a.max_tokens;
  options.sandbox.timeout_seconds = a.timeout;
  options.progress = a.progress;
  run.report = eval::run_humaneval(engine, problems, encode, options);
  return run;
}

void add_humaneval_command(CLI::App* eval) {
  auto* cmd = eval->add_subcommand("humaneval", "pass@1 on the HumanEval problems (greedy, batched; tests run sandboxed)");
  auto c = std::make_shared<HumanEvalCommand>();
  add_engine_options(cmd, c->args.engine);
  cmd->add_option("--data", c->args.data, "problems as JSONL or JSONL.gz (default: fetched by tools/fetch_model.py humaneval)");
  cmd->add_option("--limit", c->args.limit, "the first N problems only (0: all 164)");
  cmd->add_option("--prompt-style", c->args.style, "auto (chat when the model has a chat template), chat, completion")
      ->check(CLI::IsMember({"auto", "chat", "completion"}))
      ->capture_default_str();
  cmd->add_option("-n,--max-tokens", c->args.max_tokens, "tokens generated per problem at most")->capture_default_str();
  cmd->add_option("--timeout", c->args.timeout, "seconds each problem's tests may run")->capture_default_str();
  cmd->add_option("-o,--output", c->output, "write every problem's answer, solution and result as JSONL");
  cmd->add_flag("--json", c->json, "print a JSON summary");
  cmd->add_flag("--check-harness", c->check_harness, "run the problems' canonical solutions instead of a model (all must pass)");
  cmd->callback([c] {
    c->args.progress = true;
    run_command(*c);
  });
}

}  // namespace ridge::cli
