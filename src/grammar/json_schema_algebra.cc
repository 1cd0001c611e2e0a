// The value-set algebra: hash-consed expressions over subschemas, normalised on demand into typed
// sets, and the exact intersection / union / complement of typed sets and of their array and object
// clauses.
#include <algorithm>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr size_t kMaxExprs = 200000;
constexpr size_t kMaxClauses = 256;  // per type, after an intersection or complement

std::string key_of(char kind, const std::vector<ExprId>& ids) {
  std::string key(1, kind);
  for (ExprId id : ids) key += std::to_string(id) + ',';
  return key;
}

bool is_any_array(const ArrayClause& c) {
  return c.prefix.empty() && c.items == kAny && c.min_items == 0 && c.max_items < 0 && c.contains.empty();
}

bool is_any_object(const ObjectClause& c) {
  return c.props.empty() && c.exists.empty() && c.min_props == 0 && c.max_props < 0 && c.regions.size() == 1 &&
         c.regions[0].value == kAny && c.regions[0].keys == any_string();
}

void check_clauses(size_t n) {
  if (n > kMaxClauses)
    fail("schema is too complex (its combinations of allOf / anyOf / oneOf / not need more than " +
         std::to_string(kMaxClauses) + " alternatives of one type)");
}

}  // namespace

void fail(const std::string& what) { throw GrammarError("json schema: " + what); }
void unsupported(const std::string& keyword) { fail("keyword '" + keyword + "' is not supported"); }

const ObjectClause::Prop* ObjectClause::find(const std::string& name) const {
  for (const auto& p : props)
    if (p.name == name) return &p;
  return nullptr;
}

ExprId ObjectClause::value_of(const std::string& name) const {
  if (const Prop* p = find(name)) return p->value;
  const auto cps = codepoints_of(name);
  for (const auto& r : regions)
    if (r.keys.accepts(cps)) return r.value;
  return kNever;
}

TypedSet TypedSet::any() {
  TypedSet s;
  s.null_ok = s.true_ok = s.false_ok = true;
  s.all_numbers = true;
  s.numbers = number_universe();
  s.strings = StringSet::any();
  s.arrays.push_back(ArrayClause{});
  ObjectClause o;
  o.regions.push_back({any_string(), kAny});
  s.objects.push_back(std::move(o));
  return s;
}

// ---- expressions ----

ExprId Compiler::schema_expr(const Json& node, const std::string& base, const std::string& where) {
  if (node.is_boolean()) return node.get<bool>() ? kAny : kNever;
  if (node.is_object() && node.empty()) return kAny;
  const std::string key = tagged('S', std::to_string(reinterpret_cast<uintptr_t>(&node)));
  if (const auto it = expr_ids_.find(key); it != expr_ids_.end()) return it->second;
  Expr e;
  e.kind = Expr::Kind::kSchema;
  e.node = &node;
  e.base = index_.base_of(&node, base);
  e.where = where;
  const ExprId id = ExprId(exprs_.size());
  exprs_.push_back(std::move(e));
  normal_.emplace_back();
  in_progress_.push_back(0);
  expr_ids_[key] = id;
  return id;
}

ExprId Compiler::typed_expr(TypedSet set, const std::string& where) {
  if (exprs_.size() >= kMaxExprs)
    fail("schema is too complex (more than " + std::to_string(kMaxExprs) + " subexpressions)");
  Expr e;
  e.kind = Expr::Kind::kTyped;
  e.where = where;
  exprs_.push_back(std::move(e));
  normal_.push_back(std::make_unique<TypedSet>(std::move(set)));
  in_progress_.push_back(0);
  return ExprId(exprs_.size() - 1);
}

ExprId Compiler::const_expr(const Json& value) {
  const std::string key = tagged('C', value.dump());
  if (const auto it = expr_ids_.find(key); it != expr_ids_.end()) return it->second;
  const ExprId id = typed_expr(const_set(value), "const");
  expr_ids_[key] = id;
  return id;
}

