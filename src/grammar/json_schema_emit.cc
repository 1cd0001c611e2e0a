// Typed sets to grammar rules. Numbers and strings are automata, one rule per state (right-linear);
// a string's characters take every JSON spelling: raw UTF-8, the short escapes, \uXXXX in either
// case and surrogate pairs. Arrays and objects walk their clause with a small state (position, counts,
// which existence constraints are met) so separators, lengths and counts come out exact.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr int32_t kMaxRules = 100000;
constexpr size_t kMaxExists = 3;       // existence constraints tracked at once (2^n states)
constexpr int64_t kMaxStates = 20000;  // states of one array or object walk
// Length ranges up to this are automaton states, a chain the matcher walks deterministically; above, on
// otherwise unconstrained strings, blocks of 2^k characters (few rules, about log n parses alive).
constexpr int64_t kChainLength = 4096;

std::string rule_name(const std::string& where) {
  std::string out;
  for (char c : where) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 48) out = out.substr(out.size() - 48);
  return out.empty() ? "root" : out;
}

ByteSet hex_class(uint32_t lo, uint32_t hi) {
  ByteSet set;
  for (uint32_t v = lo; v <= hi; ++v) {
    if (v < 10) {
      set.add(uint8_t('0' + v));
    } else {
      set.add(uint8_t('a' + v - 10));
      set.add(uint8_t('A' + v - 10));
    }
  }
  return set;
}

// Only one word: its code points.
bool single_word(const Dfa& dfa, std::vector<uint32_t>& word) {
  word.clear();
  if (dfa.empty()) return false;
  int32_t s = 0;
  for (int32_t steps = 0; steps <= dfa.n_states(); ++steps) {
    const auto& st = dfa.state(s);
    if (st.accept) return st.edges.empty();
    if (st.edges.size() != 1 || st.edges[0].lo != st.edges[0].hi) return false;
    word.push_back(st.edges[0].lo);
    s = st.edges[0].to;
  }
  return false;
}

// The rules of a walk over states keyed by Key: expand(key, ref) gives a state's alternatives, ref(key)
// the symbol of a state. States are found first and their rules created in reverse, so that rules
// mostly refer to rules created before them: GrammarBuilder::finish then settles in a few passes.
template <typename Key>
RuleId emit_walk(
    GrammarBuilder& builder, const std::string& name, const Key& start,
    const std::function<std::vector<Sequence>(const Key&, const std::function<Symbol(const Key&)>&)>& expand) {
  std::map<Key, size_t> index;
  std::vector<Key> order;
  const std::function<Symbol(const Key&)> discover = [&](const Key& k) {
    if (index.emplace(k, order.size()).second) {
      if (order.size() >= size_t(kMaxStates))
        fail("array or object constraints are too large to compile (more than " + std::to_string(kMaxStates) +
             " states)");
      order.push_back(k);
    }
    return Symbol::of_rule(0);
  };
  discover(start);
  for (size_t i = 0; i < order.size(); ++i) {
    const Key k = order[i];
    expand(k, discover);
  }
  std::vector<RuleId> rules(order.size());
  for (size_t i = order.size(); i-- > 0;) rules[i] = builder.add_rule(name);
  const std::function<Symbol(const Key&)> ref = [&](const Key& k) { return Symbol::of_rule(rules[index.at(k)]); };
  for (size_t i = 0; i < order.size(); ++i) builder.set_alternatives(rules[i], expand(order[i], ref));
  return rules[0];
}

}  // namespace

void Compiler::check_size() {
  if (builder_.n_rules() > kMaxRules)
    fail("schema is too large: its grammar needs more than " + std::to_string(kMaxRules) + " rules");
}

