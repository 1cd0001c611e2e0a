#pragma once
// The JSON Schema compiler's inner model, private to json_schema*.cc. A schema denotes a set of JSON
// values; the compiler computes that set in a normal form that grammars can spell out exactly:
//   - per JSON type: null and booleans as flags, numbers and strings as automata (numbers over the
//     bytes of their text, strings over the code points of their value), arrays and objects as unions
//     of clauses (one clause: one conjunction of constraints a grammar can emit);
//   - the values inside arrays and objects are expressions (ExprId): a subschema, or and / or / not
//     of expressions, normalised lazily, so recursive schemas stay finite and cost only what is used.
// allOf is intersection, anyOf union, not complement, oneOf and if/then/else are built from those,
// and every operation is exact, so the grammar accepts precisely the values the schema validates
// (in the encodings the grammar allows: see json_schema.cc). Whatever cannot be made exact is a
// GrammarError naming the keyword.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/builder.h"
#include "grammar/json_schema.h"
#include "grammar/json_schema_dfa.h"

namespace ridge::grammar::jsonschema {

using Json = nlohmann::ordered_json;
using ExprId = int32_t;
constexpr ExprId kAny = 0;    // every JSON value
constexpr ExprId kNever = 1;  // no value (a member that must be absent, an item that cannot exist)

[[noreturn]] void fail(const std::string& what);            // GrammarError("json schema: " + what)
[[noreturn]] void unsupported(const std::string& keyword);  // "keyword 'X' is not supported"
// A memo key: one tag character, then the text. (Not "S" + text: GCC 12 warns falsely on that, -Wrestrict.)
inline std::string tagged(char tag, std::string text) {
  text.insert(text.begin(), tag);
  return text;
}

// ---- numbers (json_schema_number.cc) ----

// A decimal number exactly as written in the schema: sign, integer digits without leading zeros
// ("0" for zero), fraction digits without trailing zeros.
struct Decimal {
  bool negative = false;
  std::string int_digits = "0";
  std::string frac_digits;
  bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
};
Decimal decimal_of(const Json& number);  // throws for a non-number

// Number texts without exponent, -?(0|[1-9][0-9]*)(\.[0-9]+)?: the universe of number automata.
// Every value has such a spelling, so a constraint on values loses nothing by being exact on these.
const Dfa& number_universe();
const Dfa& number_full_syntax();  // JSON's whole number syntax, exponents included
const Dfa& integer_numbers();     // integer values: -?(0|[1-9][0-9]*)(\.0+)?
// One spelling per value, for generation: no -0, no fraction ending in 0 (so 5, never 5.0 or 5.000).
const Dfa& canonical_numbers();
enum Cmp : int { kLess = 1, kEqual = 2, kGreater = 4 };
// Texts whose value compares with `bound` as one of `allowed` (a mask of Cmp).
Dfa number_compare(const Decimal& bound, int allowed);
Dfa number_multiple_of(const Decimal& factor);  // GrammarError when the automaton would be too large

// ---- strings (json_schema_string.cc) ----

const Dfa::Ranges& codepoint_alphabet();  // every Unicode scalar value
const Dfa& any_string();
Dfa exact_string(const std::string& utf8);  // GrammarError for invalid UTF-8
Dfa string_length(int64_t min, int64_t max);
Dfa string_set(const std::vector<std::string>& words);      // exactly these strings
Dfa strings_except(const std::vector<std::string>& words);  // every string but these
// ECMAScript pattern semantics of JSON Schema: matches anywhere unless anchored.
Dfa pattern_strings(const std::string& pattern);
// The strings of a `format`, or false when the format is unknown (an annotation then).
bool format_strings(const std::string& format, Dfa& out);
std::vector<uint32_t> codepoints_of(const std::string& utf8);

// A set of strings: a union of clauses, each an automaton and a length range. Ranges stay numbers in
// the algebra (a maxLength of 100000 is not 100000 automaton states); the emitter folds a range into
// its automaton, or writes a long range on unconstrained strings as blocks (length_rule).
struct StringClause {
  Dfa dfa;
  int64_t min_len = 0, max_len = -1;  // max < 0: unbounded
  bool bounded() const { return min_len > 0 || max_len >= 0; }
};
struct StringSet {
  std::vector<StringClause> clauses;
  static StringSet any();
  static StringSet of(Dfa dfa);
  static StringSet of_length(int64_t min, int64_t max);
  bool empty() const { return clauses.empty(); }
  bool is_any() const;
};
StringSet intersect(const StringSet& a, const StringSet& b);
StringSet unite(const StringSet& a, const StringSet& b);
StringSet complement(const StringSet& a);
// The clause's strings as one automaton; GrammarError naming `keyword` when the range makes it too large.
Dfa folded(const StringClause& clause, const char* keyword);
Dfa as_dfa(const StringSet& set);  // one automaton (GrammarError when the lengths make it too large)

// ---- the value-set normal form ----

struct ArrayClause {
  std::vector<ExprId> prefix;             // item i < prefix.size()
  ExprId items = kAny;                    // items after the prefix
  int64_t min_items = 0, max_items = -1;  // max < 0: unbounded
  // Between min_count and max_count (< 0: unbounded) items at index >= from are in `schema`.
  struct Contains {
    ExprId schema;
    int64_t from = 0, min_count = 1, max_count = -1;
  };
  std::vector<Contains> contains;