ExprId Compiler::and_expr(std::vector<ExprId> args) {
  std::vector<ExprId> flat;
  for (ExprId a : args) {
    if (a == kNever) return kNever;
    if (a == kAny) continue;
    if (exprs_[a].kind == Expr::Kind::kAnd)
      flat.insert(flat.end(), exprs_[a].args.begin(), exprs_[a].args.end());
    else
      flat.push_back(a);
  }
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.empty()) return kAny;
  if (flat.size() == 1) return flat[0];
  for (ExprId a : flat)
    if (exprs_[a].kind == Expr::Kind::kNot && std::binary_search(flat.begin(), flat.end(), exprs_[a].args[0]))
      return kNever;
  const std::string key = key_of('A', flat);
  if (const auto it = expr_ids_.find(key); it != expr_ids_.end()) return it->second;
  if (exprs_.size() >= kMaxExprs)
    fail("schema is too complex (more than " + std::to_string(kMaxExprs) + " subexpressions)");
  Expr e;
  e.kind = Expr::Kind::kAnd;
  e.args = flat;
  e.where = exprs_[flat[0]].where;
  exprs_.push_back(std::move(e));
  normal_.emplace_back();
  in_progress_.push_back(0);
  return expr_ids_[key] = ExprId(exprs_.size() - 1);
}

ExprId Compiler::or_expr(std::vector<ExprId> args) {
  std::vector<ExprId> flat;
  for (ExprId a : args) {
    if (a == kAny) return kAny;
    if (a == kNever) continue;
    if (exprs_[a].kind == Expr::Kind::kOr)
      flat.insert(flat.end(), exprs_[a].args.begin(), exprs_[a].args.end());
    else
      flat.push_back(a);
  }
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.empty()) return kNever;
  if (flat.size() == 1) return flat[0];
  const std::string key = key_of('O', flat);
  if (const auto it = expr_ids_.find(key); it != expr_ids_.end()) return it->second;
  if (exprs_.size() >= kMaxExprs)
    fail("schema is too complex (more than " + std::to_string(kMaxExprs) + " subexpressions)");
  Expr e;
  e.kind = Expr::Kind::kOr;
  e.args = flat;
  e.where = exprs_[flat[0]].where;
  exprs_.push_back(std::move(e));
  normal_.emplace_back();
  in_progress_.push_back(0);
  return expr_ids_[key] = ExprId(exprs_.size() - 1);
}

ExprId Compiler::not_expr(ExprId arg) {
  if (arg == kAny) return kNever;
  if (arg == kNever) return kAny;
  if (exprs_[arg].kind == Expr::Kind::kNot) return exprs_[arg].args[0];
  const std::string key = key_of('N', {arg});
  if (const auto it = expr_ids_.find(key); it != expr_ids_.end()) return it->second;
  if (exprs_.size() >= kMaxExprs)
    fail("schema is too complex (more than " + std::to_string(kMaxExprs) + " subexpressions)");
  Expr e;
  e.kind = Expr::Kind::kNot;
  e.args = {arg};
  e.where = exprs_[arg].where;
  exprs_.push_back(std::move(e));
  normal_.emplace_back();
  in_progress_.push_back(0);
  return expr_ids_[key] = ExprId(exprs_.size() - 1);
}

const TypedSet& Compiler::normalized(ExprId id) {
  if (normal_[id]) return *normal_[id];
  if (in_progress_[id]) {
    fail("$ref cycle at '" + (exprs_[id].where.empty() ? std::string("#") : exprs_[id].where) +
         "' never reaches a value (a schema that refers to itself in place)");
  }
  const DepthGuard guard(depth_);
  in_progress_[id] = 1;
  const Expr e = exprs_[id];  // a copy: normalising adds expressions
  TypedSet set;
  switch (e.kind) {
    case Expr::Kind::kTyped:
      break;  // always normalised at creation
    case Expr::Kind::kSchema:
      set = normalize_schema(*e.node, e.base, e.where);
      break;
    case Expr::Kind::kAnd:
      set = normalized(e.args[0]);
      for (size_t i = 1; i < e.args.size(); ++i) set = intersect(set, normalized(e.args[i]));
      break;
    case Expr::Kind::kOr:
      set = normalized(e.args[0]);
      for (size_t i = 1; i < e.args.size(); ++i) set = unite(set, normalized(e.args[i]));
      break;
    case Expr::Kind::kNot:
      set = complement(normalized(e.args[0]));
      break;
  }
  in_progress_[id] = 0;
  normal_[id] = std::make_unique<TypedSet>(std::move(set));
  return *normal_[id];
}

