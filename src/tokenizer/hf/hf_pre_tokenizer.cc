// tokenizer.json pre-tokenizers: every step splits each piece as tokenizers' NormalizedString::split
// does: the pattern's matches and the stretches between them, kept, dropped or glued by behavior.
#include "tokenizer/byte_encoding.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/unicode_data.h"
#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_splitters.h"

namespace ridge::hf {

namespace {

struct Segment {
  size_t begin, end;
  bool match;
};

// Byte offsets of consecutive codepoint-length chunks.
std::vector<Segment> chunks_to_segments(std::string_view text, const pretok::Chunks& chunks) {
  std::vector<Segment> out;
  size_t offset = 0;
  for (size_t len : chunks) {
    const size_t begin = offset;
    for (size_t i = 0; i < len; ++i) utf8::decode_lenient(text, offset);
    out.push_back({begin, offset, true});
  }
  return out;
}

// Every character for which `is_match` holds is a match of its own.
template <typename Predicate>
std::vector<Segment> char_matches(std::string_view text, Predicate is_match) {
  std::vector<Segment> out;
  size_t gap = 0;
  for (size_t offset = 0; offset < text.size();) {
    const size_t begin = offset;
    const uint32_t cpt = utf8::decode_lenient(text, offset);
    if (!is_match(cpt)) continue;
    if (gap < begin) out.push_back({gap, begin, false});
    out.push_back({begin, offset, true});
    gap = offset;
  }
  if (gap < text.size()) out.push_back({gap, text.size(), false});
  return out;
}

// \w+|[^\w\s]+ : runs of word characters and runs of other non-space characters.
std::vector<Segment> word_or_symbol_runs(std::string_view text) {
  std::vector<Segment> out;
  int run_kind = -1;  // 0 word, 1 symbol, -1 whitespace / none
  for (size_t offset = 0; offset < text.size();) {
    const size_t begin = offset;
    const uint32_t cpt = utf8::decode_lenient(text, offset);
    const int kind = unicode::is_bert_whitespace(cpt) ? -1 : is_regex_word_char(cpt) ? 0 : 1;
    if (kind >= 0 && kind == run_kind) {
      out.back().end = offset;
    } else {
      if (out.empty() ? begin > 0 : out.back().end < begin) out.push_back({out.empty() ? 0 : out.back().end, begin, false});
      if (kind >= 0) out.push_back({begin, offset, true});
    }
    run_kind = kind;
  }
  const size_t covered = out.empty() ? 0 : out.back().end;
  if (covered < text.size()) out.push_back({covered, text.size(), false});
  return out;
}

std::vector<Segment> literal_matches(std::string_view text, std::string_view literal) {
  std::vector<Segment> out;
  size_t gap = 0;
  for (size_t pos = text.find(literal); !literal.empty() && pos != std::string_view::npos;
       pos = text.find(literal, pos + literal.size())) {
    if (gap < pos) out.push_back({gap, pos, false});
    out.push_back({pos, pos + literal.size(), true});
    gap = pos + literal.size();
  }
  if (gap < text.size()) out.push_back({gap, text.size(), false});
  return out;
}

std::vector<Segment> regex_matches(std::string_view text, const Regex& regex) {
  const std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  std::vector<size_t> byte_at(cpts.size() + 1, text.size());  // byte offset of each code point
  for (size_t i = 0, offset = 0; i < cpts.size(); ++i) {
    byte_at[i] = offset;
    utf8::decode_lenient(text, offset);
  }
  std::vector<Segment> out;
  size_t gap = 0;
  for (const auto& [begin, end] : regex.find_all(cpts)) {
    if (gap < byte_at[begin]) out.push_back({gap, byte_at[begin], false});
    out.push_back({byte_at[begin], byte_at[end], true});
    gap = byte_at[end];
  }
  if (gap < text.size()) out.push_back({gap, text.size(), false});
  return out;
}

std::vector<Segment> find_matches(std::string_view text, const PreTokenizerStep& step) {
  const SplitPattern pattern = step.pattern;
  if (pattern == SplitPattern::kRegex) return regex_matches(text, *step.regex);
  if (pattern == SplitPattern::kGpt2 || pattern == SplitPattern::kLlama3 || pattern == SplitPattern::kQwen2) {
    // These regexes match every character, so their matches are the pre-tokenizer's words.
    const std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
    const pretok::Chunks all = {cpts.size()};
    const pretok::Chunks words = pattern == SplitPattern::kGpt2    ? pretok::split_gpt2(cpts, all)
                                 : pattern == SplitPattern::kLlama3 ? pretok::split_llama3(cpts, all, 3)
                                                                    : pretok::split_llama3(cpts, all, 1);
    return chunks_to_segments(text, words);
  }
  switch (pattern) {
    case SplitPattern::kWhitespace: return char_matches(text, unicode::is_bert_whitespace);
    case SplitPattern::kPunctuation: return char_matches(text, unicode::is_bert_punctuation);
    case SplitPattern::kDigit: return char_matches(text, unicode::is_number);
    case SplitPattern::kWordsOrSymbols: return word_or_symbol_runs(text);
    default: return literal_matches(text, step.literal);
  }
}

// The kept parts of `segments`, as tokenizers' split() applies a behavior.
std::vector<Segment> apply_behavior(std::vector<Segment> segments, Behavior behavior) {
  std::vector<Segment> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      for (Segment& s : segments) out.push_back({s.begin, s.end, false});
      return out;
    case Behavior::kRemoved:
      for (Segment& s : segments)
        if (!s.match) out.push_back(s);
      return out;
    case Behavior::kContiguous:
      for (const Segment& s : segments) {
        if (s.match == previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back({s.begin, s.end, false});
        previous_match = s.match;
      }
      return out;
    case Behavior::kMergedWithPrevious:
      for (const Segment& s : segments) {
        if (s.match && !previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back({s.begin, s.end, false});
        previous_match = s.match;
      }
      return out;
    case Behavior::kMergedWithNext:
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) out.back().begin = it->begin;
        else out.push_back({it->begin, it->end, false});
        previous_match = it->match;
      }
      return {out.rbegin(), out.rend()};
  }
  return out;
}

void split_piece(const PreTokenizerStep& step, const Piece& piece, std::vector<Piece>& out) {
  std::vector<Segment> segments = find_matches(piece.text, step);
  if (step.invert)
    for (Segment& s : segments) s.match = !s.match;
  for (const Segment& s : apply_behavior(std::move(segments), step.behavior))
    if (s.end > s.begin) out.push_back({piece.text.substr(s.begin, s.end - s.begin), piece.at_start && s.begin == 0});
}

void byte_level(const PreTokenizerStep& step, Piece piece, std::vector<Piece>& out) {
  if (step.add_prefix_space && !piece.text.starts_with(' ')) piece.text = " " + piece.text;
  std::vector<Piece> words;
  if (step.use_regex) {
    split_piece({.pattern = SplitPattern::kGpt2}, piece, words);
  } else {
    words.push_back(std::move(piece));
  }
  for (Piece& word : words) {
    std::string mapped;
    mapped.reserve(word.text.size() * 2);
    for (char c : word.text) mapped += byte_encoding::byte_to_text(static_cast<uint8_t>(c));
    out.push_back({std::move(mapped), word.at_start});
  }
}

void metaspace(const PreTokenizerStep& step, Piece piece, std::vector<Piece>& out) {
  std::string text;
  for (char c : piece.text) {
    if (c == ' ') text += step.replacement;
    else text.push_back(c);
  }
  const bool prepend = step.prepend == PreTokenizerStep::Prepend::kAlways ||
                       (step.prepend == PreTokenizerStep::Prepend::kFirst && piece.at_start);
  if (prepend && !text.starts_with(step.replacement)) text = step.replacement + text;
  piece.text = std::move(text);
  if (!step.split) {
    out.push_back(std::move(piece));
    return;
  }
  split_piece({.pattern = SplitPattern::kLiteral, .literal = step.replacement, .behavior = Behavior::kMergedWithNext},
              piece, out);
}

}  // namespace

std::vector<Piece> pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::vector<Piece> pieces) {
  for (const PreTokenizerStep& step : steps) {
    std::vector<Piece> next;
    next.reserve(pieces.size());
    for (Piece& piece : pieces) {
      switch (step.kind) {
        case PreTokenizerStep::kSplit: split_piece(step, piece, next); break;
        case PreTokenizerStep::kByteLevel: byte_level(step, std::move(piece), next); break;
        case PreTokenizerStep::kMetaspace: metaspace(step, std::move(piece), next); break;
      }
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace ridge::hf
