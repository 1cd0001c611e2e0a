#include "eval/humaneval_eval.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/progress.h"
#include "core/error.h"

namespace ridge::eval {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int64_t HumanEvalReport::passed() const {
  int64_t n = 0;
  for (const ProblemResult& r : results) n += r.status == RunStatus::Passed;
  return n;
}

double HumanEvalReport::pass_at_1() const { return results.empty() ? 0.0 : double(passed()) / double(results.size()); }

int64_t HumanEvalReport::generated_tokens() const {
  int64_t n = 0;
  for (const ProblemResult& r : results) n += r.completion_tokens;
  return n;
}

std::vector<SandboxResult> run_tests(const std::vector<CodeProblem>& problems, const std::vector<std::string>& solutions,
                                     const SandboxLimits& limits, int workers, bool progress) {
  if (problems.size() != solutions.size()) fail("run_tests: {} problems but {} solutions", problems.size(), solutions.size());
  std::vector<SandboxResult> results(problems.size());
  // A test mostly waits on the interpreter's start-up, so a few more workers than cores pay.
  if (workers <= 0) workers = int(std::max(1u, std::thread::hardware_concurrency())) * 2;
  workers = std::max(1, std::min<int>(workers, int(problems.size())));
  std::optional<bench::ProgressBar> bar;
  if (progress) bar.emplace("tests", int64_t(problems.size()));
  std::atomic<size_t> next{0};
  std::mutex bar_mutex;
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < problems.size();) {
        results[i] = run_python(test_program(problems[i], solutions[i]), limits);
        if (bar) {
          std::lock_guard lock(bar_mutex);
          bar->advance(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (bar) bar->finish();
  return results;
}

HumanEvalReport run_humaneval(Engine& engine, const std::vector<CodeProblem>& problems, const EncodeProblem& encode,
                              const HumanEvalOptions& options) {
  HumanEvalReport report;
  report.results.resize(problems.size());
  const auto start = std::chrono::steady_clock::now();
  {
    std::optional<bench::ProgressBar> bar;
    if (options.progress) bar.emplace("generate", int64_t(problems.size()));
    for (size_t i = 0; i < problems.size(); ++i) {
      ProblemResult& r = report.results[i];
      r.task_id = problems[i].task_id;
      RequestOptions request;
      request.prompt = encode(problems[i]);
      request.max_tokens = options.max_tokens;
      request.stop = stop_strings(options.style);
      request.sampling.temperature = 0;  // greedy: pass@1 from one sample
      try {
        engine.submit(request, [&r, &bar](const TokenEvent& e) {
          r.generated += e.text;
          r.completion_tokens = e.completion_tokens;
          if (e.finish == FinishReason::None) return;
          r.finish = e.finish;
          r.prompt_tokens = e.prompt_tokens;
          if (bar) bar->advance(1);
        });
      } catch (const SubmitError& e) {
        r.error = e.what();
        if (bar) bar->advance(1);
      }
    }
    engine.run_until_idle();
  }
  report.generate_seconds = seconds_since(start);

  const auto exec_start = std::chrono::steady_clock::now();
  std::vector<std::string> solutions(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) solutions[i] = solution_code(problems[i], report.results[i].generated, options.style);
  const std::vector<SandboxResult> runs = run_tests(problems, solutions, options.sandbox, options.exec_workers, options.progress);
  for (size_t i = 0; i < problems.size(); ++i) {
    ProblemResult& r = report.results[i];
    r.solution = std::move(solutions[i]);
    r.status = r.error.empty() ? runs[i].status : RunStatus::Error;
    r.output = runs[i].output;
  }
  report.execute_seconds = seconds_since(exec_start);
  return report;
}

}  // namespace ridge::eval
