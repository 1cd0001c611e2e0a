#include "grammar/token_sort.h"

namespace ridge::grammar {

namespace {

void set_bit(std::vector<uint64_t>& mask, int32_t token) { mask[token >> 6] |= uint64_t{1} << (token & 63); }

struct Sorted {
  std::vector<uint64_t> accepted;  // a mask over the vocabulary
  std::vector<DependentRun> dependent;
};

// Walks the tokens of `trie` starting with `first` from `start`.
void walk_subtree(Pda& pda, Pda::StateId start, const TokenTrie& trie, bool others, uint8_t first, Sorted& out) {
  const int32_t child = trie.root_child[first];
  if (child < 0) return;
  // Per depth on the current branch: the state after that many bytes, and the depths at which the
  // start's frame had completed.
  std::vector<Pda::StateId> state(1, start);
  std::vector<uint16_t> pops;  // depths, ascending, on the current branch
  for (int32_t i = child, end = trie.nodes[child].subtree_end; i < end;) {
    const TokenTrie::Node& node = trie.nodes[i];
    const int d = node.depth;
    while (!pops.empty() && pops.back() >= d) pops.pop_back();
    if (state.size() <= static_cast<size_t>(d)) state.resize(d + 1);
    const Pda::StateId s = pda.step(state[d - 1], node.byte);
    if (s == Pda::kDead) {
      // Every token below depends on the caller, from each completion point on the branch.
      for (uint16_t k : pops) out.dependent.push_back(DependentRun{i, k, others});
      i = node.subtree_end;
      continue;
    }
    state[d] = s;
    for (int32_t t = 0; t < node.n_tokens; ++t) set_bit(out.accepted, trie.tokens[node.first_token + t]);
    if (pda.popped(s)) pops.push_back(static_cast<uint16_t>(d));
    ++i;
  }
}

// The plain tokens a run of states rejecting the leads `dead` rejects: those with a later
// character led by one of them.
std::vector<uint64_t> rejected_by(const PlainTokens& plain, const ByteSet& dead, size_t n_words) {
  std::vector<uint64_t> out(n_words, 0);
  const auto add = [&](const uint64_t* mask) {
    for (size_t w = 0; w < n_words; ++w) out[w] |= mask[w];
  };
  bool beyond_ascii = true;  // every non-ASCII lead is rejected: one mask covers them
  for (int b = 0x80; b < 256; ++b)
    beyond_ascii = beyond_ascii && (!plain_text::leads().has(static_cast<uint8_t>(b)) || dead.has(static_cast<uint8_t>(b)));
  if (beyond_ascii) add(plain.containing_non_ascii());
  for (int b = 0; b < 256; ++b)
    if (dead.has(static_cast<uint8_t>(b)) && (b < 0x80 || !beyond_ascii)) add(plain.containing(static_cast<uint8_t>(b)));
  return out;
}

// A character after the first of the plain text `bytes` begins with one of `leads`.
bool later_lead_in(const std::string& bytes, const ByteSet& leads) {
  if (leads.empty()) return false;
  int state = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<uint8_t>(bytes[i]);
    if (state == 0 && i > 0 && leads.has(c)) return true;
    state = plain_text::next(state, c);
  }
  return false;
}

// Sorts the plain tokens whose first byte leads to one state whatever the character, and whose
// later characters run through states that each lead to one state, rejecting the same leads: a
// token of n characters is accepted when the run lasts n - 1 characters and none of them begins
// with a rejected lead, else rejected (no frame completes inside the run, so none is dependent).
// Returns the first bytes whose plain tokens are left to the full walk: the state depends on the
// character, or the run ends on a state that accepts some characters but not others.
ByteSet sort_plain(PlainRuns& runs, Pda::StateId start, const TokenVocab& vocab, const ByteSet& first,
                   std::vector<uint64_t>& accepted) {
  const PlainTokens& plain = vocab.plain();
  const auto vocab_bytes = [&](int32_t t) -> const std::string& { return vocab.bytes(t); };
  ByteSet left;
  struct Limit {
    int32_t slots = 0;  // the most slots accepted; 0: none sorted here
    ByteSet dead;       // the leads rejected after the first character
    bool operator==(const Limit&) const = default;
  };
  std::array<Limit, 256> limit{};
  bool shared = true;  // every sorted first byte has the same limit
  const Limit* common = nullptr;
  size_t sorted = 0;
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    if (!first.has(byte) || plain.starting_with(byte).empty()) continue;
    const int32_t next = runs.after_char(start, byte);
    if (next == PlainRuns::kDead) continue;
    const PlainRuns::Run run = next >= 0 ? runs.run_from(next) : PlainRuns::Run{};
    const int32_t slots = run.length + 1;
    if (next == PlainRuns::kMixed || (slots < plain.max_slots() && !run.dead_after)) {
      left.add(byte);
      continue;
    }
    limit[b] = Limit{slots, slots > 1 ? run.dead : ByteSet{}};
    sorted += plain.starting_with(byte).size();
    shared = shared && (!common || *common == limit[b]);
    common = &limit[b];
  }
  if (sorted == 0) return left;
  const size_t n_words = accepted.size();
  if (shared && sorted * 2 > plain.count()) {
    // Most plain tokens are in: start from all of them and take out the first bytes not sorted.
    const uint64_t* all = plain.up_to(common->slots);
    if (common->dead.empty()) {
      for (size_t w = 0; w < n_words; ++w) accepted[w] |= all[w];
    } else {
      const std::vector<uint64_t> rejected = rejected_by(plain, common->dead, n_words);
      for (size_t w = 0; w < n_words; ++w) accepted[w] |= all[w] & ~rejected[w];
    }
    for (int b = 0; b < 256; ++b)
      if (limit[b].slots == 0)
        for (int32_t t : plain.starting_with(static_cast<uint8_t>(b))) accepted[t >> 6] &= ~(uint64_t{1} << (t & 63));
    return left;
  }
  // Few tokens: their later leads are read from their bytes; many: from masks.
  constexpr size_t kFewTokens = 4096;
  ByteSet rejected_for;  // the leads `rejected` was computed for
  std::vector<uint64_t> rejected(sorted < kFewTokens ? 0 : n_words, 0);
  for (int b = 0; b < 256; ++b) {
    if (limit[b].slots == 0) continue;
    if (sorted >= kFewTokens && limit[b].dead != rejected_for) {
      rejected = rejected_by(plain, limit[b].dead, n_words);
      rejected_for = limit[b].dead;
    }
    for (int32_t t : plain.starting_with(static_cast<uint8_t>(b))) {
      if (plain.slots(t) > limit[b].slots) continue;
      const bool out = sorted < kFewTokens ? later_lead_in(vocab_bytes(t), limit[b].dead)
                                           : ((rejected[t >> 6] >> (t & 63)) & 1) != 0;
      if (!out) set_bit(accepted, t);
    }
  }
  return left;
}

}  // namespace

