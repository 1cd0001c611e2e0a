// WordPiece encoding (added tokens, normaliser, pre-tokenizer, greedy pieces, template, truncation)
// and decoding. The loaders are in wordpiece_load.cc and wordpiece_gguf.cc.
#include "tokenizer/wordpiece.h"

#include <algorithm>

#include "core/error.h"

namespace ridge {

namespace {

bool is_continuation_byte(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The WordPiece decoder's cleanup of tokenization artifacts, applied to each token in this order.
void cleanup(std::string& token) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(token, from, to);
}

}  // namespace

void WordPieceTokenizer::set_vocab(std::vector<std::string> tokens) {
  text_ = std::move(tokens);
  special_.assign(text_.size(), 0);
  model_ids_.clear();
  model_ids_.reserve(text_.size());
  longest_piece_ = 0;
  for (size_t id = 0; id < text_.size(); ++id) {
    if (text_[id].empty()) continue;                   // a gap in the ids
    model_ids_[text_[id]] = static_cast<int32_t>(id);  // a repeated token: the last id wins, as in tokenizers
    longest_piece_ = std::max(longest_piece_, text_[id].size());
  }
}

void WordPieceTokenizer::add_token(const AddedToken& token) {
  if (token.id < 0) fail("WordPiece: added token '{}' has a negative id", token.content);
  if (static_cast<size_t>(token.id) >= text_.size()) {
    text_.resize(token.id + 1);
    special_.resize(token.id + 1, 0);
  }
  text_[token.id] = token.content;
  special_[token.id] = token.special;
  added_ids_[token.content] = token.id;
  added_.add(token, token.normalized ? normalizer_.normalize(token.content) : token.content);
}

void WordPieceTokenizer::set_bert_template(int32_t cls, int32_t sep) {
  cls_ = cls, sep_ = sep;
  if (cls < 0 || sep < 0) return;  // no specials to add: the sequences alone
  single_ = {{cls, 0}, {TemplateItem::kSequenceA, 0}, {sep, 0}};
  pair_ = {{cls, 0}, {TemplateItem::kSequenceA, 0}, {sep, 0}, {TemplateItem::kSequenceB, 1}, {sep, 1}};
}

int64_t WordPieceTokenizer::special_count(bool pair) const {
  const auto& items = pair ? pair_ : single_;
  return std::count_if(items.begin(), items.end(), [](const TemplateItem& item) { return item.id >= 0; });
}

void WordPieceTokenizer::word_pieces(std::string_view word, std::vector<int32_t>& out) const {
  auto unknown = [&] {
    if (unk_ < 0) fail("WordPiece: '{}' cannot be tokenized and the vocabulary has no '{}'", word, unk_token_);
    out.push_back(unk_);
  };
  const auto n_chars = std::count_if(word.begin(), word.end(), [](char c) { return !is_continuation_byte(c); });
  if (n_chars > max_chars_) return unknown();
  const size_t first = out.size();
  std::string candidate;
  size_t start = 0;
  while (start < word.size()) {
    // Longest first: from the longest piece the vocabulary could hold down to one character.
    const size_t prefix = start > 0 ? prefix_.size() : 0;
    const size_t room = longest_piece_ > prefix ? longest_piece_ - prefix : 0;
    size_t end = std::min(word.size(), start + room);
    int32_t id = -1;
    for (; end > start; --end) {
      if (end < word.size() && is_continuation_byte(word[end])) continue;
      candidate.assign(start > 0 ? prefix_ : std::string());
      candidate.append(word.substr(start, end - start));
      const auto it = model_ids_.find(candidate);
      if (it != model_ids_.end()) {
        id = it->second;
        break;
      }
    }
    if (id < 0) {  // one unmatched stretch makes the whole word unknown
      out.resize(first);
      return unknown();
    }
    out.push_back(id);
    start = end;
  }
}

void WordPieceTokenizer::text_pieces(std::string_view text, std::vector<int32_t>& out) const {
  const std::string normalized = normalizer_.normalize(text);
  for (const TextSpan& span : added_.split(normalized, /*normalized=*/true)) {
    if (span.token >= 0) {
      out.push_back(span.token);
      continue;
    }
    for (const std::string& word :
         splitter_.split(std::string_view(normalized).substr(span.begin, span.end - span.begin)))
      word_pieces(word, out);
  }
}

std::vector<int32_t> WordPieceTokenizer::encode_words(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const TextSpan& span : added_.split(text, /*normalized=*/false)) {
    if (span.token >= 0) {
      ids.push_back(span.token);
    } else {
      text_pieces(text.substr(span.begin, span.end - span.begin), ids);
    }
  }
  return ids;
}