void Compiler::ws(Sequence& seq) {
  if (options_.whitespace != Whitespace::kFlexible || options_.max_whitespace <= 0) return;
  if (ws_rule_ < 0) {
    ByteSet space;
    for (uint8_t b : {uint8_t(' '), uint8_t('\t'), uint8_t('\n'), uint8_t('\r')}) space.add(b);
    ws_rule_ = builder_.repeat({Symbol::of_bytes(space)}, 0, options_.max_whitespace, "ws").rule;
  }
  seq.push_back(Symbol::of_rule(ws_rule_));
}

void Compiler::separator(Sequence& seq, char c) {
  ws(seq);
  seq.push_back(Symbol::of_byte(uint8_t(c)));
  if (options_.whitespace == Whitespace::kSpaced) {
    seq.push_back(Symbol::of_byte(' '));
  } else {
    ws(seq);
  }
}

RuleId Compiler::value_rule(ExprId id) {
  if (size_t(id) >= value_rules_.size()) value_rules_.resize(exprs_.size() + 1, -1);
  if (value_rules_[id] >= 0) return value_rules_[id];
  const DepthGuard guard(depth_);
  const std::string name = id == kAny ? "value" : rule_name(exprs_[id].where);
  const RuleId rule = builder_.add_rule(name);
  value_rules_[id] = rule;
  if (id != kNever) emit_set(normalized(id), rule, name);
  check_size();
  return rule;
}

void Compiler::emit_set(const TypedSet& set_ref, RuleId into, const std::string& name) {
  const TypedSet set = set_ref;  // emitting normalises more expressions; keep our own copy
  std::vector<Sequence> alts;
  if (set.null_ok) alts.push_back(GrammarBuilder::literal("null"));
  if (set.true_ok) alts.push_back(GrammarBuilder::literal("true"));
  if (set.false_ok) alts.push_back(GrammarBuilder::literal("false"));
  if (set.all_numbers)
    alts.push_back({Symbol::of_rule(number_rule(number_full_syntax()))});
  else if (!set.numbers.empty())
    alts.push_back({Symbol::of_rule(number_rule(set.numbers))});
  for (const auto& c : set.strings.clauses) {
    // Long ranges on unconstrained strings as blocks of characters; anything else one automaton.
    const bool is_long = (c.max_len >= 0 ? c.max_len : c.min_len) > kChainLength;
    const bool blocks = c.bounded() && is_long && c.dfa == any_string();
    if (blocks) {
      alts.push_back({Symbol::of_rule(length_rule(c.min_len, c.max_len))});
      continue;
    }
    const Dfa strings = folded(c, "maxLength");
    if (!strings.empty()) alts.push_back({Symbol::of_rule(string_rule(strings))});
  }
  for (const auto& c : set.arrays) alts.push_back({Symbol::of_rule(array_rule(c, name))});
  for (const auto& c : set.objects) alts.push_back({Symbol::of_rule(object_rule(c, name))});
  builder_.set_alternatives(into, std::move(alts));
}

RuleId Compiler::number_rule(const Dfa& all_spellings) {
  // Generation spells each value one way; validation (all_escapes) takes every spelling.
  const Dfa dfa = options_.all_escapes ? all_spellings : all_spellings.intersect(canonical_numbers());
  const std::string key = tagged('n', dfa.fingerprint());
  if (const auto it = dfa_rules_.find(key); it != dfa_rules_.end()) return it->second;
  // Later states first: rules then mostly refer to earlier rules (see emit_walk).
  std::vector<RuleId> rules(size_t(dfa.n_states()));
  for (int32_t s = dfa.n_states() - 1; s >= 0; --s)
    rules[size_t(s)] = builder_.add_rule(s == 0 ? "number" : "number-part");
  for (int32_t s = 0; s < dfa.n_states(); ++s) {
    std::map<int32_t, ByteSet> by_target;
    for (const auto& e : dfa.state(s).edges) by_target[e.to].add_range(uint8_t(e.lo), uint8_t(e.hi));
    std::vector<Sequence> alts;
    for (const auto& [to, bytes] : by_target) alts.push_back({Symbol::of_bytes(bytes), Symbol::of_rule(rules[to])});
    if (dfa.state(s).accept) alts.push_back({});
    builder_.set_alternatives(rules[s], std::move(alts));
  }
  check_size();
  return dfa_rules_[key] = rules[0];
}

