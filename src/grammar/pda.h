#pragma once
// The byte-level pushdown matcher. A parser configuration is a set of stacks; a stack is a node of
// a persistent (shared-tail, interned) tree: (position, parent). Every state -- the set of stacks
// after a closure, each top at a byte element -- is interned too, and transitions are memoised, so
// walking a vocabulary trie over states already seen costs a table look-up per byte (a DFA built
// lazily). Two bottom nodes: kAccept (the root rule completed) and kSentinel (the frame a state was
// started from, with start_at, completed: what follows depends on a context not known here).
//
// Not thread-safe: each matcher, and each mask precomputation, owns its Pda over a shared
// FlatGrammar.
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/flat_grammar.h"

namespace ridge::grammar {

class Pda {
 public:
  using StateId = int32_t;
  static constexpr StateId kDead = -1;
  static constexpr int32_t kAccept = 0;
  static constexpr int32_t kSentinel = 1;

  explicit Pda(std::shared_ptr<const FlatGrammar> grammar);

  const FlatGrammar& grammar() const { return *grammar_; }
  StateId initial();                 // the root rule, nothing read
  StateId start_at(int32_t pos);     // the single stack (pos, sentinel); pos is a byte element
  // The stacks tops[i] over below[0] over below[1] over ... over the sentinel (positions, innermost first).
  StateId start_group(const std::vector<int32_t>& tops, const std::vector<int32_t>& below);
  StateId expand_node(int32_t node);  // the configuration of the stack `node` (closure; memoised)
  StateId after_pop(int32_t node);   // the configuration once the frame holding `node` has completed
  StateId step(StateId state, uint8_t byte);  // kDead when no stack takes the byte
  StateId step(StateId state, const uint8_t* bytes, size_t n);

  bool accepting(StateId s) const { return states_[s].accept; }
  bool popped(StateId s) const { return states_[s].popped; }
  // Stacks whose top is a byte element (the bottoms kAccept/kSentinel are left out).
  const std::vector<int32_t>& stacks(StateId s) const { return states_[s].nodes; }
  int32_t node_pos(int32_t node) const { return nodes_[node].pos; }
  int32_t node_parent(int32_t node) const { return nodes_[node].parent; }
  ByteSet next_bytes(StateId s) const;
  // Bytes that the same stacks of `s` read lead to the same state: classes[b] numbers b's class, 0
  // when no stack reads b. Returns the number of classes, 0 included.
  int byte_classes(StateId s, std::array<uint16_t, 256>& classes) const;
  size_t n_states() const { return states_.size(); }

 private:
  struct Node {
    int32_t pos, parent;
  };
  struct State {
    std::vector<int32_t> nodes;  // sorted
    bool accept = false, popped = false;
    uint64_t hash = 0;
  };
  int32_t intern_node(int32_t pos, int32_t parent);
  void expand(int32_t pos, int32_t parent);  // closure into scratch_
  StateId intern_scratch();

  std::shared_ptr<const FlatGrammar> grammar_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int32_t> node_ids_;
  std::vector<State> states_;
  std::unordered_multimap<uint64_t, StateId> state_ids_;
  std::vector<std::unique_ptr<std::array<StateId, 256>>> transitions_;
  struct ByteClasses {
    std::array<uint16_t, 256> of;  // see byte_classes
    std::vector<StateId> next;     // by class, once known
  };
  std::vector<std::unique_ptr<ByteClasses>> classes_;  // by state, once two bytes were stepped from it
  std::unordered_map<int32_t, StateId> after_pop_;
  std::unordered_map<int32_t, StateId> expanded_;

  // Scratch of one closure.
  std::vector<int32_t> out_;
  bool out_accept_ = false, out_popped_ = false;
  std::vector<std::pair<int32_t, int32_t>> work_;
  std::vector<uint64_t> visited_keys_;
  std::vector<uint32_t> visited_stamp_;
  uint32_t stamp_ = 0;
  size_t visited_count_ = 0;
  bool visit(int32_t pos, int32_t parent);  // false when already seen in this closure
  void new_closure();
};

}  // namespace ridge::grammar
