#include "grammar/json_schema_dfa.h"

#include <algorithm>
#include <unordered_map>

#include "grammar/grammar.h"

namespace ridge::grammar {

namespace {

constexpr int32_t kMinimizeLimit = 500;  // Moore refinement is quadratic on long chains: skip it there

struct SignatureHash {
  size_t of(const uint64_t* v, size_t n) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ v[i]) * 0x100000001B3ull + (h >> 29);
    return size_t(h ^ (h >> 32));
  }
};

[[noreturn]] void too_big() {
  throw GrammarError("json schema: string or number constraints need more than " + std::to_string(kMaxDfaStates) +
                     " automaton states");
}

}  // namespace

Dfa Dfa::star(const Ranges& alphabet) {
  Dfa d;
  d.add_state(true);
  for (const auto& [lo, hi] : alphabet) d.add_edge(0, lo, hi, 0);
  return d;
}

Dfa Dfa::word(const std::vector<uint32_t>& symbols) {
  Dfa d;
  for (size_t i = 0; i <= symbols.size(); ++i) d.add_state(i == symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) d.add_edge(int32_t(i), symbols[i], symbols[i], int32_t(i + 1));
  return d;
}

Dfa Dfa::length(const Ranges& alphabet, int64_t min, int64_t max) {
  Dfa d;
  if (max >= 0 && min > max) return d;
  const int64_t last = max >= 0 ? max : min;
  if (last >= kMaxDfaStates) too_big();
  for (int64_t i = 0; i <= last; ++i) d.add_state(i >= min);
  for (int64_t i = 0; i <= last; ++i) {
    const int32_t to = i < last ? int32_t(i + 1) : (max < 0 ? int32_t(i) : -1);
    if (to < 0) continue;
    for (const auto& [lo, hi] : alphabet) d.add_edge(int32_t(i), lo, hi, to);
  }
  return d;
}

int32_t Dfa::add_state(bool accept) {
  states_.push_back(State{accept, {}});
  return int32_t(states_.size() - 1);
}

void Dfa::add_edge(int32_t from, uint32_t lo, uint32_t hi, int32_t to) {
  auto& edges = states_[from].edges;
  const auto at = std::lower_bound(edges.begin(), edges.end(), lo, [](const Edge& e, uint32_t v) { return e.lo < v; });
  edges.insert(at, Edge{lo, hi, to});
}

bool Dfa::accepts(const std::vector<uint32_t>& symbols) const {
  if (states_.empty()) return false;
  int32_t s = 0;
  for (uint32_t c : symbols) {
    const auto& edges = states_[s].edges;
    const auto it = std::upper_bound(edges.begin(), edges.end(), c, [](uint32_t v, const Edge& e) { return v < e.lo; });
    if (it == edges.begin() || std::prev(it)->hi < c) return false;
    s = std::prev(it)->to;
  }
  return states_[s].accept;
}