RuleId Compiler::string_rule(const Dfa& dfa) {
  const std::string key = tagged('q', dfa.fingerprint());
  if (const auto it = dfa_rules_.find(key); it != dfa_rules_.end()) return it->second;
  Sequence seq{Symbol::of_byte('"')};
  std::vector<uint32_t> word;
  if (single_word(dfa, word)) {
    for (uint32_t c : word) seq.push_back(json_char({{c, c}}));
  } else {
    seq.push_back(Symbol::of_rule(string_content_rule(dfa)));
  }
  seq.push_back(Symbol::of_byte('"'));
  const RuleId rule = builder_.add_rule("string");
  builder_.set_alternatives(rule, {std::move(seq)});
  return dfa_rules_[key] = rule;
}

RuleId Compiler::length_rule(int64_t min, int64_t max) {
  const std::string key = tagged('l', std::to_string(min) + "," + std::to_string(max));
  if (const auto it = dfa_rules_.find(key); it != dfa_rules_.end()) return it->second;
  const Symbol one = json_char(codepoint_alphabet());
  // Up to kUnaryLimit characters, one rule per count: the matcher's token masks for a count are
  // shared with every other count more than a token's length from either bound (see
  // CompiledGrammar), so a long bounded string costs no more than an unbounded one.
  constexpr int64_t kUnaryLimit = 20000;
  if ((max >= 0 ? max : min) <= kUnaryLimit) {
    Sequence unary{Symbol::of_byte('"'), builder_.repeat({one}, min, max, "chars"), Symbol::of_byte('"')};
    const RuleId rule = builder_.add_rule("string");
    builder_.set_alternatives(rule, {std::move(unary)});
    return dfa_rules_[key] = rule;
  }
  // Longer bounds: blocks[k]: exactly 2^k characters, as two blocks of 2^(k-1); a count is the blocks of its binary
  // digits.
  std::vector<Symbol> blocks{one};
  const auto block = [&](int k) {
    while (int(blocks.size()) <= k) {
      const Symbol half = blocks.back();
      blocks.push_back(builder_.choice({{half, half}}, "chars-block"));
    }
    return blocks[size_t(k)];
  };
  Sequence seq{Symbol::of_byte('"')};
  for (int k = 62; k >= 0; --k)
    if ((min >> k) & 1) seq.push_back(block(k));
  if (max < 0) {
    seq.push_back(builder_.repeat({one}, 0, -1, "chars-more"));
  } else if (max > min) {
    // Up to d = max - min more: from the top bit down, a block of 2^k or none, never exceeding d
    // (`tight`: the blocks so far equal d's top bits; `loose`: already below, any blocks).
    const int64_t d = max - min;
    int top = 62;
    while (!((d >> top) & 1)) --top;
    RuleId tight = builder_.add_rule("chars-upto"), loose = builder_.add_rule("chars-upto");
    builder_.set_alternatives(tight, {{}});
    builder_.set_alternatives(loose, {{}});
    for (int k = 0; k <= top; ++k) {
      const RuleId next_tight = builder_.add_rule("chars-upto"), next_loose = builder_.add_rule("chars-upto");
      builder_.set_alternatives(next_loose, {{block(k), Symbol::of_rule(loose)}, {Symbol::of_rule(loose)}});
      if ((d >> k) & 1) {
        builder_.set_alternatives(next_tight, {{block(k), Symbol::of_rule(tight)}, {Symbol::of_rule(loose)}});
      } else {
        builder_.set_alternatives(next_tight, {{Symbol::of_rule(tight)}});
      }
      tight = next_tight, loose = next_loose;
    }
    seq.push_back(Symbol::of_rule(tight));
  }
  seq.push_back(Symbol::of_byte('"'));
  const RuleId rule = builder_.add_rule("string");
  builder_.set_alternatives(rule, {std::move(seq)});
  return dfa_rules_[key] = rule;
}