  ExprId item(size_t i) const { return i < prefix.size() ? prefix[i] : items; }
};

struct ObjectClause {
  struct Prop {
    std::string name;
    ExprId value;  // the member's value when present; kNever: the member must be absent
    bool required = false;
  };
  // Members not named in `props`: a key in region.keys takes a value in region.value. Regions are
  // disjoint and exclude the names in `props`; a key in no region may not appear.
  struct Region {
    Dfa keys;
    ExprId value;
  };
  // Some member (named or not) has a key in `keys` and a value in `value`.
  struct Exists {
    Dfa keys;
    ExprId value;
  };
  std::vector<Prop> props;
  std::vector<Region> regions;
  std::vector<Exists> exists;
  int64_t min_props = 0, max_props = -1;

  const Prop* find(const std::string& name) const;
  // The constraint this clause puts on a member named `name` (kNever when it may not appear).
  ExprId value_of(const std::string& name) const;
};

struct TypedSet {
  bool null_ok = false, true_ok = false, false_ok = false;
  bool all_numbers = false;           // every number, exponent spellings included (then numbers == universe)
  Dfa numbers;                        // number texts (no exponent) of the values in the set
  StringSet strings;                  // the string values in the set
  std::vector<ArrayClause> arrays;    // union
  std::vector<ObjectClause> objects;  // union

  static TypedSet any();
  static TypedSet none() { return {}; }
};

struct Expr {
  enum class Kind : uint8_t { kTyped, kSchema, kAnd, kOr, kNot };
  Kind kind = Kind::kTyped;
  const Json* node = nullptr;  // kSchema
  std::string base;            // kSchema: the base URI $refs in `node` resolve against
  std::vector<ExprId> args;    // kAnd / kOr: sorted, unique; kNot: one
  std::string where;           // JSON pointer of the schema, for rule names and error messages
};

// Base URIs, $id / $anchor registry and $ref resolution over one schema document (json_schema_refs.cc).
class SchemaIndex {
 public:
  explicit SchemaIndex(const Json& root);
  struct Target {
    const Json* node;
    std::string base;
    std::string where;
  };
  // `ref` as written in a schema whose base URI is `base`. GrammarError for a remote or dangling one.
  Target resolve(const std::string& ref, const std::string& base) const;
  const std::string& root_base() const { return root_base_; }
  // The base URI of a schema inside the document (a node with $id starts a new one).
  std::string base_of(const Json* node, const std::string& parent_base) const;

 private:
  void walk(const Json& node, const std::string& base, const std::string& where, int depth);
  std::string root_base_;
  std::unordered_map<std::string, const Json*> resources_;                     // absolute URI without fragment
  std::unordered_map<std::string, const Json*> anchors_;                       // absolute URI + '#' + anchor
  std::unordered_map<const Json*, std::pair<std::string, std::string>> info_;  // node: (base, pointer)
};

std::string resolve_uri(const std::string& base, const std::string& ref);  // RFC 3986 section 5.2

// What a schema's successful evaluation has looked at (for unevaluatedProperties / unevaluatedItems):
// member keys, an item prefix (or every item), and the items that matched `contains` schemas.
struct Evaluated {
  Dfa keys;
  int64_t prefix = 0;
  bool all_items = false;
  std::vector<ExprId> contains;
};
// When the value is in `condition`, at least `evaluated` was evaluated.
struct EvalCase {
  ExprId condition;
  Evaluated evaluated;
};

// Bounds the recursion of normalisation and emission (a deeply nested schema must fail, not crash).
struct DepthGuard {
  static constexpr int kMaxDepth = 500;
  explicit DepthGuard(int& depth) : depth_(depth) {
    if (++depth_ > kMaxDepth) {
      --depth_;
      fail("schema is nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
    }
  }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  int& depth_;
};

class Compiler {
 public:
  Compiler(const Json& root, const JsonSchemaOptions& options);
  Grammar compile();

