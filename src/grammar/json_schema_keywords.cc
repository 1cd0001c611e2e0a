// Schema keywords to typed sets: one schema object is the intersection of what each of its keywords
// allows (type, enum / const, the number, string, array and object keywords, $ref and the in-place
// applicators). Annotations are skipped; a keyword that constrains values but is not handled is a
// GrammarError naming it.
#include <set>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

// Keywords that constrain values but are not handled. Annotations ($comment, title, description,
// default, examples, contentMediaType, ...), identifiers and unknown keywords are skipped, as the
// specification says of unknown ones; `format` asserts only when the options ask for it.
const std::set<std::string> kUnsupported = {"$dynamicRef", "$recursiveRef"};

const char* const kDialects[] = {"json-schema.org/draft/2020-12/schema", "json-schema.org/draft/2019-09/schema",
                                 "json-schema.org/draft-07/schema",      "json-schema.org/draft-06/schema",
                                 "json-schema.org/draft-04/schema",      "json-schema.org/schema"};

int64_t count_of(const Json& node, const char* keyword) {
  const Json& v = node[keyword];
  if (v.is_number_unsigned()) return int64_t(std::min<uint64_t>(v.get<uint64_t>(), uint64_t(INT64_MAX)));
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == double(int64_t(v.get<double>())))
    return int64_t(v.get<double>());
  fail(std::string("'") + keyword + "' must be a non-negative integer, got " + v.dump());
}

TypedSet with_numbers(Dfa numbers) {
  TypedSet s = TypedSet::any();
  s.all_numbers = false;
  s.numbers = std::move(numbers);
  return s;
}

TypedSet with_strings(StringSet strings) {
  TypedSet s = TypedSet::any();
  s.strings = std::move(strings);
  return s;
}

}  // namespace

TypedSet Compiler::const_set(const Json& value) {
  TypedSet s;
  switch (value.type()) {
    case Json::value_t::null:
      s.null_ok = true;
      break;
    case Json::value_t::boolean:
      (value.get<bool>() ? s.true_ok : s.false_ok) = true;
      break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      s.numbers = number_compare(decimal_of(value), kEqual);
      break;
    case Json::value_t::string:
      s.strings = StringSet::of(exact_string(value.get<std::string>()));
      break;
    case Json::value_t::array: {
      ArrayClause c;
      for (const auto& item : value) c.prefix.push_back(const_expr(item));
      c.items = kNever;
      c.min_items = c.max_items = int64_t(value.size());
      s.arrays.push_back(std::move(c));
      break;
    }
    case Json::value_t::object: {
      ObjectClause c;
      for (const auto& [k, v] : value.items()) c.props.push_back({k, const_expr(v), true});
      s.objects.push_back(std::move(c));
      break;
    }
    default:
      fail("unsupported value in enum / const: " + value.dump());
  }
  return s;
}