bool Compiler::maybe_nonempty(ExprId id, int depth) {
  if (id == kNever) return false;
  if (id == kAny || in_progress_[id]) return true;
  return !provably_empty(normalized(id), depth);
}

bool Compiler::provably_empty(const TypedSet& set, int depth) {
  if (set.null_ok || set.true_ok || set.false_ok || !set.numbers.empty() || !set.strings.empty()) return false;
  for (const auto& c : set.arrays)
    if (!clause_empty(c, depth)) return false;
  for (const auto& c : set.objects)
    if (!clause_empty(c, depth)) return false;
  return true;
}

bool Compiler::clause_empty(const ArrayClause& c, int depth) {
  if (c.max_items >= 0 && c.min_items > c.max_items) return true;
  for (int64_t i = 0; i < c.min_items && i <= int64_t(c.prefix.size()); ++i) {
    const ExprId item = c.item(size_t(i));
    if (item == kNever || (depth > 0 && !maybe_nonempty(item, depth - 1))) return true;
  }
  for (const auto& k : c.contains) {
    if (k.max_count >= 0 && k.min_count > k.max_count) return true;
    if (k.min_count > 0 && (k.schema == kNever || (c.max_items >= 0 && k.from + k.min_count > c.max_items)))
      return true;
  }
  return false;
}

bool Compiler::clause_empty(const ObjectClause& c, int depth) {
  if (c.max_props >= 0 && c.min_props > c.max_props) return true;
  int64_t required = 0, possible = 0;
  for (const auto& p : c.props) {
    if (p.value != kNever) ++possible;
    if (!p.required) continue;
    ++required;
    if (p.value == kNever || (depth > 0 && !maybe_nonempty(p.value, depth - 1))) return true;
  }
  if (c.max_props >= 0 && required > c.max_props) return true;
  if (c.regions.empty() && possible < c.min_props) return true;
  for (const auto& x : c.exists)
    if (x.keys.empty() || x.value == kNever) return true;
  return false;
}

// ---- set operations ----

ArrayClause Compiler::intersect_arrays(const ArrayClause& a, const ArrayClause& b) {
  if (is_any_array(a)) return b;
  if (is_any_array(b)) return a;
  ArrayClause out;
  const size_t n = std::max(a.prefix.size(), b.prefix.size());
  for (size_t i = 0; i < n; ++i) out.prefix.push_back(and_expr({a.item(i), b.item(i)}));
  out.items = and_expr({a.items, b.items});
  out.min_items = std::max(a.min_items, b.min_items);
  out.max_items = a.max_items < 0 ? b.max_items : b.max_items < 0 ? a.max_items : std::min(a.max_items, b.max_items);
  if (out.max_items >= 0 && int64_t(out.prefix.size()) > out.max_items) out.prefix.resize(size_t(out.max_items));
  out.contains = a.contains;
  out.contains.insert(out.contains.end(), b.contains.begin(), b.contains.end());
  while (!out.prefix.empty() && out.prefix.back() == out.items) out.prefix.pop_back();
  return out;
}

