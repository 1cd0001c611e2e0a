#include "template/interpreter.h"

#include <cmath>

#include "core/error.h"
#include "template/builtins.h"
#include "template/operators.h"
#include "template/text.h"

namespace ridge::tmpl {

void fail_undefined(const Value& v) {
  const std::string& name = v.undefined_name();
  if (name.empty()) fail("template: undefined value used");
  fail("template: {}", name);
}

void Interpreter::tick(uint64_t n) {
  steps += n;
  if (steps > limits.max_steps)
    fail("template: gave up after {} steps (a loop that does not end, or too much work)", limits.max_steps);
}

void Interpreter::check_size(size_t size) const {
  if (size > limits.max_output) fail("template: output passes the limit of {} bytes", limits.max_output);
}

Value Interpreter::lookup(const std::string& name) const {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    const auto found = it->find(name);
    if (found != it->end()) return found->second;
  }
  return Value::undefined(fmt::format("'{}' is undefined", name));
}

void Interpreter::exec(const Body& body, std::string& out) {
  if (exec_body(body, out) != Flow::Normal) fail("template: 'break' or 'continue' outside a loop");
}

Interpreter::Flow Interpreter::exec_body(const Body& body, std::string& out) {
  for (const auto& s : body) {
    const Flow flow = exec_stmt(*s, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_stmt(const Stmt& s, std::string& out) {
  tick();
  switch (s.kind) {
    case StmtKind::Text:
      check_size(out.size() + s.text.size());
      out += s.text;
      return Flow::Normal;
    case StmtKind::Output: {
      const std::string text = to_str(eval(*s.expr));
      check_size(out.size() + text.size());
      out += text;
      return Flow::Normal;
    }
    case StmtKind::If:
      for (const auto& [cond, body] : s.branches) {
        if (eval(*cond).truthy()) return exec_body(body, out);
      }
      return exec_body(s.else_body, out);
    case StmtKind::For: return exec_for(s, out);
    case StmtKind::Set: exec_set(s); return Flow::Normal;
    case StmtKind::SetBlock:
    case StmtKind::FilterBlock: {
      std::string inner;
      exec(s.body, inner);
      Value result(std::move(inner));
      if (s.expr) {
        frames.emplace_back();
        frames.back()["caller"] = result;
        result = eval(*s.expr);
        frames.pop_back();
      }
      if (s.kind == StmtKind::SetBlock) {
        assign(s.targets[0], result);
      } else {
        const std::string text = to_str(result);
        check_size(out.size() + text.size());
        out += text;
      }
      return Flow::Normal;
    }
    case StmtKind::Macro: define_macro(s); return Flow::Normal;
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::Generation: return exec_body(s.body, out);
  }
  return Flow::Normal;
}

namespace {

void unpack(Frame& frame, const std::vector<std::string>& targets, const Value& item) {
  if (targets.size() == 1) {
    frame[targets[0]] = item;
    return;
  }
  if (item.is_undefined()) fail_undefined(item);
  const std::vector<Value> parts = iterate(item);
  if (parts.size() != targets.size())
    fail("template: cannot unpack {} values into {} names", parts.size(), targets.size());
  for (size_t i = 0; i < parts.size(); ++i) frame[targets[i]] = parts[i];
}

}  // namespace

Interpreter::Flow Interpreter::exec_for(const Stmt& s, std::string& out) {
  const Value iterable = eval(*s.expr);
  std::vector<Value> items = iterate(iterable);
  if (s.condition) {  // `for x in xs if cond`: the condition filters before loop.* counts
    std::vector<Value> kept;
    for (const auto& item : items) {
      tick();
      frames.emplace_back();
      unpack(frames.back(), s.targets, item);
      const bool keep = eval(*s.condition).truthy();
      frames.pop_back();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec_body(s.else_body, out);
  const auto n = int64_t(items.size());
  for (int64_t i = 0; i < n; ++i) {
    tick();
    auto loop = std::make_shared<Dict>();
    loop->set("index", i + 1);
    loop->set("index0", i);
    loop->set("revindex", n - i);
    loop->set("revindex0", n - i - 1);
    loop->set("first", i == 0);
    loop->set("last", i == n - 1);
    loop->set("length", n);
    loop->set("depth", 1);
    loop->set("depth0", 0);
    loop->set("previtem", i > 0 ? items[size_t(i - 1)] : Value::undefined("there is no previous item"));
    loop->set("nextitem", i + 1 < n ? items[size_t(i + 1)] : Value::undefined("there is no next item"));
    loop->set("cycle", Value::function("cycle", [i](CallArgs& args, Interpreter&) -> Value {
                if (args.positional.empty()) fail("template: loop.cycle needs at least one argument");
                return args.positional[size_t(i) % args.positional.size()];
              }));
    frames.emplace_back();
    frames.back()["loop"] = Value(loop);
    unpack(frames.back(), s.targets, items[size_t(i)]);
    const Flow flow = exec_body(s.body, out);
    frames.pop_back();
    if (flow == Flow::Break) break;
  }
  return Flow::Normal;
}

void Interpreter::exec_set(const Stmt& s) {
  Value value = eval(*s.expr);
  if (!s.attribute.empty()) {
    const Value target = lookup(s.targets[0]);
    if (!target.is_dict() || !target.as_dict().namespace_object)
      fail("template line {}: cannot assign attribute on non-namespace object", s.line);
    target.as_dict().set(Value(s.attribute), std::move(value));
    return;
  }
  if (s.targets.size() == 1) {
    assign(s.targets[0], std::move(value));
    return;
  }
  unpack(frames.back(), s.targets, value);
}

void Interpreter::define_macro(const Stmt& s) {
  const Stmt* macro = &s;
  assign(s.name, Value::function(s.name, [macro](CallArgs& args, Interpreter& in) -> Value {
           if (in.call_depth >= in.limits.max_call_depth)
             fail("template: macro calls nested deeper than {} (recursion)", in.limits.max_call_depth);
           Frame frame;
           const auto& params = macro->params;
           if (args.positional.size() > params.size() && !macro->uses_varargs)
             fail("template: macro '{}' takes not more than {} argument(s)", macro->name, params.size());
           std::vector<Value> extra;
           for (size_t i = 0; i < args.positional.size(); ++i) {
             if (i < params.size()) {
               frame[params[i].name] = args.positional[i];
             } else {
               extra.push_back(args.positional[i]);
             }
           }
           Value kwargs = Value::dict();
           for (auto& [key, value] : args.named) {
             bool is_param = false;
             for (const auto& p : params) is_param |= p.name == key;
             if (is_param) {
               frame[key] = value;
             } else if (macro->uses_kwargs) {
               kwargs.as_dict().set(Value(key), value);
             } else {
               fail("template: macro '{}' takes no keyword argument '{}'", macro->name, key);
             }
           }
           // Frames of the caller are hidden: a macro sees its arguments and the template's top level.
           std::vector<Frame> saved(std::make_move_iterator(in.frames.begin() + 1),
                                    std::make_move_iterator(in.frames.end()));
           in.frames.resize(1);
           in.frames.push_back(std::move(frame));
           for (const auto& p : params) {
             if (in.frames.back().count(p.name)) continue;
             in.frames.back()[p.name] = p.default_value ? in.eval(*p.default_value)
                                                        : Value::undefined(fmt::format("'{}' is undefined", p.name));
           }
           in.frames.back()["varargs"] = Value::list(std::move(extra), true);
           in.frames.back()["kwargs"] = kwargs;
           std::string out;
           ++in.call_depth;
           try {
             in.exec(macro->body, out);
           } catch (...) {
             --in.call_depth;
             in.frames.resize(1);
             for (auto& f : saved) in.frames.push_back(std::move(f));
             throw;
           }
           --in.call_depth;
           in.frames.resize(1);
           for (auto& f : saved) in.frames.push_back(std::move(f));
           return Value(std::move(out));
         }));
}

CallArgs Interpreter::eval_args(const Expr& e) {
  CallArgs args;
  for (const auto& item : e.items) args.positional.push_back(eval(*item));
  for (const auto& [key, value] : e.named) args.named.emplace_back(key, eval(*value));
  return args;
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_callable()) fail("template: '{}' object is not callable", callee.type_name());
  tick();
  return callee.as_callable().call(args, *this);
}

Value Interpreter::eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Literal: return e.value;
    case ExprKind::Name: return lookup(e.name);
    case ExprKind::ListLit: {
      std::vector<Value> items;
      for (const auto& item : e.items) items.push_back(eval(*item));
      return Value::list(std::move(items), e.tuple);
    }
    case ExprKind::DictLit: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) d.as_dict().set(eval(*e.items[i]), eval(*e.items[i + 1]));
      return d;
    }
    case ExprKind::GetAttr: return eval_attr(eval(*e.object), e.name, e);
    case ExprKind::GetItem: {
      const Value object = eval(*e.object);
      return eval_item(object, eval(*e.right), e);
    }
    case ExprKind::Slice: return eval_slice(e);
    case ExprKind::Call: {
      const Value callee = eval(*e.object);
      CallArgs args = eval_args(e);
      return call(callee, args);
    }
    case ExprKind::Filter: {
      const Value value = eval(*e.object);
      CallArgs args = eval_args(e);
      return apply_filter(e.name, value, args, *this);
    }
    case ExprKind::Test: {
      const Value value = eval(*e.object);
      CallArgs args = eval_args(e);
      return apply_test(e.name, value, args, *this) != e.negated;
    }
    case ExprKind::Unary: {
      const Value v = eval(*e.object);
      if (e.name == "not") return !v.truthy();
      return unary_minus_plus(e.name, v);
    }
    case ExprKind::Binary: return eval_binary(e);
    case ExprKind::Conditional:
      if (eval(*e.right).truthy()) return eval(*e.start);
      return e.stop ? eval(*e.stop) : Value::undefined("the conditional expression has no else");
  }
  return Value();
}