RuleId Compiler::string_content_rule(const Dfa& dfa) {
  const std::string key = tagged('s', dfa.fingerprint());
  if (const auto it = dfa_rules_.find(key); it != dfa_rules_.end()) return it->second;
  std::vector<RuleId> rules(size_t(dfa.n_states()));
  for (int32_t s = dfa.n_states() - 1; s >= 0; --s) rules[size_t(s)] = builder_.add_rule("chars");
  check_size();
  for (int32_t s = 0; s < dfa.n_states(); ++s) {
    std::map<int32_t, std::vector<std::pair<uint32_t, uint32_t>>> by_target;
    for (const auto& e : dfa.state(s).edges) by_target[e.to].emplace_back(e.lo, e.hi);
    std::vector<Sequence> alts;
    for (const auto& [to, ranges] : by_target) alts.push_back({json_char(ranges), Symbol::of_rule(rules[to])});
    if (dfa.state(s).accept) alts.push_back({});
    builder_.set_alternatives(rules[s], std::move(alts));
  }
  check_size();
  return dfa_rules_[key] = rules[0];
}

Symbol Compiler::hex_digits(uint32_t lo, uint32_t hi, int n) {
  if (n == 1) return Symbol::of_bytes(hex_class(lo, hi));
  const std::string key = fmt::format("{}:{:x}-{:x}", n, lo, hi);
  if (const auto it = hex_rules_.find(key); it != hex_rules_.end()) return it->second;
  const uint32_t unit = uint32_t(1) << (4 * (n - 1));
  const uint32_t top_lo = lo / unit, top_hi = hi / unit;
  std::vector<Sequence> alts;
  if (top_lo == top_hi) {
    alts.push_back({Symbol::of_bytes(hex_class(top_lo, top_lo)), hex_digits(lo % unit, hi % unit, n - 1)});
  } else {
    // A partial first block, whole blocks, a partial last block.
    uint32_t whole_lo = top_lo, whole_hi = top_hi;
    if (lo % unit != 0) {
      alts.push_back({Symbol::of_bytes(hex_class(top_lo, top_lo)), hex_digits(lo % unit, unit - 1, n - 1)});
      ++whole_lo;
    }
    const bool partial_last = hi % unit != unit - 1;
    if (partial_last) --whole_hi;
    if (whole_lo <= whole_hi)
      alts.push_back({Symbol::of_bytes(hex_class(whole_lo, whole_hi)), hex_digits(0, unit - 1, n - 1)});
    if (partial_last) alts.push_back({Symbol::of_bytes(hex_class(top_hi, top_hi)), hex_digits(0, hi % unit, n - 1)});
  }
  const Symbol sym = builder_.choice(std::move(alts), "hex");
  return hex_rules_[key] = sym;
}