ObjectClause Compiler::intersect_objects(const ObjectClause& a, const ObjectClause& b) {
  if (is_any_object(a)) return b;
  if (is_any_object(b)) return a;
  ObjectClause out;
  std::unordered_map<std::string, const ObjectClause::Prop*> in_a, in_b;
  for (const auto& p : a.props) in_a.emplace(p.name, &p);
  for (const auto& p : b.props) in_b.emplace(p.name, &p);
  // The constraint a side puts on a name: its property, else the region holding it.
  const auto value_in = [](const ObjectClause& c, const auto& props, const std::string& name) {
    const auto it = props.find(name);
    return it != props.end() ? it->second->value : c.value_of(name);
  };
  std::vector<std::string> only_a, only_b;
  for (const auto& p : a.props) {
    const auto other = in_b.find(p.name);
    if (other == in_b.end()) only_a.push_back(p.name);
    out.props.push_back({p.name, and_expr({p.value, value_in(b, in_b, p.name)}),
                         p.required || (other != in_b.end() && other->second->required)});
  }
  for (const auto& p : b.props) {
    if (in_a.count(p.name)) continue;
    only_b.push_back(p.name);
    out.props.push_back({p.name, and_expr({value_in(a, in_a, p.name), p.value}), p.required});
  }
  // Keys named only on one side left the other side's regions: cut them out of the products.
  const Dfa cut_a = string_set(only_b), cut_b = string_set(only_a);
  for (const auto& ra : a.regions) {
    const Dfa ka = only_b.empty() ? ra.keys : ra.keys.minus(cut_a);
    if (ka.empty()) continue;
    for (const auto& rb : b.regions) {
      Dfa keys = ka.intersect(only_a.empty() ? rb.keys : rb.keys.minus(cut_b));
      if (keys.empty()) continue;
      const ExprId value = and_expr({ra.value, rb.value});
      if (value == kNever) continue;
      out.regions.push_back({std::move(keys), value});
    }
  }
  out.exists = a.exists;
  out.exists.insert(out.exists.end(), b.exists.begin(), b.exists.end());
  out.min_props = std::max(a.min_props, b.min_props);
  out.max_props = a.max_props < 0 ? b.max_props : b.max_props < 0 ? a.max_props : std::min(a.max_props, b.max_props);
  return out;
}

TypedSet Compiler::intersect(const TypedSet& a, const TypedSet& b) {
  TypedSet out;
  out.null_ok = a.null_ok && b.null_ok;
  out.true_ok = a.true_ok && b.true_ok;
  out.false_ok = a.false_ok && b.false_ok;
  out.all_numbers = a.all_numbers && b.all_numbers;
  out.numbers = a.all_numbers || a.numbers == number_universe()   ? b.numbers
                : b.all_numbers || b.numbers == number_universe() ? a.numbers
                                                                  : a.numbers.intersect(b.numbers);
  out.strings = jsonschema::intersect(a.strings, b.strings);
  for (const auto& ca : a.arrays)
    for (const auto& cb : b.arrays) {
      ArrayClause c = intersect_arrays(ca, cb);
      if (!clause_empty(c, 0)) out.arrays.push_back(std::move(c));
    }
  for (const auto& ca : a.objects)
    for (const auto& cb : b.objects) {
      ObjectClause c = intersect_objects(ca, cb);
      if (!clause_empty(c, 0)) out.objects.push_back(std::move(c));
    }
  check_clauses(out.arrays.size());
  check_clauses(out.objects.size());
  return out;
}

TypedSet Compiler::unite(const TypedSet& a, const TypedSet& b) {
  TypedSet out;
  out.null_ok = a.null_ok || b.null_ok;
  out.true_ok = a.true_ok || b.true_ok;
  out.false_ok = a.false_ok || b.false_ok;
  out.all_numbers = a.all_numbers || b.all_numbers;
  out.numbers = out.all_numbers ? number_universe() : a.numbers.unite(b.numbers);
  out.strings = jsonschema::unite(a.strings, b.strings);
  out.arrays = a.arrays;
  out.arrays.insert(out.arrays.end(), b.arrays.begin(), b.arrays.end());
  out.objects = a.objects;
  out.objects.insert(out.objects.end(), b.objects.begin(), b.objects.end());
  check_clauses(out.arrays.size());
  check_clauses(out.objects.size());
  return out;
}

std::vector<ArrayClause> Compiler::complement_array(const ArrayClause& c) {
  std::vector<ArrayClause> out;
  if (c.min_items > 0) {
    ArrayClause x;
    x.max_items = c.min_items - 1;
    out.push_back(x);
  }
  if (c.max_items >= 0) {
    ArrayClause x;
    x.min_items = c.max_items + 1;
    out.push_back(x);
  }
  for (size_t i = 0; i < c.prefix.size(); ++i) {
    if (c.prefix[i] == kAny) continue;
    ArrayClause x;
    x.prefix.assign(i, kAny);
    x.prefix.push_back(not_expr(c.prefix[i]));
    x.min_items = int64_t(i + 1);
    out.push_back(x);
  }
  if (c.items != kAny) {
    ArrayClause x;
    x.contains.push_back({not_expr(c.items), int64_t(c.prefix.size()), 1, -1});
    out.push_back(x);
  }
  for (const auto& k : c.contains) {
    if (k.min_count > 0) {
      ArrayClause x;
      x.contains.push_back({k.schema, k.from, 0, k.min_count - 1});
      out.push_back(x);
    }
    if (k.max_count >= 0) {
      ArrayClause x;
      x.contains.push_back({k.schema, k.from, k.max_count + 1, -1});
      out.push_back(x);
    }
  }
  return out;
}

