// String automata over the code points of a string value: exact strings, lengths (counted in code
// points), patterns (the regex module's parser, compiled here to an automaton so that patterns can be
// intersected with lengths, enums, other patterns and their complements), and formats.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "grammar/json_schema_compiler.h"
#include "grammar/regex_ast.h"
#include "grammar/utf8_text.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr size_t kMaxNfaStates = 200000;

// A Thompson automaton: epsilon moves and code point range moves.
class Nfa {
 public:
  struct State {
    std::vector<int32_t> eps;
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, int32_t>> moves;
  };
  int32_t add() {
    if (states_.size() >= kMaxNfaStates) fail("pattern is too large to compile (more than 200000 automaton states)");
    states_.emplace_back();
    return int32_t(states_.size() - 1);
  }
  void eps(int32_t from, int32_t to) { states_[from].eps.push_back(to); }
  void move(int32_t from, uint32_t lo, uint32_t hi, int32_t to) { states_[from].moves.push_back({{lo, hi}, to}); }

  // A fragment for `node` between fresh states; returns (start, end).
  std::pair<int32_t, int32_t> build(const regex_ast::Node& node) {
    using Kind = regex_ast::Node::Kind;
    const int32_t s = add(), e = add();
    switch (node.kind) {
      case Kind::kEmpty:
        eps(s, e);
        break;
      case Kind::kNothing:
        break;
      case Kind::kChars:
        for (const auto& [lo, hi] : node.chars.ranges()) move(s, lo, hi, e);
        break;
      case Kind::kSequence: {
        int32_t at = s;
        for (const auto& child : node.children) {
          const auto [cs, ce] = build(child);
          eps(at, cs);
          at = ce;
        }
        eps(at, e);
        break;
      }
      case Kind::kAlternation:
        for (const auto& child : node.children) {
          const auto [cs, ce] = build(child);
          eps(s, cs);
          eps(ce, e);
        }
        break;
      case Kind::kRepeat: {
        int32_t at = s;
        for (int64_t k = 0; k < node.min; ++k) {
          const auto [cs, ce] = build(node.children[0]);
          eps(at, cs);
          at = ce;
        }
        if (node.max < 0) {
          const auto [cs, ce] = build(node.children[0]);
          eps(at, cs);
          eps(ce, at);
        } else {
          for (int64_t k = node.min; k < node.max; ++k) {
            const auto [cs, ce] = build(node.children[0]);
            eps(at, cs);
            eps(at, e);
            at = ce;
          }
        }
        eps(at, e);
        break;
      }
    }
    return {s, e};
  }

  // Any code points: a self-loop state between `from` and `to`.
  void any_loop(int32_t from, int32_t to) {
    const int32_t loop = add();
    eps(from, loop);
    for (const auto& [lo, hi] : codepoint_alphabet()) move(loop, lo, hi, loop);
    eps(loop, to);
  }

  Dfa determinize(int32_t start, int32_t accept) const {
    Dfa out;
    std::map<std::vector<int32_t>, int32_t> ids;
    std::vector<std::vector<int32_t>> queue;
    const auto closure = [&](std::vector<int32_t> set) {
      std::vector<char> seen(states_.size(), 0);
      std::vector<int32_t> stack = set;
      for (int32_t s : set) seen[s] = 1;
      while (!stack.empty()) {
        const int32_t s = stack.back();
        stack.pop_back();
        for (int32_t t : states_[s].eps)
          if (!seen[t]) seen[t] = 1, set.push_back(t), stack.push_back(t);
      }
      // Only states with moves (and the accepting one) tell sets apart.
      std::erase_if(set, [&](int32_t s) { return states_[s].moves.empty() && s != accept; });
      std::sort(set.begin(), set.end());
      return set;
    };
    const auto id_of = [&](std::vector<int32_t> set) {
      auto [it, fresh] = ids.emplace(set, out.n_states());
      if (fresh) {
        if (out.n_states() >= kMaxDfaStates) fail("pattern is too complex (its automaton has too many states)");
        out.add_state(std::binary_search(set.begin(), set.end(), accept));
        queue.push_back(std::move(set));
      }
      return it->second;
    };
    id_of(closure({start}));
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      const std::vector<int32_t> set = queue[qi];
      std::vector<uint64_t> cuts;
      for (int32_t s : set)
        for (const auto& [range, to] : states_[s].moves)
          cuts.push_back(range.first), cuts.push_back(uint64_t(range.second) + 1);
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      for (size_t k = 0; k + 1 < cuts.size(); ++k) {
        const uint64_t lo = cuts[k], hi = cuts[k + 1] - 1;
        std::vector<int32_t> targets;
        for (int32_t s : set)
          for (const auto& [range, to] : states_[s].moves)
            if (range.first <= lo && hi <= range.second) targets.push_back(to);
        if (targets.empty()) continue;
        std::sort(targets.begin(), targets.end());
        targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
        const int32_t to = id_of(closure(std::move(targets)));
        out.add_edge(int32_t(qi), uint32_t(lo), uint32_t(hi), to);
      }
    }
    out.normalize();
    return out;
  }

 private:
  std::vector<State> states_;
};

