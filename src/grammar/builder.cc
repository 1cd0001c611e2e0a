#include "grammar/builder.h"

#include <algorithm>

#include <fmt/format.h>

namespace ridge::grammar {

namespace {

constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

int utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

std::vector<uint8_t> utf8_bytes(uint32_t cp) {
  switch (utf8_length(cp)) {
    case 1: return {static_cast<uint8_t>(cp)};
    case 2: return {static_cast<uint8_t>(0xC0 | (cp >> 6)), static_cast<uint8_t>(0x80 | (cp & 0x3F))};
    case 3:
      return {static_cast<uint8_t>(0xE0 | (cp >> 12)), static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)),
              static_cast<uint8_t>(0x80 | (cp & 0x3F))};
    default:
      return {static_cast<uint8_t>(0xF0 | (cp >> 18)), static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F)),
              static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)), static_cast<uint8_t>(0x80 | (cp & 0x3F))};
  }
}

// [lo, hi] of one encoded length, as sequences of byte ranges (the classic UTF-8 range split: cut
// where trailing continuation bytes do not span their full 0x80..0xBF).
void split_same_length(uint32_t lo, uint32_t hi, std::vector<Sequence>& out) {
  const int n = utf8_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_same_length(lo, lo | m, out);
        split_same_length((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_same_length(lo, (hi & ~m) - 1, out);
        split_same_length(hi & ~m, hi, out);
        return;
      }
    }
  }
  const auto a = utf8_bytes(lo), b = utf8_bytes(hi);
  Sequence seq;
  for (size_t k = 0; k < a.size(); ++k) seq.push_back(Symbol::of_bytes(ByteSet::range(a[k], b[k])));
  out.push_back(std::move(seq));
}

void split_range(uint32_t lo, uint32_t hi, std::vector<Sequence>& out) {
  for (uint32_t edge : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= edge && hi > edge) {
      split_range(lo, edge, out);
      split_range(edge + 1, hi, out);
      return;
    }
  }
  split_same_length(lo, hi, out);
}

std::string set_key(const CodepointSet& set, char kind) {
  std::string key(1, kind);
  for (auto [lo, hi] : set.ranges()) key += fmt::format("{:x}-{:x},", lo, hi);
  return key;
}

}  // namespace

CodepointSet CodepointSet::range(uint32_t lo, uint32_t hi) {
  CodepointSet s;
  s.add_range(lo, hi);
  return s;
}

CodepointSet CodepointSet::any() {
  CodepointSet s;
  s.add_range(0, kSurrogateLo - 1);
  s.add_range(kSurrogateHi + 1, kMaxCodepoint);
  return s;
}

void CodepointSet::add_range(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  hi = std::min(hi, kMaxCodepoint);
  // Surrogates are not scalar values: cut them out.
  if (lo <= kSurrogateHi && hi >= kSurrogateLo) {
    if (lo < kSurrogateLo) add_range(lo, kSurrogateLo - 1);
    if (hi > kSurrogateHi) add_range(kSurrogateHi + 1, hi);
    return;
  }
  ranges_.emplace_back(lo, hi);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (auto [a, b] : ranges_) {
    if (!merged.empty() && a <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, b);
    else
      merged.emplace_back(a, b);
  }
  ranges_ = std::move(merged);
}

void CodepointSet::add(const CodepointSet& other) {
  for (auto [lo, hi] : other.ranges_) add_range(lo, hi);
}

CodepointSet CodepointSet::complement() const {
  CodepointSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : ranges_) {
    if (lo > next) out.add_range(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodepoint) out.add_range(next, kMaxCodepoint);
  return out;
}

CodepointSet CodepointSet::intersect(const CodepointSet& other) const {
  CodepointSet out;
  for (auto [a, b] : ranges_)
    for (auto [c, d] : other.ranges_)
      if (std::max(a, c) <= std::min(b, d)) out.add_range(std::max(a, c), std::min(b, d));
  return out;
}

bool CodepointSet::contains(uint32_t cp) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(cp, kMaxCodepoint + 1));
  return it != ranges_.begin() && std::prev(it)->second >= cp;
}

RuleId GrammarBuilder::add_rule(std::string_view name_hint) {
  std::string name(name_hint.empty() ? "rule" : name_hint);
  int& uses = name_uses_[name];
  if (uses > 0 || by_name_.count(name)) name = fmt::format("{}-{}", name, uses);
  while (by_name_.count(name)) name = fmt::format("{}-{}", name_hint, ++uses);
  ++uses;
  const RuleId id = n_rules();
  grammar_.rules.push_back(Rule{name, {}});
  by_name_[name] = id;
  return id;
}