TokenSort::TokenSort(Pda& pda, PlainRuns* plain, Pda::StateId start, const TokenVocab& vocab)
    : pda_(pda), start_(start), vocab_(vocab), accepted_(vocab.n_words(), 0) {
  first_ = full_ = pda.next_bytes(start);
  if (plain && vocab.plain().count() > 0) full_ = sort_plain(*plain, start, vocab, first_, accepted_);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    const TokenTrie& trie = full_.has(byte) ? vocab.token_trie() : vocab.plain().others();
    if (first_.has(byte) && trie.root_child[b] >= 0)
      walk_bound_ += static_cast<size_t>(trie.nodes[trie.root_child[b]].subtree_end - trie.root_child[b]);
  }
}

PositionTokens TokenSort::finish() {
  Sorted out;
  out.accepted = std::move(accepted_);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    if (!first_.has(byte)) continue;
    if (full_.has(byte))
      walk_subtree(pda_, start_, vocab_.token_trie(), false, byte, out);
    else
      walk_subtree(pda_, start_, vocab_.plain().others(), true, byte, out);
  }
  PositionTokens result;
  result.accepted = TokenSet::of_bits(std::move(out.accepted), vocab_.n_vocab());
  result.dependent = std::move(out.dependent);
  return result;
}

void allow_dependent(Pda& pda, Pda::StateId cont, const DependentRun& run, const TokenVocab& vocab, uint64_t* words) {
  const TokenTrie& trie = run.others ? vocab.plain().others() : vocab.token_trie();
  const TokenTrie::Node& top = trie.nodes[run.node];
  // The bytes from the completion point down to the node are the same for every token below it.
  const std::string& bytes = vocab.bytes(trie.tokens[top.first_token]);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const Pda::StateId at_top = pda.step(cont, data + run.offset, top.depth - run.offset);
  if (at_top == Pda::kDead) return;
  const auto allow = [&](const TokenTrie::Node& node) {
    for (int32_t t = 0; t < node.n_tokens; ++t) {
      const int32_t token = trie.tokens[node.first_token + t];
      words[token >> 6] |= uint64_t{1} << (token & 63);
    }
  };
  allow(top);
  std::vector<Pda::StateId> state{at_top};  // by depth below the node
  for (int32_t i = run.node + 1; i < top.subtree_end;) {
    const TokenTrie::Node& node = trie.nodes[i];
    const size_t d = node.depth - top.depth;
    if (state.size() <= d) state.resize(d + 1);
    const Pda::StateId s = pda.step(state[d - 1], node.byte);
    if (s == Pda::kDead) {
      i = node.subtree_end;
      continue;
    }
    state[d] = s;
    allow(node);
    ++i;
  }
}

}  // namespace ridge::grammar