// Formats as anchored patterns (RFC 3339 dates and times, RFC 4122 UUIDs, dotted-quad IPv4, ...):
// what `format` asserts when the options ask for it.
const std::map<std::string, std::string>& format_patterns() {
  static const std::map<std::string, std::string> formats = [] {
    const std::string leap = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
    const std::string date =
        "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|"
        "02-(?:0[1-9]|1[0-9]|2[0-8]))|" +
        leap + "-02-29)";
    const std::string offset = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    // A leap second only where it is one: 23:59:60 in UTC.
    const std::string time = "(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?" + offset +
                             "|23:59:60(?:\\.[0-9]+)?(?:[Zz]|[+-]00:00))";
    const std::string octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    const std::string label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
    const std::string atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
    const std::string hex = "[0-9A-Fa-f]";
    // RFC 3339 appendix A: date parts in order, then a time part, or weeks alone.
    const std::string dur_time = "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)";
    const std::string duration = "^P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)(?:" + dur_time +
                                 ")?|" + dur_time + "|[0-9]+W)$";
    // RFC 3986: scheme ":" hier-part ["?" query] ["#" fragment]; brackets only around an IP literal host.
    const std::string pct = "%" + hex + hex;
    const std::string unreserved_sub = "[A-Za-z0-9._~!$&'()*+,;=-]";
    const std::string pchar = "(?:" + unreserved_sub + "|[:@]|" + pct + ")";
    const std::string authority = "(?:(?:" + unreserved_sub + "|:|" + pct + ")*@)?(?:\\[[0-9A-Fa-f:.]+\\]|(?:" +
                                  unreserved_sub + "|" + pct + ")*)(?::[0-9]*)?";
    const std::string hier = "(?://" + authority + "(?:/" + pchar + "*)*|(?:" + pchar + "|/)*)";
    const std::string tail = "(?:\\?(?:" + pchar + "|[/?])*)?(?:#(?:" + pchar + "|[/?])*)?";
    const std::string uri = "^[A-Za-z][A-Za-z0-9+.-]*:" + hier + tail + "$";
    return std::map<std::string, std::string>{
        {"date", "^" + date + "$"},
        {"time", "^" + time + "$"},
        {"date-time", "^" + date + "[Tt]" + time + "$"},
        {"ipv4", "^" + octet + "(?:\\." + octet + "){3}$"},
        {"uuid", "^" + hex + "{8}-" + hex + "{4}-" + hex + "{4}-" + hex + "{4}-" + hex + "{12}$"},
        {"email", "^" + atom + "(?:\\." + atom + ")*@" + label + "(?:\\." + label + ")*$"},
        {"hostname", "^" + label + "(?:\\." + label + ")*$"},
        {"uri", uri},
        {"json-pointer", "^(?:/(?:[^~/]|~[01])*)*$"},
        {"duration", duration},
    };
  }();
  return formats;
}

}  // namespace

const Dfa::Ranges& codepoint_alphabet() {
  static const Dfa::Ranges ranges = CodepointSet::any().ranges();
  return ranges;
}

const Dfa& any_string() {
  static const Dfa dfa = Dfa::star(codepoint_alphabet());
  return dfa;
}

std::vector<uint32_t> codepoints_of(const std::string& utf8) {
  std::vector<uint32_t> out;
  for (size_t at = 0; at < utf8.size();) {
    uint32_t cp;
    if (!utf8_text::decode(utf8, at, cp)) fail("string is not valid UTF-8");
    out.push_back(cp);
  }
  return out;
}

