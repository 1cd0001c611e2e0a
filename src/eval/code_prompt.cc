#include "eval/code_prompt.h"

#include "core/error.h"

namespace ridge::eval {
namespace {

// Run before the solution: what a careless or hostile completion could use to harm the machine
// is replaced by None (the tests need none of it). The sandbox adds rlimits and no network.
constexpr const char* kGuard = R"(import builtins, os, shutil, subprocess, sys
os.environ["OMP_NUM_THREADS"] = "1"
for _name in ("kill", "killpg", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
              "fork", "forkpty", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown",
              "chmod", "chown", "chroot", "lchown", "chdir", "execv", "execve", "spawnv", "popen"):
    if hasattr(os, _name):
        setattr(os, _name, None)
for _name in ("rmtree", "move", "chown"):
    setattr(shutil, _name, None)
subprocess.Popen = None
builtins.help = None
del _name
)";

// Drop what follows the first `marker` that starts a line.
void cut_at(std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at != std::string::npos) text.resize(at);
}

}  // namespace

PromptStyle prompt_style_from_name(const std::string& name) {
  if (name == "completion") return PromptStyle::Completion;
  if (name == "chat") return PromptStyle::Chat;
  fail("unknown prompt style '{}' (completion, chat)", name);
}

const char* prompt_style_name(PromptStyle style) { return style == PromptStyle::Chat ? "chat" : "completion"; }

std::string chat_instruction(const CodeProblem& problem) {
  std::string prompt = problem.prompt;
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.pop_back();
  return "Please provide a self-contained Python script that solves the following problem in a markdown code block:\n```\n" +
         prompt + "\n```\n";
}

std::string chat_answer_prefix() {
  return "Below is a Python script with a self-contained function that solves the problem and passes corresponding tests:\n"
         "```python\n";
}

std::vector<std::string> stop_strings(PromptStyle style) {
  if (style == PromptStyle::Chat) return {"\n```"};
  return {"\nclass ", "\ndef ", "\n#", "\nif __name__", "\nprint(", "\nassert "};
}

std::string solution_code(const CodeProblem& problem, const std::string& generated, PromptStyle style) {
  std::string code = generated;
  if (style == PromptStyle::Completion) {
    for (const std::string& stop : stop_strings(style)) cut_at(code, stop);
    return problem.prompt + code;
  }
  cut_at(code, "\n```");
  cut_at(code, "\nif __name__");  // a demo main would run (and may read stdin) before the tests
  // The prompt's function with only its docstring is valid Python; the answer's def replaces it.
  return problem.prompt + "\n" + code;
}

std::string test_program(const CodeProblem& problem, const std::string& solution) {
  return std::string(kGuard) + "\n" + solution + "\n\n" + problem.test + "\n\ncheck(" + problem.entry_point + ")\n";
}

}  // namespace ridge::eval