Symbol Compiler::json_char(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string key;
  for (const auto& [lo, hi] : ranges) key += fmt::format("{:x}-{:x},", lo, hi);
  if (const auto it = char_rules_.find(key); it != char_rules_.end()) return it->second;
  CodepointSet set;
  for (const auto& [lo, hi] : ranges) set.add_range(lo, hi);
  std::vector<Sequence> alts;
  CodepointSet raw = set.intersect(CodepointSet::range(0x20, kMaxCodepoint));
  CodepointSet specials;
  specials.add('"');
  specials.add('\\');
  raw = raw.intersect(specials.complement());
  if (!raw.empty()) alts.push_back({builder_.utf8_class(raw)});
  if (set.contains('"')) alts.push_back(GrammarBuilder::literal("\\\""));
  if (set.contains('\\')) alts.push_back(GrammarBuilder::literal("\\\\"));
  static constexpr std::pair<uint32_t, char> kShort[] = {{8, 'b'}, {12, 'f'}, {10, 'n'}, {13, 'r'}, {9, 't'}};
  for (const auto& [cp, letter] : kShort)
    if (set.contains(cp)) alts.push_back(GrammarBuilder::literal(std::string{'\\', letter}));
  // Generation spells each character one way where JSON lets it (raw, or the short escape), so a
  // fixed key is forced text and the model never wanders into \u0061 for 'a'; \uXXXX is kept for
  // the controls that have no short escape. (JsonSchemaOptions::all_escapes accepts every spelling.)
  if (!options_.all_escapes) {
    const CodepointSet controls = set.intersect(CodepointSet::range(0, 0x1F));
    for (const auto& [lo, hi] : controls.ranges()) {
      Sequence seq = GrammarBuilder::literal("\\u");
      seq.push_back(hex_digits(lo, hi, 4));
      alts.push_back(std::move(seq));
    }
    const Symbol sym = builder_.choice(std::move(alts), "char");
    return char_rules_[key] = sym;
  }
  if (set.contains('/')) alts.push_back(GrammarBuilder::literal("\\/"));
  // \uXXXX for every character; astral ones as a surrogate pair.
  const auto escape = [&](uint32_t lo, uint32_t hi) {
    Sequence seq = GrammarBuilder::literal("\\u");
    seq.push_back(hex_digits(lo, hi, 4));
    return seq;
  };
  for (const auto& [lo, hi] : set.ranges()) {
    if (lo <= 0xFFFF) alts.push_back(escape(lo, std::min<uint32_t>(hi, 0xFFFF)));
    if (hi < 0x10000) continue;
    const uint32_t a = std::max<uint32_t>(lo, 0x10000) - 0x10000, b = hi - 0x10000;
    const uint32_t ha = 0xD800 + (a >> 10), la = 0xDC00 + (a & 0x3FF);
    const uint32_t hb = 0xD800 + (b >> 10), lb = 0xDC00 + (b & 0x3FF);
    const auto pair = [&](uint32_t h1, uint32_t h2, uint32_t l1, uint32_t l2) {
      Sequence seq = escape(h1, h2);
      GrammarBuilder::append(seq, escape(l1, l2));
      alts.push_back(std::move(seq));
    };
    if (ha == hb) {
      pair(ha, ha, la, lb);
    } else {
      pair(ha, ha, la, 0xDFFF);
      if (hb - ha > 1) pair(ha + 1, hb - 1, 0xDC00, 0xDFFF);
      pair(hb, hb, 0xDC00, lb);
    }
  }
  const Symbol sym = builder_.choice(std::move(alts), "char");
  return char_rules_[key] = sym;
}

