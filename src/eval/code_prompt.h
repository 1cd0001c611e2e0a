#pragma once
// How a code problem is put to a model and how its answer becomes a program to test.
//   completion: the problem's prompt as raw text, continued until a new top-level statement
//               (HumanEval's original protocol, for base models);
//   chat:       an instruction in the model's chat template, the answer begun as a Python code
//               block and ended with it (the protocol instruct models are reported with).
#include <string>
#include <vector>

#include "eval/humaneval_data.h"

namespace ridge::eval {

enum class PromptStyle { Completion, Chat };

// "completion" / "chat"; throws Error otherwise.
PromptStyle prompt_style_from_name(const std::string& name);
const char* prompt_style_name(PromptStyle style);

// The user turn of the chat style.
std::string chat_instruction(const CodeProblem& problem);
// The start of the assistant's turn; the generated text continues it.
std::string chat_answer_prefix();
// Where generation stops (the stop strings themselves are not part of the output).
std::vector<std::string> stop_strings(PromptStyle style);

// The solution the generated text gives: the prompt's function completed (completion), or the
// code block after the prompt, so helper functions the prompt defines stay defined (chat).
std::string solution_code(const CodeProblem& problem, const std::string& generated, PromptStyle style);
// The script a sandbox runs: a guard that disables destructive os/shutil/subprocess calls, the
// solution, the problem's tests and the call of check(entry_point). Exit status 0 means passed.
std::string test_program(const CodeProblem& problem, const std::string& solution);

}  // namespace ridge::eval
