// SPM merging, as llama.cpp's llm_tokenizer_spm: highest score first, leftmost on ties; each
// merge is remembered so a merged symbol that is not itself a token can be split back.
#include "tokenizer/spm.h"

#include <algorithm>
#include <map>
#include <queue>
#include <string>

#include "tokenizer/utf8.h"

namespace ridge {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581

struct Symbol {
  int prev, next;
  size_t offset, len;
};

struct Pair {
  int left, right;
  float score;
  size_t len;
};

struct HighestScoreFirst {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmSession {
 public:
  SpmSession(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

  void encode(std::vector<int32_t>& out) {
    for (size_t offset = 0; offset < text_.size();) {
      const size_t len = std::min(text_.size() - offset, utf8::sequence_length(static_cast<uint8_t>(text_[offset])));
      const int index = static_cast<int>(symbols_.size());
      symbols_.push_back({index - 1, offset + len == text_.size() ? -1 : index + 1, offset, len});
      offset += len;
    }
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) consider(i - 1, i);
    while (!queue_.empty()) {
      const Pair pair = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[pair.left];
      Symbol& right = symbols_[pair.right];
      if (left.len == 0 || right.len == 0 || left.len + right.len != pair.len) continue;  // stale
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = pair.left;
      consider(left.prev, pair.left);
      consider(pair.left, left.next);
    }
    if (symbols_.empty()) return;
    for (int i = 0; i != -1; i = symbols_[i].next) resegment(symbols_[i].offset, symbols_[i].len, out);
  }

 private:
  void consider(int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string merged(text_.substr(symbols_[left].offset, symbols_[left].len + symbols_[right].len));
    const int32_t id = vocab_.find(merged);
    if (id < 0) return;
    queue_.push({left, right, vocab_.score[id], merged.size()});
    merged_from_[merged] = {left, right};  // the latest pair that produced this text
  }

  // Emit a symbol as its token, or split it back into the pair it was merged from, or bytes.
  void resegment(size_t offset, size_t len, std::vector<int32_t>& out) {
    const std::string text(text_.substr(offset, len));
    if (int32_t id = vocab_.find(text); id >= 0) {
      out.push_back(id);
      return;
    }
    auto it = merged_from_.find(text);
    if (it == merged_from_.end()) {
      for (char c : text) {
        int32_t id = vocab_.byte_token(static_cast<uint8_t>(c));
        if (id < 0) id = vocab_.unk;
        if (id >= 0) out.push_back(id);
      }
      return;
    }
    const auto [l, r] = it->second;
    resegment(symbols_[l].offset, symbols_[l].len, out);
    resegment(symbols_[r].offset, symbols_[r].len, out);
  }

  const Vocab& vocab_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Pair, std::vector<Pair>, HighestScoreFirst> queue_;
  std::map<std::string, std::pair<int, int>> merged_from_;
};

}  // namespace

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, from.size(), from) == 0) {
      out.append(to);
      i += from.size();
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

void spm_encode(const Vocab& vocab, std::string_view escaped_text, std::vector<int32_t>& out) {
  SpmSession(vocab, escaped_text).encode(out);
}

std::string spm_escape_spaces(std::string_view text) { return replace_all(text, " ", kSpaceMarker); }
std::string spm_unescape_spaces(std::string_view text) { return replace_all(text, kSpaceMarker, " "); }

}  // namespace ridge