  // ---- expressions (json_schema_algebra.cc) ----
  ExprId schema_expr(const Json& node, const std::string& base, const std::string& where);
  ExprId typed_expr(TypedSet set, const std::string& where);
  ExprId const_expr(const Json& value);
  ExprId and_expr(std::vector<ExprId> args);
  ExprId or_expr(std::vector<ExprId> args);
  ExprId not_expr(ExprId arg);
  const TypedSet& normalized(ExprId id);
  // False only when the expression provably has no value (looks `depth` levels into nested values).
  bool maybe_nonempty(ExprId id, int depth = 3);

  TypedSet intersect(const TypedSet& a, const TypedSet& b);
  TypedSet unite(const TypedSet& a, const TypedSet& b);
  TypedSet complement(const TypedSet& a);
  bool provably_empty(const TypedSet& set, int depth);

 private:
  // ---- keywords (json_schema_keywords.cc, json_schema_objects.cc) ----
  TypedSet normalize_schema(const Json& node, const std::string& base, const std::string& where);
  TypedSet const_set(const Json& value);
  TypedSet object_keywords(const Json& node, const std::string& base, const std::string& where);
  TypedSet array_keywords(const Json& node, const std::string& base, const std::string& where);
  TypedSet one_of(const std::vector<ExprId>& branches);
  // ---- unevaluatedProperties / unevaluatedItems (json_schema_unevaluated.cc) ----
  TypedSet unevaluated(const Json& node, const std::string& base, const std::string& where);
  std::vector<EvalCase> eval_cases(const Json& node, const std::string& base, const std::string& where, bool own);
  bool evaluates(const Json& node, const std::string& base, std::vector<const Json*>& seen);
  std::vector<EvalCase> cross(const std::vector<EvalCase>& a, const std::vector<EvalCase>& b);

  ObjectClause intersect_objects(const ObjectClause& a, const ObjectClause& b);
  ArrayClause intersect_arrays(const ArrayClause& a, const ArrayClause& b);
  std::vector<ObjectClause> complement_object(const ObjectClause& c);
  std::vector<ArrayClause> complement_array(const ArrayClause& c);
  bool clause_empty(const ObjectClause& c, int depth);
  bool clause_empty(const ArrayClause& c, int depth);

  // ---- grammar (json_schema_emit.cc) ----
  RuleId value_rule(ExprId id);
  void emit_set(const TypedSet& set, RuleId into, const std::string& name);
  RuleId number_rule(const Dfa& dfa);
  RuleId string_rule(const Dfa& dfa);  // the quoted JSON string
  RuleId string_content_rule(const Dfa& dfa);
  RuleId length_rule(int64_t min, int64_t max);  // a quoted string of min..max characters
  RuleId array_rule(const ArrayClause& c, const std::string& name);
  RuleId object_rule(const ObjectClause& c, const std::string& name);
  Symbol json_char(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);
  Symbol hex_digits(uint32_t lo, uint32_t hi, int n);  // n hex digits, value in lo..hi
  void ws(Sequence& seq);                              // optional whitespace (flexible)
  void separator(Sequence& seq, char c);              // "," or ":" with the whitespace around it
  void check_size();

  const Json& root_;
  JsonSchemaOptions options_;
  SchemaIndex index_;
  GrammarBuilder builder_;

  std::vector<Expr> exprs_;
  std::vector<std::unique_ptr<TypedSet>> normal_;
  std::vector<char> in_progress_;
  std::unordered_map<std::string, ExprId> expr_ids_;

  std::vector<RuleId> value_rules_;  // by ExprId, -1 until emitted
  std::unordered_map<std::string, RuleId> dfa_rules_;
  std::unordered_map<std::string, Symbol> char_rules_;
  std::unordered_map<std::string, Symbol> hex_rules_;
  RuleId ws_rule_ = -1;
  // Property names by first appearance in the document: the order objects' members are emitted in.
  std::unordered_map<std::string, size_t> rank_;
  int depth_ = 0;
};

}  // namespace ridge::grammar::jsonschema
