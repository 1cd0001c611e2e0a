// How answers become programs, and the data file's loader on good and bad files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "eval/code_prompt.h"
#include "eval/humaneval_data.h"
#include "eval/python_sandbox.h"

namespace ridge::eval {
namespace {

CodeProblem add_problem() {
  CodeProblem p;
  p.task_id = "Test/0";
  p.prompt = "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n";
  p.entry_point = "add";
  p.test = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n";
  return p;
}

SandboxResult test(const CodeProblem& p, const std::string& generated, PromptStyle style) {
  SandboxLimits l;
  l.timeout_seconds = 5;
  return run_python(test_program(p, solution_code(p, generated, style)), l);
}

TEST(CodePrompt, CompletionStopsAtTheNextTopLevelStatement) {
  const CodeProblem p = add_problem();
  EXPECT_EQ(test(p, "    return a + b\n\n\ndef unrelated(:\n", PromptStyle::Completion).status, RunStatus::Passed);
  EXPECT_EQ(test(p, "    return a - b\n", PromptStyle::Completion).status, RunStatus::Failed);
  EXPECT_EQ(test(p, "    return a + b\nprint(add(1)\n", PromptStyle::Completion).status, RunStatus::Passed);
}

TEST(CodePrompt, ChatAnswerReplacesThePromptsFunction) {
  const CodeProblem p = add_problem();
  EXPECT_EQ(test(p, "def add(a, b):\n    return a + b\n```\nThis adds.", PromptStyle::Chat).status, RunStatus::Passed);
  // A demo main that reads stdin is cut off; the answer still counts.
  EXPECT_EQ(test(p, "def add(a, b):\n    return b + a\n\nif __name__ == '__main__':\n    print(add(int(input()), 1))\n",
                 PromptStyle::Chat).status,
            RunStatus::Passed);
  // An answer without the function leaves the prompt's docstring-only body: None != 5.
  EXPECT_EQ(test(p, "print('no code')\n", PromptStyle::Chat).status, RunStatus::Failed);
}

TEST(CodePrompt, GuardDisablesDestructiveCalls) {
  const CodeProblem p = add_problem();
  const std::string hostile = "import os\nos.system('echo pw\"\"ned')\ndef add(a, b):\n    return a + b\n";
  const SandboxResult r = test(p, hostile, PromptStyle::Chat);
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_EQ(r.output.find("pwned"), std::string::npos);
}

TEST(CodePrompt, ChatInstructionHoldsThePrompt) {
  const CodeProblem p = add_problem();
  EXPECT_NE(chat_instruction(p).find("def add(a, b):"), std::string::npos);
  EXPECT_EQ(stop_strings(PromptStyle::Chat), std::vector<std::string>{"\n```"});
  EXPECT_EQ(prompt_style_from_name("chat"), PromptStyle::Chat);
  EXPECT_THROW(prompt_style_from_name("fancy"), Error);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(CodeProblems, LoadsJsonLinesAndRejectsBadOnes) {
  const std::string good = write_temp("ridge_problems_good.jsonl",
                                      R"({"task_id": "T/0", "prompt": "def f():\n", "entry_point": "f", "test": "def check(c): pass"})"
                                      "\n\n"
                                      R"({"task_id": "T/1", "prompt": "def g():\n", "entry_point": "g", "test": "", "canonical_solution": "  return 1\n"})"
                                      "\n");
  const auto problems = load_code_problems(good);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[1].task_id, "T/1");
  EXPECT_EQ(problems[1].canonical_solution, "  return 1\n");
  EXPECT_THROW(load_code_problems(write_temp("ridge_problems_bad.jsonl", "{\"task_id\": \"T/0\"}\n")), Error);
  EXPECT_THROW(load_code_problems(write_temp("ridge_problems_junk.jsonl", "not json\n")), Error);
  EXPECT_THROW(load_code_problems(write_temp("ridge_problems_empty.jsonl", "\n")), Error);
  EXPECT_THROW(load_code_problems("/nonexistent/problems.jsonl"), Error);
}

}  // namespace
}  // namespace ridge::eval
