// Object and array keywords to clauses: properties / required / additionalProperties /
// patternProperties / propertyNames / min-maxProperties / dependentRequired / dependentSchemas,
// and prefixItems / items / min-maxItems / contains with min-maxContains.
#include <unordered_set>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr size_t kMaxPatterns = 8;  // patternProperties: the key space is cut into 2^n regions

int64_t count_value(const Json& v, const char* keyword) {
  if (v.is_number_unsigned()) return int64_t(std::min<uint64_t>(v.get<uint64_t>(), uint64_t(INT64_MAX)));
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == double(int64_t(v.get<double>())))
    return int64_t(v.get<double>());
  fail(std::string("'") + keyword + "' must be a non-negative integer, got " + v.dump());
}

// Objects without `name`, any other members allowed.
ObjectClause without_member(const std::string& name) {
  ObjectClause c;
  c.props.push_back({name, kNever, false});
  c.regions.push_back({strings_except({name}), kAny});
  return c;
}

// Any value that is not an object, plus the objects of `objects`.
TypedSet non_objects_or(std::vector<ObjectClause> objects) {
  TypedSet s = TypedSet::any();
  s.objects = std::move(objects);
  return s;
}

}  // namespace

TypedSet Compiler::object_keywords(const Json& node, const std::string& base, const std::string& where) {
  static const char* const kKeywords[] = {"properties",    "required",      "additionalProperties", "patternProperties",
                                          "propertyNames", "minProperties", "maxProperties"};
  bool any_keyword = false;
  for (const char* k : kKeywords) any_keyword = any_keyword || node.contains(k);
  TypedSet set = TypedSet::any();
  const auto sub = [&](const Json& s, const std::string& path) { return schema_expr(s, base, where + path); };
  if (any_keyword) {
    ObjectClause c;
    // Named members: properties in their order, then required names not among them.
    std::vector<std::string> names;
    std::vector<ExprId> declared;
    if (const auto p = node.find("properties"); p != node.end()) {
      if (!p->is_object()) fail("'properties' must be an object");
      for (const auto& [name, schema] : p->items()) {
        names.push_back(name);
        declared.push_back(sub(schema, "/properties/" + name));
      }
    }
    std::unordered_set<std::string> named(names.begin(), names.end()), required;
    if (const auto r = node.find("required"); r != node.end()) {
      if (!r->is_array()) fail("'required' must be an array of strings");
      for (const auto& x : *r) {
        if (!x.is_string()) fail("'required' must be an array of strings");
        const std::string name = x.get<std::string>();
        required.insert(name);
        if (named.insert(name).second) {
          names.push_back(name);
          declared.push_back(-1);
        }
      }
    }
    std::vector<std::pair<Dfa, ExprId>> patterns;
    if (const auto pp = node.find("patternProperties"); pp != node.end()) {
      if (!pp->is_object()) fail("'patternProperties' must be an object");
      if (pp->size() > kMaxPatterns) fail("'patternProperties' with more than 8 patterns is not supported");
      for (const auto& [pattern, schema] : pp->items())
        patterns.emplace_back(pattern_strings(pattern), sub(schema, "/patternProperties/" + pattern));
    }
    const ExprId additional =
        node.contains("additionalProperties") ? sub(node["additionalProperties"], "/additionalProperties") : kAny;
    Dfa key_filter = any_string();
    if (const auto pn = node.find("propertyNames"); pn != node.end())
      key_filter = as_dfa(normalized(sub(*pn, "/propertyNames")).strings);

    for (size_t i = 0; i < names.size(); ++i) {
      const auto cps = codepoints_of(names[i]);
      std::vector<ExprId> parts;
      bool matched = false;
      for (const auto& [keys, value] : patterns) {
        if (!keys.accepts(cps)) continue;
        matched = true;
        parts.push_back(value);
      }
      if (declared[i] >= 0)
        parts.push_back(declared[i]);
      else if (!matched)
        parts.push_back(additional);
      if (!key_filter.accepts(cps)) parts.push_back(kNever);
      c.props.push_back({names[i], and_expr(parts), required.count(names[i]) > 0});
    }
    // Other keys: one region per set of patterns they match (none: additionalProperties) -- none at
    // all when no other key may come (building their automaton is most of a small schema's cost).
    const bool others_allowed = !patterns.empty() || additional != kNever;
    const Dfa others = !others_allowed               ? Dfa()
                       : key_filter == any_string() ? strings_except(names)
                                                    : key_filter.minus(string_set(names));
    for (size_t mask = 0; others_allowed && mask < (size_t{1} << patterns.size()); ++mask) {
      Dfa keys = others;
      std::vector<ExprId> parts;
      for (size_t j = 0; j < patterns.size() && !keys.empty(); ++j) {
        if (mask & (size_t{1} << j)) {
          keys = keys.intersect(patterns[j].first);
          parts.push_back(patterns[j].second);
        } else {
          keys = keys.minus(patterns[j].first);
        }
      }
      if (keys.empty()) continue;
      const ExprId value = mask == 0 ? additional : and_expr(parts);
      if (value == kNever) continue;
      c.regions.push_back({std::move(keys), value});
    }
    if (node.contains("minProperties")) c.min_props = count_value(node["minProperties"], "minProperties");
    if (node.contains("maxProperties")) c.max_props = count_value(node["maxProperties"], "maxProperties");
    set = non_objects_or({std::move(c)});
  }

  // dependentRequired: without the key, or with every dependent; dependentSchemas: without the key,
  // or valid against the schema. Draft 7's `dependencies` is either, by the kind of its values.
  const auto require_dependents = [&](const std::string& key, const Json& dependents) {
    if (!dependents.is_array()) fail("'dependentRequired' values must be arrays of strings");
    if (dependents.empty()) return;
    ObjectClause with;
    std::vector<std::string> names;
    for (const auto& d : dependents) {
      if (!d.is_string()) fail("'dependentRequired' values must be arrays of strings");
      names.push_back(d.get<std::string>());
      with.props.push_back({names.back(), kAny, true});
    }
    with.regions.push_back({strings_except(names), kAny});
    set = intersect(set, non_objects_or({without_member(key), std::move(with)}));
  };
  const auto depend_on_schema = [&](const std::string& key, const Json& schema, const std::string& path) {
    std::vector<ObjectClause> objects{without_member(key)};
    for (const auto& c : normalized(sub(schema, path)).objects) objects.push_back(c);
    set = intersect(set, non_objects_or(std::move(objects)));
  };
  if (const auto dr = node.find("dependentRequired"); dr != node.end() && dr->is_object())
    for (const auto& [key, dependents] : dr->items()) require_dependents(key, dependents);
  if (const auto ds = node.find("dependentSchemas"); ds != node.end() && ds->is_object())
    for (const auto& [key, schema] : ds->items()) depend_on_schema(key, schema, "/dependentSchemas/" + key);
  if (const auto dep = node.find("dependencies"); dep != node.end() && dep->is_object()) {
    for (const auto& [key, value] : dep->items()) {
      if (value.is_array())
        require_dependents(key, value);
      else
        depend_on_schema(key, value, "/dependencies/" + key);
    }
  }
  return set;
}

