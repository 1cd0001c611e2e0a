#pragma once
// `ridge eval humaneval`: pass@1 of a model on code problems, greedy. Every problem is submitted
// to the engine at once (continuous batching does the rest), then every answer's tests run in a
// sandbox, several at a time.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "eval/code_prompt.h"
#include "eval/humaneval_data.h"
#include "eval/python_sandbox.h"

namespace ridge::eval {

struct HumanEvalOptions {
  PromptStyle style = PromptStyle::Chat;
  int32_t max_tokens = 512;
  SandboxLimits sandbox;
  int exec_workers = 0;  // <= 0: one per core
  bool progress = true;
};

struct ProblemResult {
  std::string task_id;
  RunStatus status = RunStatus::Error;
  std::string generated;   // the model's text
  std::string solution;    // the code the tests ran against
  std::string output;      // the tail of the test run's output
  std::string error;       // the engine refused the request
  FinishReason finish = FinishReason::None;
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

struct HumanEvalReport {
  std::vector<ProblemResult> results;
  double generate_seconds = 0, execute_seconds = 0;
  int64_t passed() const;
  double pass_at_1() const;  // passed / problems
  int64_t generated_tokens() const;
};

// The prompt tokens of a problem: the caller renders the chat template (or not) for the model.
using EncodeProblem = std::function<std::vector<int32_t>(const CodeProblem&)>;

HumanEvalReport run_humaneval(Engine& engine, const std::vector<CodeProblem>& problems, const EncodeProblem& encode,
                              const HumanEvalOptions& options);

// The tests of each (problem, solution) pair, `workers` at a time (results in input order).
std::vector<SandboxResult> run_tests(const std::vector<CodeProblem>& problems, const std::vector<std::string>& solutions,
                                     const SandboxLimits& limits, int workers, bool progress);

}  // namespace ridge::eval
