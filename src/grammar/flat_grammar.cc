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

// Left recursion is a strongly connected component of the left-edge graph holding a non-tail edge.
void refuse_left_recursion(const Grammar& g) {
  const auto nullable = nullable_rules(g);
  const int32_t n = static_cast<int32_t>(g.rules.size());
  std::vector<std::vector<LeftEdge>> edges(n);
  for (int32_t r = 0; r < n; ++r)
    for (const Sequence& alt : g.rules[r].alternatives)
      for (size_t i = 0; i < alt.size(); ++i) {
        if (alt[i].kind == Symbol::Kind::kBytes) break;
        edges[r].push_back({alt[i].rule, i + 1 == alt.size()});
        if (!nullable[alt[i].rule]) break;
      }
  // Iterative Tarjan.
  std::vector<int32_t> index(n, -1), low(n, 0), component(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  int32_t next_index = 0, n_components = 0;
  struct Frame {
    int32_t rule;
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
      if (f.edge < edges[f.rule].size()) {
        const int32_t to = edges[f.rule][f.edge++].to;
        if (index[to] < 0) {
          index[to] = low[to] = next_index++;
          stack.push_back(to);
          on_stack[to] = true;
          frames.push_back({to, 0});
        } else if (on_stack[to]) {
          low[f.rule] = std::min(low[f.rule], index[to]);
        }
        continue;
      }
      const int32_t r = f.rule;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().rule] = std::min(low[frames.back().rule], low[r]);
      if (low[r] == index[r]) {
        for (int32_t m = -1; m != r;) {
          m = stack.back();
          stack.pop_back();
          on_stack[m] = false;
          component[m] = n_components;
        }
        ++n_components;
      }
    }
  }
  for (int32_t r = 0; r < n; ++r)
    for (const LeftEdge& e : edges[r])
      if (!e.tail && component[e.to] == component[r])
        throw GrammarError(fmt::format("grammar: rule '{}' is left-recursive (through '{}'); rewrite it with repetition",
                                       g.rules[r].name, g.rules[e.to].name));
}

}  // namespace

FlatGrammar FlatGrammar::from(const Grammar& grammar) {
  if (grammar.root < 0 || grammar.root >= static_cast<RuleId>(grammar.rules.size()))
    throw GrammarError("grammar has no root rule");
  refuse_left_recursion(grammar);
  FlatGrammar flat;
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
  return flat;
}

}  // namespace ridge::grammar