TypedSet Compiler::array_keywords(const Json& node, const std::string& base, const std::string& where) {
  static const char* const kKeywords[] = {"prefixItems", "items",    "additionalItems",
                                          "minItems",    "maxItems", "contains"};
  bool any_keyword = false;
  for (const char* k : kKeywords) any_keyword = any_keyword || node.contains(k);
  if (!any_keyword) return TypedSet::any();
  const auto sub = [&](const Json& s, const std::string& path) { return schema_expr(s, base, where + path); };
  ArrayClause c;
  const auto items = node.find("items");
  if (items != node.end() && items->is_array()) {
    // Draft 7 tuples: items as an array, additionalItems for the rest.
    for (size_t i = 0; i < items->size(); ++i) c.prefix.push_back(sub((*items)[i], "/items/" + std::to_string(i)));
    if (node.contains("additionalItems")) c.items = sub(node["additionalItems"], "/additionalItems");
  } else {
    if (const auto p = node.find("prefixItems"); p != node.end()) {
      if (!p->is_array()) fail("'prefixItems' must be an array");
      for (size_t i = 0; i < p->size(); ++i) c.prefix.push_back(sub((*p)[i], "/prefixItems/" + std::to_string(i)));
    }
    if (items != node.end()) c.items = sub(*items, "/items");
  }
  if (node.contains("minItems")) c.min_items = count_value(node["minItems"], "minItems");
  if (node.contains("maxItems")) c.max_items = count_value(node["maxItems"], "maxItems");
  if (const auto k = node.find("contains"); k != node.end()) {
    ArrayClause::Contains contains{sub(*k, "/contains"), 0, 1, -1};
    if (node.contains("minContains")) contains.min_count = count_value(node["minContains"], "minContains");
    if (node.contains("maxContains")) contains.max_count = count_value(node["maxContains"], "maxContains");
    if (contains.min_count > 0 || contains.max_count >= 0) c.contains.push_back(contains);
  }
  if (c.max_items >= 0 && int64_t(c.prefix.size()) > c.max_items) c.prefix.resize(size_t(c.max_items));
  TypedSet set = TypedSet::any();
  set.arrays = {std::move(c)};
  return set;
}

}  // namespace ridge::grammar::jsonschema
