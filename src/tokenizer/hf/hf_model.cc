// The three tokenizer.json models on one pre-tokenized word, as tokenizers 0.22 runs them:
// BPE (lowest merge rank first, leftmost on ties), Unigram (Viterbi over the vocabulary's scores)
// and WordPiece (greedy longest match).
#include <fmt/format.h>

#include <queue>

#include "core/error.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {

namespace {

size_t char_length(std::string_view text, size_t offset) {
  return std::min(text.size() - offset, utf8::sequence_length(static_cast<uint8_t>(text[offset])));
}

std::string byte_token_name(uint8_t byte) { return fmt::format("<0x{:02X}>", byte); }

struct Symbol {
  int32_t id;
  int prev, next;
  bool removed;
};

struct Merge {
  uint32_t rank;
  int pos;
  int32_t new_id;
  bool operator<(const Merge& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }  // min-heap
};

// Unigram's kUnkPenalty: an unknown character scores this much below the worst piece.
constexpr double kUnkPenalty = 10.0;

}  // namespace

void Model::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  switch (type) {
    case ModelType::kBpe: tokenize_bpe(word, out); break;
    case ModelType::kUnigram: tokenize_unigram(word, out); break;
    case ModelType::kWordPiece: tokenize_wordpiece(word, out); break;
  }
}

void Model::tokenize_bpe(std::string_view word, std::vector<int32_t>& out) const {
  if (ignore_merges) {
    if (const int32_t id = find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  // One symbol per character; an unknown one becomes byte tokens, or (fused) unknown tokens.
  std::vector<Symbol> symbols;
  auto add = [&](int32_t id) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, false});
  };
  bool unk_pending = false;
  for (size_t offset = 0; offset < word.size();) {
    const size_t len = char_length(word, offset);
    std::string s(word.substr(offset, len));
    if (offset > 0) s.insert(0, continuing_prefix);
    if (offset + len == word.size()) s += end_of_word_suffix;
    offset += len;
    if (const int32_t id = find(s); id >= 0) {
      if (unk_pending) add(unk), unk_pending = false;
      add(id);
      continue;
    }
    if (byte_fallback) {
      std::vector<int32_t> bytes;
      for (char c : s)
        if (const int32_t id = find(byte_token_name(static_cast<uint8_t>(c))); id >= 0) bytes.push_back(id);
      if (bytes.size() == s.size()) {  // as tokenizers: a pending unknown waits until after them
        for (int32_t id : bytes) add(id);
        continue;
      }
    }
    if (unk < 0) continue;  // no unknown token: the character is dropped
    if (unk_pending && !fuse_unk) add(unk);
    unk_pending = true;
  }
  if (unk_pending) add(unk);
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Merge> queue;
  auto consider = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    auto it = merges.find(pair_key(symbols[left].id, symbols[symbols[left].next].id));
    if (it != merges.end()) queue.push({it->second.first, left, it->second.second});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Merge top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.removed || left.next < 0) continue;
    const Symbol& right = symbols[left.next];
    auto it = merges.find(pair_key(left.id, right.id));
    if (it == merges.end() || it->second.second != top.new_id) continue;  // stale entry
    left.id = top.new_id;
    symbols[left.next].removed = true;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    consider(left.prev);
    consider(top.pos);
  }
  for (const Symbol& s : symbols)
    if (!s.removed) out.push_back(s.id);
}

void Model::tokenize_unigram(std::string_view word, std::vector<int32_t>& out) const {
  struct Best {
    double score = 0.0;
    size_t start = SIZE_MAX;  // SIZE_MAX: unreached
    int32_t id = -1;
  };
  const double unk_score = min_score - kUnkPenalty;
  std::vector<Best> best(word.size() + 1);
  best[0].start = 0;
  for (size_t start = 0; start < word.size();) {
    const double so_far = best[start].score;
    const size_t char_len = char_length(word, start);
    auto offer = [&](size_t end, double piece_score, int32_t id) {
      Best& b = best[end];
      if (b.start == SIZE_MAX || so_far + piece_score > b.score) b = {so_far + piece_score, start, id};
    };
    bool single_char = false;
    for (size_t end = start + 1; end <= word.size() && end - start <= longest_token; ++end) {
      const int32_t id = find(word.substr(start, end - start));
      if (id < 0) continue;
      offer(end, score[id], id);
      single_char = single_char || end - start == char_len;
    }
    if (!single_char) {
      if (unk < 0) fail("tokenizer: a Unigram model meets an unknown character and has no unk_id");
      offer(start + char_len, unk_score, unk);
    }
    start += char_len;
  }
  // Walk back; consecutive unknown pieces fuse into one string, then map strings to ids.
  std::vector<std::string_view> pieces;
  std::vector<bool> unknown;
  for (size_t end = word.size(); end > 0;) {
    const Best& b = best[end];
    const std::string_view piece = word.substr(b.start, end - b.start);
    if (b.id == unk && !unknown.empty() && unknown.back()) {
      pieces.back() = word.substr(b.start, pieces.back().size() + piece.size());
    } else {
      pieces.push_back(piece);
      unknown.push_back(b.id == unk);
    }
    end = b.start;
  }
  for (size_t i = pieces.size(); i-- > 0;) {
    if (const int32_t id = find(pieces[i]); id >= 0) {
      out.push_back(id);
      continue;
    }
    if (byte_fallback) {
      std::vector<int32_t> bytes;
      for (char c : pieces[i])
        if (const int32_t id = find(byte_token_name(static_cast<uint8_t>(c))); id >= 0) bytes.push_back(id);
      if (bytes.size() == pieces[i].size()) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    out.push_back(unk);
  }
}

void Model::tokenize_wordpiece(std::string_view word, std::vector<int32_t>& out) const {
  size_t chars = 0;
  for (size_t offset = 0; offset < word.size(); offset += char_length(word, offset)) ++chars;
  if (unk < 0 && chars > max_input_chars_per_word) fail("tokenizer: WordPiece has no unk_token for a long word");
  std::vector<int32_t> pieces;
  bool bad = chars > max_input_chars_per_word;
  for (size_t start = 0; start < word.size() && !bad;) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::string sub(word.substr(start, end - start));
      if (start > 0) sub.insert(0, continuing_prefix);
      if ((found = find(sub)) >= 0) break;
      do --end;  // back off one character
      while (end > start && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80);
    }
    if (found < 0) bad = true;
    else pieces.push_back(found), start = end;
  }
  if (!bad) {
    out.insert(out.end(), pieces.begin(), pieces.end());
    return;
  }
  if (unk < 0) fail("tokenizer: WordPiece has no unk_token for a word it cannot split");
  out.push_back(unk);
}

}  // namespace ridge::hf
