#pragma once
// Running a parsed template: statements write to an output string, expressions evaluate to Values
// with jinja2's semantics (scopes per loop iteration, macros that see the template's top level,
// undefined values that print as nothing but fail when used). Every statement, loop iteration and
// call counts against a step budget, and the output against a size cap, so a hostile template
// ends in bounded time with an error.
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "template/ast.h"
#include "template/value.h"

namespace ridge::tmpl {

struct RenderLimits {
  size_t max_output = size_t(1) << 20;  // bytes of output, and of any one string built
  uint64_t max_steps = 2'000'000;       // statements, loop iterations, calls, range() items
  int max_call_depth = 100;             // nested macro calls
};

using Frame = std::unordered_map<std::string, Value>;

struct Interpreter {
  RenderLimits limits;
  std::time_t now = 0;  // what strftime_now prints
  uint64_t steps = 0;
  int call_depth = 0;
  std::vector<Frame> frames;  // frames[0]: globals, the context and the template's top-level sets

  // Counts one unit of work; error past the budget.
  void tick(uint64_t n = 1);
  // Error when a string of `size` bytes would pass the output cap.
  void check_size(size_t size) const;
  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value value) { frames.back()[name] = std::move(value); }

  void exec(const Body& body, std::string& out);
  Value eval(const Expr& e);
  Value call(const Value& callee, CallArgs& args);

 private:
  enum class Flow { Normal, Break, Continue };
  Flow exec_body(const Body& body, std::string& out);
  Flow exec_stmt(const Stmt& s, std::string& out);
  Flow exec_for(const Stmt& s, std::string& out);
  void exec_set(const Stmt& s);
  void define_macro(const Stmt& s);
  Value eval_binary(const Expr& e);
  Value eval_attr(const Value& object, const std::string& name, const Expr& e);
  Value eval_item(const Value& object, const Value& key, const Expr& e);
  Value eval_slice(const Expr& e);
  CallArgs eval_args(const Expr& e);
};

// The error an undefined value raises when it is used (printing and testing it are fine).
[[noreturn]] void fail_undefined(const Value& v);

}  // namespace ridge::tmpl