Dfa Dfa::product(const Dfa& other, Op op) const {
  Dfa out;
  std::unordered_map<uint64_t, int32_t> ids;
  std::vector<std::pair<int32_t, int32_t>> queue;
  const auto accept_of = [&](int32_t a, int32_t b) {
    const bool x = a >= 0 && states_[a].accept;
    const bool y = b >= 0 && other.states_[b].accept;
    return op == Op::kAnd ? x && y : op == Op::kOr ? x || y : x && !y;
  };
  const auto id_of = [&](int32_t a, int32_t b) {
    const uint64_t key = (uint64_t(uint32_t(a + 1)) << 32) | uint32_t(b + 1);
    const auto [it, fresh] = ids.emplace(key, out.n_states());
    if (fresh) {
      if (out.n_states() >= kMaxDfaStates) too_big();
      out.add_state(accept_of(a, b));
      queue.emplace_back(a, b);
    }
    return it->second;
  };
  const int32_t start_a = states_.empty() ? -1 : 0;
  const int32_t start_b = other.states_.empty() ? -1 : 0;
  if (op == Op::kAnd && (start_a < 0 || start_b < 0)) return out;
  if (op == Op::kMinus && start_a < 0) return out;
  if (op == Op::kOr && start_a < 0 && start_b < 0) return out;
  id_of(start_a, start_b);
  static const std::vector<Edge> kNone;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const auto [a, b] = queue[qi];
    const auto& ea = a >= 0 ? states_[a].edges : kNone;
    const auto& eb = b >= 0 ? other.states_[b].edges : kNone;
    // Elementary intervals: every boundary of either edge list.
    std::vector<uint64_t> cuts;
    for (const auto& e : ea) cuts.push_back(e.lo), cuts.push_back(uint64_t(e.hi) + 1);
    for (const auto& e : eb) cuts.push_back(e.lo), cuts.push_back(uint64_t(e.hi) + 1);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    size_t ia = 0, ib = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const uint64_t lo = cuts[k], hi = cuts[k + 1] - 1;
      while (ia < ea.size() && ea[ia].hi < lo) ++ia;
      while (ib < eb.size() && eb[ib].hi < lo) ++ib;
      const int32_t ta = ia < ea.size() && ea[ia].lo <= lo ? ea[ia].to : -1;
      const int32_t tb = ib < eb.size() && eb[ib].lo <= lo ? eb[ib].to : -1;
      if (op == Op::kAnd && (ta < 0 || tb < 0)) continue;
      if (op == Op::kMinus && ta < 0) continue;
      if (ta < 0 && tb < 0) continue;
      const int32_t to = id_of(ta, tb);
      auto& edges = out.states_[qi].edges;  // a pair's id is its place in the queue; taken after id_of grew the vector
      if (!edges.empty() && edges.back().to == to && uint64_t(edges.back().hi) + 1 == lo) {
        edges.back().hi = uint32_t(hi);
      } else {
        edges.push_back(Edge{uint32_t(lo), uint32_t(hi), to});
      }
    }
  }
  out.normalize();
  return out;
}

Dfa Dfa::with_length(int64_t min, int64_t max) const {
  Dfa out;
  if (states_.empty() || (max >= 0 && min > max)) return out;
  const int64_t cap = max >= 0 ? max : min;  // unbounded: counts saturate once past min
  std::unordered_map<uint64_t, int32_t> ids;
  std::vector<std::pair<int32_t, int64_t>> queue;
  const auto id_of = [&](int32_t s, int64_t count) {
    const auto [it, fresh] = ids.emplace(uint64_t(s) * uint64_t(cap + 1) + uint64_t(count), out.n_states());
    if (fresh) {
      if (out.n_states() >= kMaxDfaStates) too_big();
      out.add_state(states_[s].accept && count >= min);
      queue.emplace_back(s, count);
    }
    return it->second;
  };
  id_of(0, 0);
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const auto [s, count] = queue[qi];
    if (max >= 0 && count == max) continue;
    const int64_t next = max >= 0 ? count + 1 : std::min(count + 1, cap);
    for (const auto& e : states_[s].edges) {
      const int32_t to = id_of(e.to, next);
      out.states_[qi].edges.push_back(Edge{e.lo, e.hi, to});
    }
  }
  out.normalize();
  return out;
}

Dfa Dfa::intersect(const Dfa& other) const { return product(other, Op::kAnd); }
Dfa Dfa::unite(const Dfa& other) const { return product(other, Op::kOr); }
Dfa Dfa::minus(const Dfa& other) const { return product(other, Op::kMinus); }

Dfa& Dfa::normalize() {
  trim();
  if (!states_.empty() && n_states() <= kMinimizeLimit) minimize();
  return *this;
}

void Dfa::trim() {
  const int32_t n = n_states();
  if (n == 0) return;
  std::vector<char> reach(n, 0), live(n, 0);
  std::vector<int32_t> stack{0};
  reach[0] = 1;
  std::vector<std::vector<int32_t>> back(n);
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    for (const auto& e : states_[s].edges) {
      back[e.to].push_back(s);
      if (!reach[e.to]) reach[e.to] = 1, stack.push_back(e.to);
    }
  }
  for (int32_t s = 0; s < n; ++s)
    if (reach[s] && states_[s].accept) live[s] = 1, stack.push_back(s);
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    for (int32_t p : back[s])
      if (!live[p]) live[p] = 1, stack.push_back(p);
  }
  if (!live[0]) {
    states_.clear();
    return;
  }
  std::vector<int32_t> remap(n, -1);
  int32_t next = 0;
  for (int32_t s = 0; s < n; ++s)
    if (live[s]) remap[s] = next++;
  std::vector<State> kept(next);
  for (int32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    State& k = kept[remap[s]];
    k.accept = states_[s].accept;
    for (const auto& e : states_[s].edges) {
      if (remap[e.to] < 0) continue;
      if (!k.edges.empty() && k.edges.back().to == remap[e.to] && uint64_t(k.edges.back().hi) + 1 == e.lo) {
        k.edges.back().hi = e.hi;
      } else {
        k.edges.push_back(Edge{e.lo, e.hi, remap[e.to]});
      }
    }
  }
  states_ = std::move(kept);
}