RuleId GrammarBuilder::named_rule(std::string_view name) {
  auto it = by_name_.find(std::string(name));
  if (it != by_name_.end()) return it->second;
  const RuleId id = n_rules();
  grammar_.rules.push_back(Rule{std::string(name), {}});
  by_name_[std::string(name)] = id;
  ++name_uses_[std::string(name)];
  return id;
}

bool GrammarBuilder::has_named_rule(std::string_view name) const { return by_name_.count(std::string(name)) > 0; }

RuleId GrammarBuilder::embed(const Grammar& grammar, std::string_view prefix) {
  std::vector<RuleId> ids;
  ids.reserve(grammar.rules.size());
  for (const Rule& rule : grammar.rules) ids.push_back(add_rule(fmt::format("{}{}", prefix, rule.name)));
  for (size_t i = 0; i < grammar.rules.size(); ++i) {
    std::vector<Sequence> alternatives = grammar.rules[i].alternatives;
    for (Sequence& seq : alternatives)
      for (Symbol& sym : seq)
        if (sym.kind == Symbol::Kind::kRule) sym.rule = ids.at(size_t(sym.rule));
    set_alternatives(ids[i], std::move(alternatives));
  }
  return ids.at(size_t(grammar.root));
}

void GrammarBuilder::add_alternative(RuleId rule, Sequence alternative) {
  grammar_.rules.at(rule).alternatives.push_back(std::move(alternative));
}

void GrammarBuilder::set_alternatives(RuleId rule, std::vector<Sequence> alternatives) {
  grammar_.rules.at(rule).alternatives = std::move(alternatives);
}

Sequence GrammarBuilder::literal(std::string_view text) {
  Sequence seq;
  seq.reserve(text.size());
  for (char c : text) seq.push_back(Symbol::of_byte(static_cast<uint8_t>(c)));
  return seq;
}

Symbol GrammarBuilder::utf8_class(const CodepointSet& set) {
  if (set.empty()) throw GrammarError("character class matches no character");
  if (set.ranges().size() == 1 && set.ranges()[0].second < 0x80)
    return Symbol::of_bytes(ByteSet::range(static_cast<uint8_t>(set.ranges()[0].first),
                                           static_cast<uint8_t>(set.ranges()[0].second)));
  const std::string key = set_key(set, 'u');
  if (auto it = class_rules_.find(key); it != class_rules_.end()) return Symbol::of_rule(it->second);
  std::vector<Sequence> alternatives;
  ByteSet ascii;
  for (auto [lo, hi] : set.ranges()) {
    if (lo < 0x80) {
      ascii.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(std::min<uint32_t>(hi, 0x7F)));
      if (hi < 0x80) continue;
      lo = 0x80;
    }
    split_range(lo, hi, alternatives);
  }
  if (!ascii.empty()) alternatives.insert(alternatives.begin(), Sequence{Symbol::of_bytes(ascii)});
  const RuleId rule = add_rule("char");
  set_alternatives(rule, std::move(alternatives));
  class_rules_[key] = rule;
  return Symbol::of_rule(rule);
}

Symbol GrammarBuilder::json_char_class(const CodepointSet& set) {
  if (set.empty()) throw GrammarError("character class matches no character");
  const std::string key = set_key(set, 'j');
  if (auto it = class_rules_.find(key); it != class_rules_.end()) return Symbol::of_rule(it->second);
  std::vector<Sequence> alternatives;
  CodepointSet raw = set.intersect(CodepointSet::range(0x20, kMaxCodepoint));
  CodepointSet specials;
  specials.add('"');
  specials.add('\\');
  raw = raw.intersect(specials.complement());
  if (!raw.empty()) alternatives.push_back({utf8_class(raw)});
  if (set.contains('"')) alternatives.push_back(literal("\\\""));
  if (set.contains('\\')) alternatives.push_back(literal("\\\\"));
  if (set.contains('/')) alternatives.push_back(literal("\\/"));
  static constexpr std::pair<uint32_t, char> kShort[] = {{8, 'b'}, {12, 'f'}, {10, 'n'}, {13, 'r'}, {9, 't'}};
  for (auto [cp, letter] : kShort)
    if (set.contains(cp)) alternatives.push_back(literal(std::string{'\\', letter}));
  for (uint32_t cp = 0; cp < 0x20; ++cp) {
    if (!set.contains(cp)) continue;
    Sequence seq = literal("\\u00");
    const char* hex = "0123456789abcdef";
    seq.push_back(Symbol::of_byte(static_cast<uint8_t>(hex[cp >> 4])));
    ByteSet low = ByteSet::of(static_cast<uint8_t>(hex[cp & 15]));
    low.add(static_cast<uint8_t>(std::toupper(hex[cp & 15])));
    seq.push_back(Symbol::of_bytes(low));
    alternatives.push_back(std::move(seq));
  }
  const RuleId rule = add_rule("json-char");
  set_alternatives(rule, std::move(alternatives));
  class_rules_[key] = rule;
  return Symbol::of_rule(rule);
}

