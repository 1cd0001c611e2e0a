// BPE merging with a priority queue of candidate pairs; a popped pair whose symbols changed
// since it was queued is stale and skipped (same order of merges as llama.cpp).
#include "tokenizer/bpe.h"

#include <algorithm>
#include <queue>
#include <string>

#include "tokenizer/byte_encoding.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace ridge {

namespace {

struct Symbol {
  int prev, next;
  size_t offset, len;  // into the word; len 0 once merged away
};

struct Pair {
  int left, right;
  int rank;
  std::string text;  // the merged text when queued, to detect stale pairs
};

struct LowestRankFirst {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

std::vector<std::string> bpe_merge_word(const Vocab& vocab, const std::string& word) {
  if (vocab.pre.ignore_merges && vocab.find(word) >= 0) return {word};
  std::vector<Symbol> symbols;
  for (size_t offset = 0; offset < word.size();) {
    const size_t len = std::min(word.size() - offset, utf8::sequence_length(static_cast<uint8_t>(word[offset])));
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, offset + len == word.size() ? -1 : index + 1, offset, len});
    offset += len;
  }
  auto text_of = [&](const Symbol& s) { return std::string_view(word).substr(s.offset, s.len); };
  std::priority_queue<Pair, std::vector<Pair>, LowestRankFirst> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string_view l = text_of(symbols[left]), r = text_of(symbols[right]);
    const int rank = vocab.rank(l, r);
    if (rank < 0) return;
    queue.push({left, right, rank, std::string(l) + std::string(r)});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Pair pair = queue.top();
    queue.pop();
    Symbol& left = symbols[pair.left];
    Symbol& right = symbols[pair.right];
    if (left.len == 0 || right.len == 0) continue;
    if (left.len + right.len != pair.text.size() || word.compare(left.offset, pair.text.size(), pair.text) != 0 ||
        left.offset + left.len != right.offset)
      continue;  // stale: one side changed since this pair was queued
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = pair.left;
    consider(left.prev, pair.left);
    consider(pair.left, left.next);
  }

  std::vector<std::string> pieces;
  for (const Symbol& s : symbols)
    if (s.len > 0) pieces.emplace_back(text_of(s));
  return pieces;
}

void bpe_encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : pre_tokenize(vocab.pre.type, text)) {
    std::string encoded;
    encoded.reserve(word.size() * 2);
    for (char c : word) encoded += byte_encoding::byte_to_text(static_cast<uint8_t>(c));
    for (const std::string& piece : bpe_merge_word(vocab, encoded)) {
      if (int32_t id = vocab.find(piece); id >= 0) {
        out.push_back(id);
        continue;
      }
      // No such token: fall back to single-byte tokens, dropping bytes that have none.
      for (char c : piece)
        if (int32_t id = vocab.find(std::string(1, c)); id >= 0) out.push_back(id);
    }
  }
}

}  // namespace ridge