RuleId Compiler::array_rule(const ArrayClause& c, const std::string& name) {
  if (c.contains.size() > kMaxExists)
    fail("more than 3 'contains' constraints on one array (negated 'items' count too) are not supported");
  const size_t n_atoms = c.contains.size();
  // Positions from `horizon` on behave alike when the length is unbounded: the walk loops there.
  int64_t horizon = std::max<int64_t>(int64_t(c.prefix.size()), c.min_items);
  for (const auto& k : c.contains) horizon = std::max(horizon, k.from);
  horizon = std::max<int64_t>(horizon, 1);  // position 0 has no separator before it
  if (c.max_items >= 0) horizon = c.max_items;
  // Counts per atom: exact up to max_count when bounded, else saturating at min_count.
  std::vector<int64_t> caps;
  int64_t n_counts = 1;
  for (const auto& k : c.contains) {
    caps.push_back(k.max_count >= 0 ? k.max_count : k.min_count);
    n_counts *= caps.back() + 1;
    if (n_counts > kMaxStates) fail("'minContains' / 'maxContains' counts are too large to compile");
  }
  if ((horizon + 1) * n_counts > kMaxStates) fail("'minItems' / 'maxItems' / 'prefixItems' are too large to compile");

  using Key = std::pair<int64_t, std::vector<int64_t>>;  // (position, counts)
  const auto expand = [&](const Key& key, const std::function<Symbol(const Key&)>& state) {
    const auto& [i, counts] = key;
    std::vector<Sequence> alts;
    bool counts_ok = true;
    for (size_t j = 0; j < n_atoms; ++j) counts_ok = counts_ok && counts[j] >= c.contains[j].min_count;
    if (i >= c.min_items && counts_ok) {
      Sequence close;
      if (i > 0) ws(close);
      close.push_back(Symbol::of_byte(']'));
      alts.push_back(std::move(close));
    }
    if (c.max_items >= 0 && i >= c.max_items) return alts;
    const int64_t next_i = c.max_items < 0 ? std::min(i + 1, horizon) : i + 1;
    const ExprId item = c.item(size_t(i));
    for (size_t mask = 0; mask < (size_t{1} << n_atoms); ++mask) {
      std::vector<ExprId> parts{item};
      std::vector<int64_t> next = counts;
      bool possible = true;
      for (size_t j = 0; j < n_atoms && possible; ++j) {
        const auto& k = c.contains[j];
        const bool in = mask & (size_t{1} << j);
        if (i < k.from) {
          possible = !in;
        } else if (in) {
          parts.push_back(k.schema);
          possible = k.max_count < 0 || counts[j] + 1 <= k.max_count;
          next[j] = k.max_count >= 0 ? counts[j] + 1 : std::min(counts[j] + 1, caps[j]);
        } else if (k.max_count >= 0) {
          parts.push_back(not_expr(k.schema));  // counted exactly: an item outside must be outside
        }
      }
      if (!possible) continue;
      const ExprId value = and_expr(parts);
      if (value == kNever) continue;
      Sequence seq;
      if (i > 0) separator(seq, ',');
      seq.push_back(Symbol::of_rule(value_rule(value)));
      seq.push_back(state({next_i, next}));
      alts.push_back(std::move(seq));
    }
    return alts;
  };
  const RuleId items = emit_walk<Key>(builder_, name + "-items", {0, std::vector<int64_t>(n_atoms, 0)}, expand);
  check_size();
  Sequence open{Symbol::of_byte('[')};
  ws(open);
  open.push_back(Symbol::of_rule(items));
  const RuleId start = builder_.add_rule(name + "-array");
  builder_.set_alternatives(start, {std::move(open)});
  return start;
}

