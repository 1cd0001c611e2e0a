#include "grammar/matcher.h"

#include <algorithm>
#include <cstring>

namespace ridge::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), pda_(grammar_->flat()) {
  history_.push_back(pda_.initial());
}

const GrammarMatcher::TopFrames& GrammarMatcher::top_frames(int32_t node) {
  if (auto it = top_frames_.find(node); it != top_frames_.end()) return it->second;
  // The top frame, and below it the frames of lexical rules while the top one is lexical too.
  const FlatGrammar& g = pda_.grammar();
  std::vector<int32_t> chain{pda_.node_pos(node)};
  int32_t below = pda_.node_parent(node);
  if (g.lexical_at(chain[0]))
    while (below > Pda::kSentinel && g.lexical_at(pda_.node_pos(below))) {
      chain.push_back(pda_.node_pos(below));
      below = pda_.node_parent(below);
    }
  return top_frames_[node] = TopFrames{grammar_->tokens_for(chain), below};
}

void GrammarMatcher::fill_mask(uint64_t* words) {
  const TokenVocab& vocab = grammar_->vocab();
  std::memset(words, 0, static_cast<size_t>(vocab.n_words()) * 8);
  const Pda::StateId s = history_.back();
  if (s < 0) return;
  seen_.clear();
  for (int32_t node : pda_.stacks(s)) {
    const TopFrames& top = top_frames(node);
    const PositionTokens& tokens = *top.tokens;
    if (std::find(seen_.begin(), seen_.end(), &tokens) == seen_.end()) {
      seen_.push_back(&tokens);
      tokens.accepted.or_into(words);
    }
    if (tokens.dependent_tokens.empty()) continue;
    // Where those frames return to: the rest of each dependent token is read from there.
    const Pda::StateId cont = pda_.expand_node(top.below);
    if (cont < 0) continue;
    for (size_t i = 0; i < tokens.dependent_tokens.size(); ++i) {
      const int32_t t = tokens.dependent_tokens[i];
      if ((words[t >> 6] >> (t & 63)) & 1) continue;
      const std::string& b = vocab.bytes(t);
      const size_t k = tokens.dependent_offsets[i];
      if (pda_.step(cont, reinterpret_cast<const uint8_t*>(b.data()) + k, b.size() - k) != Pda::kDead)
        words[t >> 6] |= uint64_t{1} << (t & 63);
    }
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