Value Interpreter::eval_binary(const Expr& e) {
  if (e.name == "and") {
    Value left = eval(*e.object);
    return left.truthy() ? eval(*e.right) : left;
  }
  if (e.name == "or") {
    Value left = eval(*e.object);
    return left.truthy() ? left : eval(*e.right);
  }
  const Value left = eval(*e.object);
  const Value right = eval(*e.right);
  Value result = binary_op(e.name, left, right);
  if (result.is_string()) check_size(result.as_string().size());
  return result;
}

Value Interpreter::eval_attr(const Value& object, const std::string& name, const Expr& e) {
  (void)e;
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_dict()) {
    const Dict& d = object.as_dict();
    if (!d.namespace_object) {
      Value method = method_of(object, name);
      if (!method.is_undefined()) return method;
    }
    if (const Value* v = d.find(Value(name))) return *v;
    return Value::undefined(fmt::format("'{} object' has no attribute '{}'", object.type_name(), name));
  }
  Value method = method_of(object, name);
  if (!method.is_undefined()) return method;
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", object.type_name(), name));
}

Value Interpreter::eval_item(const Value& object, const Value& key, const Expr& e) {
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find(key)) return *v;
  } else if (((object.is_list() && !object.as_list().generator) || object.is_string()) && (key.is_int() || key.is_bool())) {
    const int64_t raw = key.is_int() ? key.as_int() : key.as_bool();
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      const int64_t i = raw < 0 ? raw + int64_t(items.size()) : raw;
      if (i >= 0 && i < int64_t(items.size())) return items[size_t(i)];
    } else {
      const auto chars = utf8_chars(object.as_string());
      const int64_t i = raw < 0 ? raw + int64_t(chars.size()) : raw;
      if (i >= 0 && i < int64_t(chars.size())) return Value(chars[size_t(i)]);
    }
  }
  if (key.is_string() && !object.is_dict()) return eval_attr(object, key.as_string(), e);
  if (key.is_string() && object.is_dict()) {
    Value method = method_of(object, key.as_string());
    if (!method.is_undefined()) return method;
  }
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", object.type_name(), to_str(key)));
}

Value Interpreter::eval_slice(const Expr& e) {
  const Value object = eval(*e.object);
  if (object.is_undefined()) fail_undefined(object);
  auto bound = [&](const ExprPtr& p) -> std::optional<int64_t> {
    if (!p) return std::nullopt;
    const Value v = eval(*p);
    if (v.is_none()) return std::nullopt;
    if (!v.is_int()) fail("template line {}: slice indices must be integers", e.line);
    return v.as_int();
  };
  const auto start = bound(e.start), stop = bound(e.stop), step = bound(e.step);
  return slice_value(object, start, stop, step);
}

}  // namespace ridge::tmpl