std::vector<int32_t> WordPieceTokenizer::apply_template(const std::vector<TemplateItem>& items,
                                                        const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                                                        std::vector<int32_t>* type_ids) const {
  std::vector<int32_t> ids;
  for (const TemplateItem& item : items) {
    if (item.id >= 0) {
      ids.push_back(item.id);
      if (type_ids) type_ids->push_back(item.type_id);
      continue;
    }
    const std::vector<int32_t>& seq = item.id == TemplateItem::kSequenceA ? a : b;
    ids.insert(ids.end(), seq.begin(), seq.end());
    if (type_ids) type_ids->insert(type_ids->end(), seq.size(), item.type_id);
  }
  return ids;
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text, bool add_special, int64_t max_tokens) const {
  std::vector<int32_t> words = encode_words(text);
  if (max_tokens > 0) {
    const int64_t room = max_tokens - (add_special ? special_count(false) : 0);
    if (room < 0) fail("WordPiece: max_tokens {} is less than the {} special tokens", max_tokens, special_count(false));
    if (static_cast<int64_t>(words.size()) > room) words.resize(room);
  }
  return add_special ? apply_template(single_, words, {}, nullptr) : words;
}

void WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b, int64_t max_tokens,
                                     std::vector<int32_t>& ids, std::vector<int32_t>& type_ids) const {
  std::vector<int32_t> first = encode_words(a), second = encode_words(b);
  if (max_tokens > 0) {
    const int64_t room = max_tokens - special_count(true);
    if (room < 0) fail("WordPiece: max_tokens {} is less than the {} special tokens", max_tokens, special_count(true));
    auto n1 = static_cast<int64_t>(first.size()), n2 = static_cast<int64_t>(second.size());
    if (n1 + n2 > room) {
      // tokenizers' longest_first: the shorter keeps its length if the longer can take the rest,
      // else each gets half (the longer one the odd token).
      const bool swap = n1 > n2;
      int64_t shorter = std::min(n1, n2), longer = std::max(n1, n2);
      longer = shorter > room ? shorter : std::max(shorter, room - shorter);
      if (shorter + longer > room) shorter = room / 2, longer = shorter + room % 2;
      if (swap) std::swap(shorter, longer);
      first.resize(std::min(n1, shorter));
      second.resize(std::min(n2, longer));
    }
  }
  type_ids.clear();
  ids = apply_template(pair_, first, second, &type_ids);
}

std::string WordPieceTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  size_t n = 0;  // tokens kept so far
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab() || text_[id].empty() || (skip_special && special_[id])) continue;
    std::string token = text_[id];
    if (!decoder_wordpiece_) {
      if (n > 0) out += ' ';
    } else {
      if (n > 0) {
        if (token.starts_with(decoder_prefix_)) {
          token.erase(0, decoder_prefix_.size());
        } else {
          token.insert(0, 1, ' ');
        }
      }
      if (decoder_cleanup_) cleanup(token);
    }
    out += token;
    ++n;
  }
  return out;
}

const std::string& WordPieceTokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= n_vocab()) fail("WordPiece: token id {} is outside the vocabulary of {}", id, n_vocab());
  return text_[id];
}

int32_t WordPieceTokenizer::find_token(std::string_view text) const {
  if (auto it = added_ids_.find(text); it != added_ids_.end()) return it->second;
  if (auto it = model_ids_.find(text); it != model_ids_.end()) return it->second;
  return -1;
}

bool WordPieceTokenizer::is_special(int32_t id) const { return id >= 0 && id < n_vocab() && special_[id]; }

}  // namespace ridge