TypedSet Compiler::normalize_schema(const Json& node, const std::string& base_in, const std::string& where) {
  if (node.is_boolean()) return node.get<bool>() ? TypedSet::any() : TypedSet::none();
  if (!node.is_object()) fail("a schema must be an object or a boolean (at '" + where + "')");
  const std::string base = index_.base_of(&node, base_in);
  for (const auto& [key, value] : node.items()) {
    if (kUnsupported.count(key)) unsupported(key);
    if (key == "uniqueItems" && value == true && !(node.contains("maxItems") && count_of(node, "maxItems") <= 1))
      unsupported("uniqueItems");
    if (key == "$schema") {
      const std::string dialect = value.is_string() ? value.get<std::string>() : "";
      bool known = false;
      for (const char* d : kDialects) known = known || dialect.find(d) != std::string::npos;
      if (!known) fail("$schema '" + dialect + "' is not supported (its vocabularies are unknown)");
    }
  }
  const auto sub = [&](const Json& s, const std::string& path) { return schema_expr(s, base, where + path); };
  TypedSet set = TypedSet::any();
  const auto restrict = [&](const TypedSet& other) { set = intersect(set, other); };

  if (const auto t = node.find("type"); t != node.end()) {
    std::vector<std::string> types;
    if (t->is_string())
      types.push_back(t->get<std::string>());
    else if (t->is_array())
      for (const auto& x : *t) types.push_back(x.is_string() ? x.get<std::string>() : x.dump());
    else
      fail("'type' must be a string or an array of strings");
    TypedSet allowed;
    const TypedSet any = TypedSet::any();
    for (const auto& type : types) {
      if (type == "null")
        allowed.null_ok = true;
      else if (type == "boolean")
        allowed.true_ok = allowed.false_ok = true;
      else if (type == "number")
        allowed.all_numbers = true, allowed.numbers = number_universe();
      else if (type == "integer") {
        if (!allowed.all_numbers) allowed.numbers = allowed.numbers.unite(integer_numbers());
      } else if (type == "string")
        allowed.strings = StringSet::any();
      else if (type == "array")
        allowed.arrays = any.arrays;
      else if (type == "object")
        allowed.objects = any.objects;
      else
        fail("unknown type '" + type + "'");
    }
    restrict(allowed);
  }
  if (const auto c = node.find("const"); c != node.end()) restrict(const_set(*c));
  if (const auto e = node.find("enum"); e != node.end()) {
    if (!e->is_array()) fail("'enum' must be an array");
    TypedSet values;
    for (const auto& v : *e) values = unite(values, const_set(v));
    restrict(values);
  }

  // Numbers.
  {
    Dfa numbers = number_universe();
    bool any_keyword = false;
    const auto bound = [&](const char* keyword, int allowed) {
      const auto it = node.find(keyword);
      if (it == node.end() || it->is_boolean()) return;
      if (!it->is_number()) fail(std::string("'") + keyword + "' must be a number");
      any_keyword = true;
      numbers = numbers.intersect(number_compare(decimal_of(*it), allowed));
    };
    // Draft 4 wrote exclusiveness as a boolean next to minimum / maximum.
    const bool min_exclusive = node.value("exclusiveMinimum", Json()).is_boolean() && node["exclusiveMinimum"] == true;
    const bool max_exclusive = node.value("exclusiveMaximum", Json()).is_boolean() && node["exclusiveMaximum"] == true;
    bound("minimum", min_exclusive ? kGreater : kGreater | kEqual);
    bound("maximum", max_exclusive ? kLess : kLess | kEqual);
    bound("exclusiveMinimum", kGreater);
    bound("exclusiveMaximum", kLess);
    if (const auto m = node.find("multipleOf"); m != node.end()) {
      if (!m->is_number()) fail("'multipleOf' must be a number");
      any_keyword = true;
      numbers = numbers.intersect(number_multiple_of(decimal_of(*m)));
    }
    if (any_keyword) restrict(with_numbers(std::move(numbers)));
  }

  // Strings.
  {
    StringSet strings = StringSet::any();
    bool any_keyword = false;
    if (node.contains("minLength") || node.contains("maxLength")) {
      const int64_t min = node.contains("minLength") ? count_of(node, "minLength") : 0;
      const int64_t max = node.contains("maxLength") ? count_of(node, "maxLength") : -1;
      strings = StringSet::of_length(min, max);
      any_keyword = true;
    }
    if (const auto p = node.find("pattern"); p != node.end()) {
      if (!p->is_string()) fail("'pattern' must be a string");
      strings = jsonschema::intersect(strings, StringSet::of(pattern_strings(p->get<std::string>())));
      any_keyword = true;
    }
    if (const auto f = node.find("format"); f != node.end() && f->is_string() && options_.assert_format) {
      Dfa formatted;
      if (format_strings(f->get<std::string>(), formatted)) {
        strings = jsonschema::intersect(strings, StringSet::of(std::move(formatted)));
        any_keyword = true;
      }
    }
    if (any_keyword) restrict(with_strings(std::move(strings)));
  }

  restrict(array_keywords(node, base, where));
  restrict(object_keywords(node, base, where));

  if (const auto r = node.find("$ref"); r != node.end()) {
    if (!r->is_string()) fail("'$ref' must be a string");
    const auto target = index_.resolve(r->get<std::string>(), base);
    restrict(normalized(schema_expr(*target.node, target.base, target.where)));
  }
  if (const auto all = node.find("allOf"); all != node.end()) {
    if (!all->is_array() || all->empty()) fail("'allOf' must be a non-empty array");
    for (size_t i = 0; i < all->size(); ++i) restrict(normalized(sub((*all)[i], "/allOf/" + std::to_string(i))));
  }
  if (const auto any = node.find("anyOf"); any != node.end()) {
    if (!any->is_array() || any->empty()) fail("'anyOf' must be a non-empty array");
    std::vector<ExprId> branches;
    for (size_t i = 0; i < any->size(); ++i) branches.push_back(sub((*any)[i], "/anyOf/" + std::to_string(i)));
    restrict(normalized(or_expr(branches)));
  }
  if (const auto one = node.find("oneOf"); one != node.end()) {
    if (!one->is_array() || one->empty()) fail("'oneOf' must be a non-empty array");
    std::vector<ExprId> branches;
    for (size_t i = 0; i < one->size(); ++i) branches.push_back(sub((*one)[i], "/oneOf/" + std::to_string(i)));
    restrict(one_of(branches));
  }
  if (const auto n = node.find("not"); n != node.end()) restrict(normalized(not_expr(sub(*n, "/not"))));
  if (const auto cond = node.find("if"); cond != node.end() && (node.contains("then") || node.contains("else"))) {
    const ExprId test = sub(*cond, "/if");
    const ExprId then = node.contains("then") ? sub(node["then"], "/then") : kAny;
    const ExprId otherwise = node.contains("else") ? sub(node["else"], "/else") : kAny;
    restrict(normalized(or_expr({and_expr({test, then}), and_expr({not_expr(test), otherwise})})));
  }
  if (node.contains("unevaluatedProperties") || node.contains("unevaluatedItems"))
    restrict(unevaluated(node, base, where));
  return set;
}

TypedSet Compiler::one_of(const std::vector<ExprId>& branches) {
  // Pairwise disjoint branches (provably: their intersection is empty): exactly one is the union.
  bool disjoint = true;
  for (size_t i = 0; i < branches.size() && disjoint; ++i)
    for (size_t j = i + 1; j < branches.size() && disjoint; ++j)
      disjoint = provably_empty(intersect(normalized(branches[i]), normalized(branches[j])), 2);
  if (disjoint) return normalized(or_expr(branches));
  // Otherwise: one branch and the complement of every other one.
  std::vector<ExprId> exactly_one;
  for (size_t i = 0; i < branches.size(); ++i) {
    std::vector<ExprId> parts{branches[i]};
    for (size_t j = 0; j < branches.size(); ++j)
      if (j != i) parts.push_back(not_expr(branches[j]));
    exactly_one.push_back(and_expr(parts));
  }
  return normalized(or_expr(exactly_one));
}

}  // namespace ridge::grammar::jsonschema