Dfa exact_string(const std::string& utf8) { return Dfa::word(codepoints_of(utf8)); }

namespace {

// The trie of `words`: state 0 the root; `terminal[s]` when a word ends at s.
Dfa trie_of(const std::vector<std::string>& words, std::vector<char>& terminal) {
  Dfa d;
  d.add_state(false);
  terminal.assign(1, 0);
  std::vector<std::unordered_map<uint32_t, int32_t>> children(1);
  for (const auto& w : words) {
    int32_t s = 0;
    for (uint32_t c : codepoints_of(w)) {
      auto [it, fresh] = children[s].emplace(c, -1);
      if (fresh) {
        it->second = d.add_state(false);
        children.emplace_back();
        terminal.push_back(0);
        d.add_edge(s, c, c, it->second);
      }
      s = it->second;
    }
    terminal[s] = 1;
  }
  return d;
}

}  // namespace

Dfa string_set(const std::vector<std::string>& words) {
  std::vector<char> terminal;
  Dfa d = trie_of(words, terminal);
  for (int32_t s = 0; s < d.n_states(); ++s) d.set_accept(s, terminal[s]);
  return std::move(d.normalize());
}

Dfa strings_except(const std::vector<std::string>& words) {
  if (words.empty()) return any_string();
  std::vector<char> terminal;
  Dfa d = trie_of(words, terminal);
  const int32_t n = d.n_states();
  const int32_t rest = d.add_state(true);  // left the trie: any continuation
  for (const auto& [lo, hi] : codepoint_alphabet()) d.add_edge(rest, lo, hi, rest);
  for (int32_t s = 0; s < n; ++s) {
    d.set_accept(s, !terminal[s]);
    // Every code point without an edge in the trie leaves it.
    std::vector<std::pair<uint32_t, uint32_t>> used;
    for (const auto& e : d.state(s).edges) used.emplace_back(e.lo, e.hi);
    uint64_t next = 0;
    std::vector<std::pair<uint32_t, uint32_t>> gaps;
    for (const auto& [lo, hi] : used) {
      if (lo > next) gaps.emplace_back(uint32_t(next), lo - 1);
      next = uint64_t(hi) + 1;
    }
    if (next <= kMaxCodepoint) gaps.emplace_back(uint32_t(next), kMaxCodepoint);
    for (const auto& [lo, hi] : gaps)
      for (const auto& [alo, ahi] : codepoint_alphabet())
        if (std::max(lo, alo) <= std::min(hi, ahi)) d.add_edge(s, std::max(lo, alo), std::min(hi, ahi), rest);
  }
  return std::move(d.normalize());
}

namespace {

Dfa build_length(int64_t min, int64_t max) {
  return Dfa::length(codepoint_alphabet(), min, max);  // minimal as built: no normalising (quadratic on chains)
}

Dfa build_pattern(const std::string& pattern) {
  std::vector<regex_ast::Branch> branches;
  try {
    branches = regex_ast::parse(pattern);
  } catch (const GrammarError& e) {
    fail("pattern '" + pattern + "': " + e.what());
  }
  Nfa nfa;
  const int32_t start = nfa.add(), accept = nfa.add();
  for (const auto& branch : branches) {
    const auto [s, e] = nfa.build(branch.body);
    if (branch.anchored_start)
      nfa.eps(start, s);
    else
      nfa.any_loop(start, s);
    if (branch.anchored_end)
      nfa.eps(e, accept);
    else
      nfa.any_loop(e, accept);
  }
  return nfa.determinize(start, accept);
}

}  // namespace

Dfa string_length(int64_t min, int64_t max) {
  return memo_dfa(std::to_string(min) + "," + std::to_string(max), [&] { return build_length(min, max); });
}

Dfa pattern_strings(const std::string& pattern) {
  return memo_dfa(pattern, [&] { return build_pattern(pattern); });
}

bool format_strings(const std::string& format, Dfa& out) {
  // Built once, all together (a function-local static is initialised thread-safely).
  static const std::map<std::string, Dfa> automata = [] {
    std::map<std::string, Dfa> built;
    for (const auto& [name, pattern] : format_patterns()) built.emplace(name, pattern_strings(pattern));
    return built;
  }();
  const auto it = automata.find(format);
  if (it == automata.end()) return false;
  out = it->second;
  return true;
}

}  // namespace ridge::grammar::jsonschema
