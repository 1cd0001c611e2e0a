#pragma once
// `ridge eval humaneval` and the quality gate of `ridge quantize` share this: load a model,
// build an engine, run the code problems through it.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/engine_options.h"
#include "eval/humaneval_eval.h"

namespace ridge::cli {

struct HumanEvalArgs {
  EngineCliOptions engine;
  std::string data;            // empty: the fetched HumanEval file
  std::string style = "auto";  // auto (chat when the model has a chat template), chat, completion
  int64_t limit = 0;           // the first N problems; 0: all
  int32_t max_tokens = 512;
  double timeout = 10;         // seconds per test run
  bool progress = true;
};

// The problems of the data file, cut to the limit; the error says how to fetch them.
std::vector<eval::CodeProblem> load_problems(const HumanEvalArgs& a);

struct HumanEvalRun {
  eval::HumanEvalReport report;
  eval::PromptStyle style;
  std::string model_name;
};
HumanEvalRun run_humaneval_for(HumanEvalArgs& a);

void add_humaneval_command(CLI::App* eval);

}  // namespace ridge::cli
