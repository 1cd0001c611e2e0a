#include "grammar/flat_grammar.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace ridge::grammar {

namespace {

struct LeftEdge {
  RuleId to;
  bool tail;  // the call is the last symbol of its alternative: the matcher reuses the caller's frame
};

std::vector<bool> nullable_rules(const Grammar& g) {
  std::vector<bool> nullable(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (nullable[r]) continue;
      for (const Sequence& alt : g.rules[r].alternatives)
        if (std::all_of(alt.begin(), alt.end(),
                        [&](const Symbol& s) { return s.kind == Symbol::Kind::kRule && nullable[s.rule]; })) {
          nullable[r] = changed = true;
          break;
        }
    }
  }
  return nullable;
}

// Strongly connected components (iterative Tarjan): a component id per node, callees' components
// numbered before their callers'.
std::vector<int32_t> components(const std::vector<std::vector<int32_t>>& edges) {
  const int32_t n = static_cast<int32_t>(edges.size());
  std::vector<int32_t> index(n, -1), low(n, 0), component(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  int32_t next_index = 0, n_components = 0;
  struct Frame {
    int32_t node;
    size_t edge;
  };
  for (int32_t start = 0; start < n; ++start) {
    if (index[start] >= 0) continue;
    std::vector<Frame> frames{{start, 0}};
    index[start] = low[start] = next_index++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!frames.empty()) {
      Frame& f = frames.back();
      if (f.edge < edges[f.node].size()) {
        const int32_t to = edges[f.node][f.edge++];
        if (index[to] < 0) {
          index[to] = low[to] = next_index++;
          stack.push_back(to);
          on_stack[to] = true;
          frames.push_back({to, 0});
        } else if (on_stack[to]) {
          low[f.node] = std::min(low[f.node], index[to]);
        }
        continue;
      }
      const int32_t v = f.node;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().node] = std::min(low[frames.back().node], low[v]);
      if (low[v] == index[v]) {
        for (int32_t m = -1; m != v;) {
          m = stack.back();
          stack.pop_back();
          on_stack[m] = false;
          component[m] = n_components;
        }
        ++n_components;
      }
    }
  }
  return component;
}

// Left recursion is a strongly connected component of the left-edge graph holding a non-tail edge.
void refuse_left_recursion(const Grammar& g) {
  const auto nullable = nullable_rules(g);
  const int32_t n = static_cast<int32_t>(g.rules.size());
  std::vector<std::vector<LeftEdge>> edges(n);
  std::vector<std::vector<int32_t>> targets(n);
  for (int32_t r = 0; r < n; ++r)
    for (const Sequence& alt : g.rules[r].alternatives)
      for (size_t i = 0; i < alt.size(); ++i) {
        if (alt[i].kind == Symbol::Kind::kBytes) break;
        edges[r].push_back({alt[i].rule, i + 1 == alt.size()});
        targets[r].push_back(alt[i].rule);
        if (!nullable[alt[i].rule]) break;
      }
  const auto component = components(targets);
  for (int32_t r = 0; r < n; ++r)
    for (const LeftEdge& e : edges[r])
      if (!e.tail && component[e.to] == component[r])
        throw GrammarError(fmt::format("grammar: rule '{}' is left-recursive (through '{}'); rewrite it with repetition",
                                       g.rules[r].name, g.rules[e.to].name));
}

// A rule is lexical when nothing in or below it recurses through a non-tail call (its language is
// regular). Size does not matter: what a mask depends on is spelled only as far as a token reaches.
std::vector<uint8_t> lexical_rules(const Grammar& g) {
  const int32_t n = static_cast<int32_t>(g.rules.size());
  std::vector<std::vector<int32_t>> callees(n);
  for (int32_t r = 0; r < n; ++r)
    for (const Sequence& alt : g.rules[r].alternatives)
      for (const Symbol& s : alt)
        if (s.kind == Symbol::Kind::kRule) callees[r].push_back(s.rule);
  const auto component = components(callees);
  const int32_t n_comp = n ? *std::max_element(component.begin(), component.end()) + 1 : 0;
  std::vector<std::vector<int32_t>> members(n_comp);
  for (int32_t r = 0; r < n; ++r) members[component[r]].push_back(r);
  std::vector<uint8_t> comp_ok(n_comp, 1);
  // Components are numbered callees first, so one pass in order sees every callee settled.
  for (int32_t c = 0; c < n_comp; ++c)
    for (int32_t r : members[c])
      for (const Sequence& alt : g.rules[r].alternatives)
        for (size_t i = 0; i < alt.size(); ++i) {
          if (alt[i].kind != Symbol::Kind::kRule) continue;
          const int32_t cc = component[alt[i].rule];
          // Recursion inside the component only as a tail call; callees lexical.
          if (cc == c ? i + 1 != alt.size() : !comp_ok[cc]) comp_ok[c] = 0;
        }
  std::vector<uint8_t> out(n);
  for (int32_t r = 0; r < n; ++r) out[r] = comp_ok[component[r]];
  return out;
}