void Dfa::minimize() {
  const int32_t n = n_states();
  std::vector<int32_t> cls(n), next(n);
  for (int32_t s = 0; s < n; ++s) cls[s] = states_[s].accept ? 1 : 0;
  int32_t n_classes = 0;
  // Signatures of all states back to back (no allocation per state), found again through an
  // open-addressed table of representatives.
  std::vector<uint64_t> sig;
  std::vector<size_t> begin(static_cast<size_t>(n) + 1);
  size_t table_size = 16;
  while (table_size < 2 * static_cast<size_t>(n)) table_size *= 2;
  std::vector<int32_t> table;
  const SignatureHash hash;
  for (;;) {
    // A state's signature: its class and its edges with targets replaced by their classes, adjacent
    // ranges into the same class merged.
    sig.clear();
    for (int32_t s = 0; s < n; ++s) {
      begin[s] = sig.size();
      sig.push_back(uint64_t(cls[s]));
      uint64_t prev_hi = ~uint64_t{0};
      int32_t prev_cls = -1;
      for (const auto& e : states_[s].edges) {
        if (prev_cls == cls[e.to] && prev_hi + 1 == e.lo) {
          sig.back() = e.hi;
        } else {
          sig.push_back(e.lo), sig.push_back(uint64_t(cls[e.to])), sig.push_back(e.hi);
        }
        prev_hi = e.hi;
        prev_cls = cls[e.to];
      }
    }
    begin[n] = sig.size();
    table.assign(table_size, -1);
    int32_t count = 0;
    for (int32_t s = 0; s < n; ++s) {
      const uint64_t* from = sig.data() + begin[s];
      const size_t len = begin[s + 1] - begin[s];
      for (size_t i = hash.of(from, len) & (table_size - 1);; i = (i + 1) & (table_size - 1)) {
        const int32_t r = table[i];
        if (r < 0) {
          table[i] = s;
          next[s] = count++;
          break;
        }
        if (begin[r + 1] - begin[r] == len && std::equal(from, from + len, sig.data() + begin[r])) {
          next[s] = next[r];
          break;
        }
      }
    }
    cls.swap(next);
    if (count == n_classes) break;
    n_classes = count;
  }
  // Renumber the classes in breadth-first order from the start, so equal languages get equal texts.
  std::vector<int32_t> order(n_classes, -1), rep(n_classes, -1);
  for (int32_t s = 0; s < n; ++s)
    if (rep[cls[s]] < 0) rep[cls[s]] = s;
  std::vector<int32_t> queue{cls[0]};
  order[cls[0]] = 0;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    for (const auto& e : states_[rep[queue[qi]]].edges) {
      const int32_t c = cls[e.to];
      if (order[c] < 0) order[c] = int32_t(queue.size()), queue.push_back(c);
    }
  }
  std::vector<State> merged(queue.size());
  for (size_t i = 0; i < queue.size(); ++i) {
    const State& from = states_[rep[queue[i]]];
    State& to = merged[i];
    to.accept = from.accept;
    for (const auto& e : from.edges) {
      const int32_t t = order[cls[e.to]];
      if (!to.edges.empty() && to.edges.back().to == t && uint64_t(to.edges.back().hi) + 1 == e.lo) {
        to.edges.back().hi = e.hi;
      } else {
        to.edges.push_back(Edge{e.lo, e.hi, t});
      }
    }
  }
  states_ = std::move(merged);
}

std::string Dfa::fingerprint() const {
  // Binary, not text: it only keys maps, and numbers need no formatting.
  size_t size = 0;
  for (const auto& st : states_) size += 5 + st.edges.size() * 12;
  std::string out;
  out.reserve(size);
  const auto put = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  for (const auto& st : states_) {
    out.push_back(st.accept ? 'A' : 'N');
    put(static_cast<uint32_t>(st.edges.size()));
    for (const auto& e : st.edges) {
      put(e.lo);
      put(e.hi);
      put(static_cast<uint32_t>(e.to));
    }
  }
  return out;
}

}  // namespace ridge::grammar