RuleId Compiler::object_rule(const ObjectClause& c, const std::string& name) {
  if (c.exists.size() > kMaxExists)
    fail(
        "'not' / 'oneOf' / 'if' over object members needing more than 3 existence constraints at once is not "
        "supported");
  const size_t n_atoms = c.exists.size();
  const size_t all_atoms = (size_t{1} << n_atoms) - 1;
  // Named members in the order their names first appear in the schema document; the others anywhere.
  std::vector<const ObjectClause::Prop*> props;
  for (const auto& p : c.props) {
    if (p.value == kNever) {
      if (p.required) return builder_.add_rule(name + "-none");  // cannot be satisfied
      continue;
    }
    props.push_back(&p);
  }
  std::stable_sort(props.begin(), props.end(), [&](const ObjectClause::Prop* a, const ObjectClause::Prop* b) {
    const auto ra = rank_.find(a->name), rb = rank_.find(b->name);
    const size_t x = ra == rank_.end() ? SIZE_MAX : ra->second, y = rb == rank_.end() ? SIZE_MAX : rb->second;
    return x < y;
  });
  const int64_t cap = c.max_props >= 0 ? c.max_props : std::max<int64_t>(c.min_props, 1);
  if (int64_t(props.size() + 1) * (cap + 1) * int64_t(all_atoms + 1) > kMaxStates)
    fail("'minProperties' / 'maxProperties' (with these properties) are too large to compile");

  const auto member = [&](Sequence& seq, int64_t count, Symbol key, ExprId value) {
    if (count > 0) separator(seq, ',');
    seq.push_back(key);
    separator(seq, ':');
    seq.push_back(Symbol::of_rule(value_rule(value)));
  };
  // Member keys and values, worked out once: named members, and unnamed ones by region, each for every
  // subset of the existence constraints it can meet.
  struct Member {
    Symbol key;
    ExprId value;
    size_t meets;
  };
  std::vector<std::vector<Member>> named(props.size());
  for (size_t i = 0; i < props.size(); ++i) {
    const auto cps = codepoints_of(props[i]->name);
    const Symbol key = Symbol::of_rule(string_rule(exact_string(props[i]->name)));
    for (size_t s = 0; s <= all_atoms; ++s) {
      std::vector<ExprId> parts{props[i]->value};
      bool fits = true;
      for (size_t j = 0; j < n_atoms && fits; ++j)
        if (s & (size_t{1} << j)) fits = c.exists[j].keys.accepts(cps), parts.push_back(c.exists[j].value);
      const ExprId value = fits ? and_expr(parts) : kNever;
      if (value != kNever) named[i].push_back({key, value, s});
    }
  }
  std::vector<Member> unnamed;
  for (const auto& r : c.regions) {
    for (size_t s = 0; s <= all_atoms; ++s) {
      Dfa keys = r.keys;
      std::vector<ExprId> parts{r.value};
      for (size_t j = 0; j < n_atoms && !keys.empty(); ++j) {
        if (!(s & (size_t{1} << j))) continue;
        keys = keys.intersect(c.exists[j].keys);
        parts.push_back(c.exists[j].value);
      }
      if (keys.empty()) continue;
      const ExprId value = and_expr(parts);
      if (value != kNever) unnamed.push_back({Symbol::of_rule(string_rule(keys)), value, s});
    }
  }
  check_size();

  using Key = std::tuple<size_t, int64_t, size_t>;  // (next named member, members so far, existence met)
  const auto expand = [&](const Key& key, const std::function<Symbol(const Key&)>& state_of) {
    const auto [i, count, mask] = key;
    const auto state = [&](size_t at, int64_t n, size_t m) {
      return state_of({at, c.max_props < 0 ? std::min(n, cap) : n, m});
    };
    std::vector<Sequence> alts;
    const bool room = c.max_props < 0 || count < c.max_props;
    if (i < props.size()) {
      if (room) {
        for (const auto& m : named[i]) {
          Sequence seq;
          member(seq, count, m.key, m.value);
          seq.push_back(state(i + 1, count + 1, mask | m.meets));
          alts.push_back(std::move(seq));
        }
      }
      if (!props[i]->required) alts.push_back({state(i + 1, count, mask)});
    } else if (count >= c.min_props && mask == all_atoms) {
      Sequence close;
      if (count > 0) ws(close);
      close.push_back(Symbol::of_byte('}'));
      alts.push_back(std::move(close));
    }
    // Unnamed members may come anywhere between the named ones.
    if (room) {
      for (const auto& m : unnamed) {
        Sequence seq;
        member(seq, count, m.key, m.value);
        seq.push_back(state(i, count + 1, mask | m.meets));
        alts.push_back(std::move(seq));
      }
    }
    return alts;
  };
  const RuleId members = emit_walk<Key>(builder_, name + "-members", {0, 0, 0}, expand);
  check_size();
  Sequence open{Symbol::of_byte('{')};
  ws(open);
  open.push_back(Symbol::of_rule(members));
  const RuleId start = builder_.add_rule(name + "-object");
  builder_.set_alternatives(start, {std::move(open)});
  return start;
}

}  // namespace ridge::grammar::jsonschema