// Shortest sentence of each rule, in bytes (by fixpoint; unproductive rules stay at the cap).
std::vector<int32_t> min_bytes_of(const Grammar& g) {
  constexpr int32_t kCap = 1 << 20;
  std::vector<int32_t> best(g.rules.size(), kCap);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r)
      for (const Sequence& alt : g.rules[r].alternatives) {
        int64_t n = 0;
        for (const Symbol& s : alt) n += s.kind == Symbol::Kind::kBytes ? 1 : best[s.rule];
        if (n < best[r]) {
          best[r] = static_cast<int32_t>(n);
          changed = true;
        }
      }
  }
  return best;
}

}  // namespace

FlatGrammar FlatGrammar::from(const Grammar& grammar) {
  if (grammar.root < 0 || grammar.root >= static_cast<RuleId>(grammar.rules.size()))
    throw GrammarError("grammar has no root rule");
  refuse_left_recursion(grammar);
  FlatGrammar flat;
  flat.lexical = lexical_rules(grammar);
  flat.min_bytes = min_bytes_of(grammar);
  flat.root = grammar.root;
  std::map<std::array<uint64_t, 4>, int32_t> set_index;
  flat.alt_starts.resize(grammar.rules.size());
  for (RuleId r = 0; r < static_cast<RuleId>(grammar.rules.size()); ++r) {
    flat.rule_names.push_back(grammar.rules[r].name);
    for (const Sequence& alt : grammar.rules[r].alternatives) {
      flat.alt_starts[r].push_back(flat.n_positions());
      for (const Symbol& s : alt) {
        if (s.kind == Symbol::Kind::kRule) {
          flat.elems.push_back({Kind::kRule, s.rule, r});
          continue;
        }
        auto [it, added] = set_index.try_emplace(s.bytes.words, static_cast<int32_t>(flat.sets.size()));
        if (added) flat.sets.push_back(s.bytes);
        flat.elems.push_back({Kind::kBytes, it->second, r});
      }
      flat.elems.push_back({Kind::kEnd, -1, r});
    }
  }
  flat.rest_min_bytes.assign(flat.elems.size(), 0);
  for (int32_t p = flat.n_positions() - 1; p >= 0; --p) {
    const Elem& e = flat.elems[p];
    if (e.kind == Kind::kEnd) continue;
    const int64_t own = e.kind == Kind::kBytes ? 1 : flat.min_bytes[e.arg];
    flat.rest_min_bytes[p] = static_cast<int32_t>(std::min<int64_t>(own + flat.rest_min_bytes[p + 1], 1 << 30));
  }
  return flat;
}

int FlatGrammar::byte_classes(const std::vector<int32_t>& positions, std::array<uint16_t, 256>& classes) const {
  std::vector<int32_t> distinct;
  for (int32_t pos : positions) distinct.push_back(elems[pos].arg);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // Partition refinement by each distinct set; a byte no set holds stays with the bytes alike.
  classes.fill(0);
  int n_classes = 1;
  std::vector<int> remap;
  for (int32_t set : distinct) {
    const ByteSet& bytes = sets[set];
    remap.assign(2 * static_cast<size_t>(n_classes), -1);
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      int& to = remap[2 * classes[b] + bytes.has(static_cast<uint8_t>(b))];
      if (to < 0) to = next++;
      classes[b] = static_cast<uint16_t>(to);
    }
    n_classes = next;
  }
  // Renumber so that the bytes read by none are class 0.
  ByteSet read;
  for (int32_t set : distinct) read |= sets[set];
  remap.assign(static_cast<size_t>(n_classes), -1);
  int next = 1;
  for (int b = 0; b < 256; ++b) {
    int& to = remap[classes[b]];
    if (to < 0) to = read.has(static_cast<uint8_t>(b)) ? next++ : 0;
    classes[b] = static_cast<uint16_t>(to);
  }
  return next;
}

}  // namespace ridge::grammar