Symbol GrammarBuilder::choice(std::vector<Sequence> alternatives, std::string_view name_hint) {
  const RuleId rule = add_rule(name_hint);
  set_alternatives(rule, std::move(alternatives));
  return Symbol::of_rule(rule);
}

Symbol GrammarBuilder::repeat(const Sequence& item, int64_t min, int64_t max, std::string_view name_hint) {
  if (min < 0 || (max >= 0 && max < min)) throw GrammarError(fmt::format("bad repetition {{{},{}}}", min, max));
  constexpr int64_t kMaxUnrolled = 100000;
  const int64_t unrolled = (max >= 0 ? max : min + 1) * static_cast<int64_t>(std::max<size_t>(item.size(), 1));
  if (unrolled > kMaxUnrolled)
    throw GrammarError(fmt::format("repetition {{{},{}}} is too large (over {} symbols unrolled)", min,
                                   max < 0 ? std::string() : std::to_string(max), kMaxUnrolled));
  // The tail after the required copies: item* as `tail ::= item tail | ""`, or up to k more copies
  // as nested optionals `opt_k ::= item opt_{k-1} | ""` (unambiguous, right-recursive).
  Sequence tail;
  if (max < 0) {
    const RuleId star = add_rule(fmt::format("{}-star", name_hint));
    Sequence again = item;
    again.push_back(Symbol::of_rule(star));
    set_alternatives(star, {std::move(again), Sequence{}});
    tail.push_back(Symbol::of_rule(star));
  } else if (max > min) {
    RuleId inner = -1;
    for (int64_t k = 0; k < max - min; ++k) {
      const RuleId opt = add_rule(fmt::format("{}-opt", name_hint));
      Sequence more = item;
      if (inner >= 0) more.push_back(Symbol::of_rule(inner));
      set_alternatives(opt, {std::move(more), Sequence{}});
      inner = opt;
    }
    tail.push_back(Symbol::of_rule(inner));
  }
  Sequence body;
  for (int64_t k = 0; k < min; ++k) append(body, item);
  append(body, tail);
  const RuleId rule = add_rule(name_hint);
  set_alternatives(rule, {std::move(body)});
  return Symbol::of_rule(rule);
}

Grammar GrammarBuilder::finish(RuleId root) {
  const int32_t n = n_rules();
  if (root < 0 || root >= n) throw GrammarError("grammar has no root rule");
  for (const Rule& rule : grammar_.rules)
    for (const Sequence& alt : rule.alternatives)
      for (const Symbol& sym : alt)
        if (sym.kind == Symbol::Kind::kRule && (sym.rule < 0 || sym.rule >= n))
          throw GrammarError(fmt::format("rule '{}' refers to a rule that does not exist", rule.name));
  // Productive rules, by fixpoint; alternatives that use an unproductive rule or an empty byte set
  // can never match and are dropped.
  std::vector<bool> productive(n, false);
  auto symbol_ok = [&](const Symbol& s) {
    return s.kind == Symbol::Kind::kBytes ? !s.bytes.empty() : productive[s.rule];
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (RuleId r = 0; r < n; ++r) {
      if (productive[r]) continue;
      for (const Sequence& alt : grammar_.rules[r].alternatives)
        if (std::all_of(alt.begin(), alt.end(), symbol_ok)) {
          productive[r] = changed = true;
          break;
        }
    }
  }
  if (!productive[root]) throw GrammarError("grammar is unsatisfiable: it matches no text");
  for (Rule& rule : grammar_.rules)
    std::erase_if(rule.alternatives, [&](const Sequence& alt) { return !std::all_of(alt.begin(), alt.end(), symbol_ok); });
  grammar_.root = root;
  Grammar out = std::move(grammar_);
  grammar_ = Grammar{};
  by_name_.clear();
  name_uses_.clear();
  class_rules_.clear();
  return out;
}

}  // namespace ridge::grammar
