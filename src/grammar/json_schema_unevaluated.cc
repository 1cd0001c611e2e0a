// unevaluatedProperties / unevaluatedItems: what is "evaluated" depends on which in-place subschemas
// succeed (an anyOf branch that matches contributes its properties, one that fails does not), so a
// schema is cut into evaluation cases: a condition on the value and what is then evaluated at least.
// A case whose condition holds for a valid value never claims more than was really evaluated, and
// every valid value is in a case claiming all of it, so the union over the cases of
//   condition AND (members / items outside the evaluated part satisfy unevaluated*)
// is exact. The cases multiply along allOf and anyOf; more than kMaxCases is refused.
#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr size_t kMaxCases = 64;

Evaluated merged(const Evaluated& a, const Evaluated& b) {
  Evaluated out;
  out.keys = a.keys.unite(b.keys);
  out.prefix = std::max(a.prefix, b.prefix);
  out.all_items = a.all_items || b.all_items;
  out.contains = a.contains;
  out.contains.insert(out.contains.end(), b.contains.begin(), b.contains.end());
  return out;
}

const char* const kEvaluating[] = {
    "properties",      "patternProperties", "additionalProperties", "unevaluatedProperties", "prefixItems", "items",
    "additionalItems", "contains",          "unevaluatedItems"};

}  // namespace

std::vector<EvalCase> Compiler::cross(const std::vector<EvalCase>& a, const std::vector<EvalCase>& b) {
  std::vector<EvalCase> out;
  for (const auto& x : a)
    for (const auto& y : b) {
      const ExprId condition = and_expr({x.condition, y.condition});
      if (condition == kNever) continue;
      out.push_back({condition, merged(x.evaluated, y.evaluated)});
      if (out.size() > kMaxCases) {
        fail(
            "keyword 'unevaluatedProperties' / 'unevaluatedItems' over this many in-place applicators is not "
            "supported (more than " +
            std::to_string(kMaxCases) + " evaluation cases)");
      }
    }
  return out;
}

bool Compiler::evaluates(const Json& node, const std::string& base_in, std::vector<const Json*>& seen) {
  if (!node.is_object()) return false;
  if (std::find(seen.begin(), seen.end(), &node) != seen.end()) return false;
  seen.push_back(&node);
  for (const char* k : kEvaluating)
    if (node.contains(k)) return true;
  const std::string base = index_.base_of(&node, base_in);
  if (const auto r = node.find("$ref"); r != node.end() && r->is_string()) {
    const auto target = index_.resolve(r->get<std::string>(), base);
    if (evaluates(*target.node, target.base, seen)) return true;
  }
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (const auto it = node.find(k); it != node.end() && it->is_array())
      for (const auto& s : *it)
        if (evaluates(s, base, seen)) return true;
  for (const char* k : {"if", "then", "else"})
    if (const auto it = node.find(k); it != node.end() && evaluates(*it, base, seen)) return true;
  if (const auto ds = node.find("dependentSchemas"); ds != node.end() && ds->is_object())
    for (const auto& [key, s] : ds->items())
      if (evaluates(s, base, seen)) return true;
  return false;
}

