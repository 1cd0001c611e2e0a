#include "grammar/matcher.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "grammar/token_sort.h"

namespace ridge::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), pda_(grammar_->flat()) {
  history_.push_back(pda_.initial());
}

const std::vector<GrammarMatcher::TopFrames>& GrammarMatcher::top_frames(Pda::StateId s) {
  if (auto it = top_frames_.find(s); it != top_frames_.end()) return it->second;
  // A non-lexical top alone; lexical tops by the node they sit on (the alternatives of a character),
  // with below them the frames of lexical rules (a string's characters, the loop over them, the string).
  const FlatGrammar& g = pda_.grammar();
  std::vector<TopFrames> out;
  std::map<int32_t, std::vector<int32_t>> lexical_tops;
  for (int32_t node : pda_.stacks(s)) {
    const int32_t pos = pda_.node_pos(node);
    if (g.lexical_at(pos))
      lexical_tops[pda_.node_parent(node)].push_back(pos);
    else
      out.push_back(TopFrames{grammar_->tokens_for({pos}, {}), pda_.node_parent(node)});
  }
  const int32_t horizon = grammar_->vocab().max_token_bytes();
  for (auto& [parent, tops] : lexical_tops) {
    std::sort(tops.begin(), tops.end());
    tops.erase(std::unique(tops.begin(), tops.end()), tops.end());
    // Frames that resume farther than the longest token are never reached: the chain stops
    // there, so the many stacks of a long counted string's blocks that differ only farther down
    // share one sort.
    std::vector<int32_t> chain;
    int32_t below = parent;
    for (int64_t reach = 0; below > Pda::kSentinel && g.lexical_at(pda_.node_pos(below)) && reach <= horizon;) {
      chain.push_back(pda_.node_pos(below));
      reach += g.rest_min_bytes[pda_.node_pos(below)];
      below = pda_.node_parent(below);
    }
    out.push_back(TopFrames{grammar_->tokens_for(tops, chain), below});
  }
  return top_frames_[s] = std::move(out);
}

void GrammarMatcher::fill_mask(uint64_t* words) {
  const TokenVocab& vocab = grammar_->vocab();
  std::memset(words, 0, static_cast<size_t>(vocab.n_words()) * 8);
  const Pda::StateId s = history_.back();
  if (s < 0) return;
  seen_.clear();
  for (const TopFrames& top : top_frames(s)) {
    const PositionTokens& tokens = *top.tokens;
    if (std::find(seen_.begin(), seen_.end(), &tokens) == seen_.end()) {
      seen_.push_back(&tokens);
      tokens.accepted.or_into(words);
    }
    if (tokens.dependent.empty()) continue;
    // Where those frames return to: the rest of each dependent token is read from there.
    const Pda::StateId cont = pda_.expand_node(top.below);
    if (cont < 0) continue;
    for (const DependentRun& run : tokens.dependent) allow_dependent(pda_, cont, run, vocab, words);
  }
  if (pda_.accepting(s))
    for (int32_t t : vocab.stop_tokens()) words[t >> 6] |= uint64_t{1} << (t & 63);
}

std::vector<uint64_t> GrammarMatcher::mask() {
  std::vector<uint64_t> words(grammar_->vocab().n_words());
  fill_mask(words.data());
  return words;
}

bool GrammarMatcher::accept_token(int32_t token) {
  const TokenVocab& vocab = grammar_->vocab();
  const Pda::StateId s = history_.back();
  if (s < 0 || token < 0 || token >= vocab.n_vocab()) return false;
  const auto& stops = vocab.stop_tokens();
  if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
    if (!pda_.accepting(s)) return false;
    history_.push_back(kTerminated);
    return true;
  }
  const std::string& b = vocab.bytes(token);
  if (b.empty()) return false;
  const Pda::StateId next = pda_.step(s, reinterpret_cast<const uint8_t*>(b.data()), b.size());
  if (next == Pda::kDead) return false;
  history_.push_back(next);
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  const Pda::StateId s = history_.back();
  if (s < 0) return false;
  const Pda::StateId next = pda_.step(s, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (next == Pda::kDead) return false;
  history_.push_back(next);
  return true;
}

void GrammarMatcher::rollback(int32_t n) {
  n = std::clamp(n, 0, n_accepted());
  history_.resize(history_.size() - n);
}

bool GrammarMatcher::accepting() const { return history_.back() >= 0 && pda_.accepting(history_.back()); }

bool GrammarMatcher::can_continue() const {
  return history_.back() >= 0 && !pda_.stacks(history_.back()).empty();
}

bool GrammarMatcher::terminated() const { return history_.back() == kTerminated; }

std::string GrammarMatcher::forced_bytes(size_t max) {
  std::string out;
  Pda::StateId s = history_.back();
  while (s >= 0 && out.size() < max && !pda_.accepting(s)) {
    const ByteSet next = pda_.next_bytes(s);
    if (next.count() != 1) break;
    uint8_t b = 0;
    while (!next.has(b)) ++b;
    out.push_back(static_cast<char>(b));
    s = pda_.step(s, b);
  }
  return out;
}

}  // namespace ridge::grammar