std::vector<ObjectClause> Compiler::complement_object(const ObjectClause& c) {
  std::vector<ObjectClause> out;
  const auto open = [](ObjectClause x, const std::vector<std::string>& named) {
    x.regions.push_back({strings_except(named), kAny});
    return x;
  };
  std::vector<std::string> names;
  for (const auto& p : c.props) names.push_back(p.name);
  for (const auto& p : c.props) {
    if (p.required) {
      ObjectClause x;
      x.props.push_back({p.name, kNever, false});
      out.push_back(open(x, {p.name}));
    }
    if (p.value != kAny) {
      ObjectClause x;
      x.props.push_back({p.name, p.value == kNever ? kAny : not_expr(p.value), true});
      out.push_back(open(x, {p.name}));
    }
  }
  Dfa uncovered = strings_except(names);
  for (const auto& r : c.regions) {
    uncovered = uncovered.minus(r.keys);
    if (r.value == kAny) continue;
    ObjectClause x;
    x.exists.push_back({r.keys, not_expr(r.value)});
    out.push_back(open(x, {}));
  }
  if (!uncovered.empty()) {
    ObjectClause x;
    x.exists.push_back({uncovered, kAny});
    out.push_back(open(x, {}));
  }
  for (const auto& k : c.exists) {
    ObjectClause x;
    x.regions.push_back({k.keys, not_expr(k.value)});
    x.regions.push_back({any_string().minus(k.keys), kAny});
    if (x.regions.back().keys.empty()) x.regions.pop_back();
    out.push_back(x);
  }
  if (c.min_props > 0) {
    ObjectClause x;
    x.max_props = c.min_props - 1;
    out.push_back(open(x, {}));
  }
  if (c.max_props >= 0) {
    ObjectClause x;
    x.min_props = c.max_props + 1;
    out.push_back(open(x, {}));
  }
  return out;
}

TypedSet Compiler::complement(const TypedSet& a) {
  TypedSet out;
  out.null_ok = !a.null_ok;
  out.true_ok = !a.true_ok;
  out.false_ok = !a.false_ok;
  if (a.all_numbers) {
    out.numbers = Dfa();
  } else if (a.numbers.empty()) {
    out.all_numbers = true;
    out.numbers = number_universe();
  } else {
    out.numbers = number_universe().minus(a.numbers);
  }
  out.strings = jsonschema::complement(a.strings);
  // The complement of a union of clauses: the intersection of each clause's complement (itself a union).
  std::vector<ArrayClause> arrays{ArrayClause{}};
  for (const auto& c : a.arrays) {
    std::vector<ArrayClause> next;
    for (const auto& x : complement_array(c))
      for (const auto& y : arrays) {
        ArrayClause z = intersect_arrays(y, x);
        if (!clause_empty(z, 0)) next.push_back(std::move(z));
      }
    check_clauses(next.size());
    arrays = std::move(next);
  }
  out.arrays = std::move(arrays);
  ObjectClause all;
  all.regions.push_back({any_string(), kAny});
  std::vector<ObjectClause> objects{all};
  for (const auto& c : a.objects) {
    std::vector<ObjectClause> next;
    for (const auto& x : complement_object(c))
      for (const auto& y : objects) {
        ObjectClause z = intersect_objects(y, x);
        if (!clause_empty(z, 0)) next.push_back(std::move(z));
      }
    check_clauses(next.size());
    objects = std::move(next);
  }
  out.objects = std::move(objects);
  return out;
}

}  // namespace ridge::grammar::jsonschema