std::vector<EvalCase> Compiler::eval_cases(const Json& node, const std::string& base_in, const std::string& where,
                                           bool own) {
  const EvalCase nothing{kAny, Evaluated{}};
  if (!node.is_object()) return {nothing};
  const DepthGuard guard(depth_);
  const std::string base = index_.base_of(&node, base_in);
  const auto sub = [&](const Json& s, const std::string& path) { return schema_expr(s, base, where + path); };
  const auto is_evaluating = [&](const Json& s) {
    std::vector<const Json*> seen;
    return evaluates(s, base, seen);
  };
  // What this schema's own keywords evaluate.
  Evaluated local;
  if (const auto p = node.find("properties"); p != node.end() && p->is_object())
    for (const auto& [name, s] : p->items()) local.keys = local.keys.unite(exact_string(name));
  if (const auto pp = node.find("patternProperties"); pp != node.end() && pp->is_object())
    for (const auto& [pattern, s] : pp->items()) local.keys = local.keys.unite(pattern_strings(pattern));
  if (node.contains("additionalProperties") || (own && node.contains("unevaluatedProperties")))
    local.keys = any_string();
  const auto items = node.find("items");
  if (items != node.end() && items->is_array()) {
    local.prefix = int64_t(items->size());
    if (node.contains("additionalItems")) local.all_items = true;
  } else {
    if (const auto p = node.find("prefixItems"); p != node.end() && p->is_array()) local.prefix = int64_t(p->size());
    if (items != node.end()) local.all_items = true;
  }
  if (own && node.contains("unevaluatedItems")) local.all_items = true;
  if (const auto c = node.find("contains"); c != node.end()) local.contains.push_back(sub(*c, "/contains"));

  std::vector<EvalCase> cases{{kAny, local}};
  // A branch that succeeded, with what it evaluated in each of its own cases.
  const auto succeeded = [&](const Json& s, const std::string& path) {
    const ExprId branch = sub(s, path);
    std::vector<EvalCase> out;
    for (auto& c : eval_cases(s, base, where + path, true))
      out.push_back({and_expr({branch, c.condition}), c.evaluated});
    return out;
  };
  if (const auto r = node.find("$ref"); r != node.end() && r->is_string()) {
    const auto target = index_.resolve(r->get<std::string>(), base);
    if (is_evaluating(*target.node)) cases = cross(cases, eval_cases(*target.node, target.base, target.where, true));
  }
  if (const auto all = node.find("allOf"); all != node.end() && all->is_array())
    for (size_t i = 0; i < all->size(); ++i)
      if (is_evaluating((*all)[i]))
        cases = cross(cases, eval_cases((*all)[i], base, where + "/allOf/" + std::to_string(i), true));
  if (const auto any = node.find("anyOf"); any != node.end() && any->is_array()) {
    // Every subset of the evaluating branches may succeed together.
    std::vector<EvalCase> alternatives{nothing};
    for (size_t i = 0; i < any->size(); ++i) {
      if (!is_evaluating((*any)[i])) continue;
      const auto with_branch = cross(alternatives, succeeded((*any)[i], "/anyOf/" + std::to_string(i)));
      alternatives.insert(alternatives.end(), with_branch.begin(), with_branch.end());
      if (alternatives.size() > kMaxCases)
        fail("keyword 'unevaluatedProperties' / 'unevaluatedItems' with this many anyOf branches is not supported");
    }
    cases = cross(cases, alternatives);
  }
  if (const auto one = node.find("oneOf"); one != node.end() && one->is_array()) {
    std::vector<EvalCase> alternatives{nothing};
    for (size_t i = 0; i < one->size(); ++i) {
      if (!is_evaluating((*one)[i])) continue;
      const auto with_branch = succeeded((*one)[i], "/oneOf/" + std::to_string(i));
      alternatives.insert(alternatives.end(), with_branch.begin(), with_branch.end());
    }
    cases = cross(cases, alternatives);
  }
  if (const auto cond = node.find("if"); cond != node.end()) {
    const bool then_eval = node.contains("then") && is_evaluating(node["then"]);
    const bool else_eval = node.contains("else") && is_evaluating(node["else"]);
    if (is_evaluating(*cond) || then_eval || else_eval) {
      std::vector<EvalCase> when_true = succeeded(*cond, "/if");
      if (node.contains("then")) when_true = cross(when_true, eval_cases(node["then"], base, where + "/then", true));
      std::vector<EvalCase> alternatives = when_true;
      if (else_eval) {
        const ExprId failed = not_expr(sub(*cond, "/if"));
        for (auto& c : eval_cases(node["else"], base, where + "/else", true))
          alternatives.push_back({and_expr({failed, c.condition}), c.evaluated});
      } else {
        alternatives.push_back(nothing);
      }
      cases = cross(cases, alternatives);
    }
  }
  if (const auto ds = node.find("dependentSchemas"); ds != node.end() && ds->is_object()) {
    for (const auto& [key, s] : ds->items()) {
      if (!is_evaluating(s)) continue;
      ObjectClause with_key;
      with_key.props.push_back({key, kAny, true});
      with_key.regions.push_back({any_string().minus(exact_string(key)), kAny});
      TypedSet has_key;
      has_key.objects.push_back(std::move(with_key));
      const ExprId present = typed_expr(std::move(has_key), where + "/dependentSchemas");
      std::vector<EvalCase> alternatives{nothing};
      for (auto& c : succeeded(s, "/dependentSchemas/" + key))
        alternatives.push_back({and_expr({present, c.condition}), c.evaluated});
      cases = cross(cases, alternatives);
    }
  }
  return cases;
}

TypedSet Compiler::unevaluated(const Json& node, const std::string& base, const std::string& where) {
  const ExprId props = node.contains("unevaluatedProperties")
                           ? schema_expr(node["unevaluatedProperties"], base, where + "/unevaluatedProperties")
                           : kAny;
  const ExprId items = node.contains("unevaluatedItems")
                           ? schema_expr(node["unevaluatedItems"], base, where + "/unevaluatedItems")
                           : kAny;
  if (props == kAny && items == kAny) return TypedSet::any();
  std::vector<ExprId> alternatives;
  for (const auto& c : eval_cases(node, base, where, false)) {
    TypedSet rest = TypedSet::any();
    if (props != kAny) {
      ObjectClause o;
      if (!c.evaluated.keys.empty()) o.regions.push_back({c.evaluated.keys, kAny});
      Dfa others = any_string().minus(c.evaluated.keys);
      if (!others.empty() && props != kNever) o.regions.push_back({std::move(others), props});
      rest.objects = {std::move(o)};
    }
    if (items != kAny && !c.evaluated.all_items) {
      ArrayClause a;
      a.prefix.assign(size_t(c.evaluated.prefix), kAny);
      std::vector<ExprId> allowed = c.evaluated.contains;
      allowed.push_back(items);
      a.items = or_expr(allowed);
      rest.arrays = {std::move(a)};
    }
    alternatives.push_back(and_expr({c.condition, typed_expr(std::move(rest), where + "/unevaluated")}));
  }
  return normalized(or_expr(alternatives));
}

}  // namespace ridge::grammar::jsonschema
