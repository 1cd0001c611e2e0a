// Sets of strings as unions of (automaton, length range) clauses: exact intersection, union and
// complement with length ranges kept as numbers, so a long maxLength never becomes automaton states
// in the algebra. The emitter folds a range into its automaton, or spells a long one on unconstrained
// strings with length_rule.
#include <map>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr size_t kMaxStringClauses = 64;

bool clause_empty(const StringClause& c) { return c.dfa.empty() || (c.max_len >= 0 && c.min_len > c.max_len); }

// Clauses with the same length range merge into one automaton.
StringSet merged(std::vector<StringClause> clauses) {
  std::map<std::pair<int64_t, int64_t>, Dfa> by_range;
  for (auto& c : clauses) {
    if (clause_empty(c)) continue;
    auto [it, fresh] = by_range.emplace(std::make_pair(c.min_len, c.max_len), Dfa());
    it->second = fresh ? std::move(c.dfa) : it->second.unite(c.dfa);
  }
  StringSet out;
  for (auto& [range, dfa] : by_range) out.clauses.push_back({std::move(dfa), range.first, range.second});
  if (out.clauses.size() > kMaxStringClauses) fail("string constraints are too complex (too many length ranges)");
  return out;
}

}  // namespace

StringSet StringSet::any() { return of(any_string()); }

StringSet StringSet::of(Dfa dfa) {
  StringSet s;
  if (!dfa.empty()) s.clauses.push_back({std::move(dfa)});
  return s;
}

StringSet StringSet::of_length(int64_t min, int64_t max) { return merged({{any_string(), min, max}}); }

bool StringSet::is_any() const {
  return clauses.size() == 1 && !clauses[0].bounded() && clauses[0].dfa == any_string();
}

StringSet intersect(const StringSet& a, const StringSet& b) {
  if (a.is_any()) return b;
  if (b.is_any()) return a;
  std::vector<StringClause> out;
  for (const auto& x : a.clauses) {
    for (const auto& y : b.clauses) {
      StringClause c;
      c.min_len = std::max(x.min_len, y.min_len);
      c.max_len = x.max_len < 0 ? y.max_len : y.max_len < 0 ? x.max_len : std::min(x.max_len, y.max_len);
      if (c.max_len >= 0 && c.min_len > c.max_len) continue;
      c.dfa = x.dfa == any_string() ? y.dfa : y.dfa == any_string() ? x.dfa : x.dfa.intersect(y.dfa);
      out.push_back(std::move(c));
    }
  }
  return merged(std::move(out));
}

StringSet unite(const StringSet& a, const StringSet& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<StringClause> all = a.clauses;
  all.insert(all.end(), b.clauses.begin(), b.clauses.end());
  return merged(std::move(all));
}

StringSet complement(const StringSet& a) {
  // Not (D and length in [lo, hi]) = not D, or shorter than lo, or longer than hi; the complement of a
  // union is the intersection of the clauses' complements.
  StringSet out = StringSet::any();
  for (const auto& c : a.clauses) {
    std::vector<StringClause> outside;
    if (!(c.dfa == any_string())) outside.push_back({any_string().minus(c.dfa)});
    if (c.min_len > 0) outside.push_back({any_string(), 0, c.min_len - 1});
    if (c.max_len >= 0) outside.push_back({any_string(), c.max_len + 1, -1});
    out = intersect(out, merged(std::move(outside)));
  }
  return out;
}

Dfa folded(const StringClause& c, const char* keyword) {
  if (!c.bounded()) return c.dfa;
  try {
    return c.dfa == any_string() ? Dfa::length(codepoint_alphabet(), c.min_len, c.max_len)
                                 : c.dfa.with_length(c.min_len, c.max_len);
  } catch (const GrammarError&) {
    fail(std::string("'") + keyword + "' of " + std::to_string(c.max_len >= 0 ? c.max_len : c.min_len) +
         " together with 'pattern', 'format', 'enum' or 'not' needs too large an automaton");
  }
}

Dfa as_dfa(const StringSet& set) {
  Dfa out;
  for (const auto& c : set.clauses) out = out.unite(folded(c, "propertyNames' with 'maxLength"));
  return out;
}

}  // namespace ridge::grammar::jsonschema
