#pragma once
// Deterministic automata over an integer alphabet (code points for string values, bytes for number
// texts), private to the JSON Schema compiler. They give the string and number parts of a schema the
// exact boolean operations allOf / anyOf / oneOf / not need (intersection, union, difference), which
// grammars do not have. Every operation trims states that cannot reach acceptance, so an automaton
// with no states is the empty language. Sizes are bounded: an operation whose result would exceed
// kMaxDfaStates throws GrammarError instead of eating memory.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ridge::grammar {

constexpr int32_t kMaxDfaStates = 50000;

class Dfa {
 public:
  struct Edge {
    uint32_t lo, hi;  // closed range of symbols
    int32_t to;
    bool operator==(const Edge&) const = default;
  };
  struct State {
    bool accept = false;
    std::vector<Edge> edges;  // sorted by lo, disjoint; a symbol with no edge leads nowhere
    bool operator==(const State&) const = default;
  };
  using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

  Dfa() = default;                          // the empty language
  static Dfa star(const Ranges& alphabet);  // every string over `alphabet`
  static Dfa word(const std::vector<uint32_t>& symbols);
  // Strings over `alphabet` whose length is in [min, max] (max < 0: unbounded).
  static Dfa length(const Ranges& alphabet, int64_t min, int64_t max);

  int32_t add_state(bool accept);
  void add_edge(int32_t from, uint32_t lo, uint32_t hi, int32_t to);  // lo..hi must not overlap existing edges
  void set_accept(int32_t state, bool accept) { states_[state].accept = accept; }

  // The words of this language whose length is in [min, max] (max < 0: unbounded): the product with a
  // length automaton, explored from the start only (a short finite language stays small).
  Dfa with_length(int64_t min, int64_t max) const;
  Dfa intersect(const Dfa& other) const;
  Dfa unite(const Dfa& other) const;
  Dfa minus(const Dfa& other) const;

  bool empty() const { return states_.empty(); }
  // Same automaton. Normalised automata of up to a few thousand states are minimal and canonically
  // numbered, so for them this is equality of languages.
  bool operator==(const Dfa& other) const { return states_ == other.states_; }
  bool accepts(const std::vector<uint32_t>& symbols) const;
  // Canonical text of the (minimised) automaton: equal languages built the same way share rules.
  std::string fingerprint() const;

  int32_t n_states() const { return static_cast<int32_t>(states_.size()); }
  const State& state(int32_t id) const { return states_[id]; }

  // Drops states unreachable from the start or unable to reach acceptance, then merges equivalent
  // states (up to 500 states: Moore's refinement is quadratic on long chains, and merging is only an
  // optimisation). Operations call it; builders call it once done.
  Dfa& normalize();

 private:
  enum class Op { kAnd, kOr, kMinus };
  Dfa product(const Dfa& other, Op op) const;
  void trim();
  void minimize();

  std::vector<State> states_;  // state 0 is the start
};

// `build()`, remembered per thread by `key` (schemas repeat the same bounds, lengths and patterns);
// the memo is dropped when it grows past a few hundred automata.
template <typename Build>
Dfa memo_dfa(const std::string& key, Build build) {
  thread_local std::unordered_map<std::string, Dfa> memo;
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() >= 512) memo.clear();
  Dfa built = build();
  memo.emplace(key, built);
  return built;
}

}  // namespace ridge::grammar
