// Hand-written matchers for the pre-tokenizer regexes. They follow llama.cpp's matchers
// decision for decision (not the textbook regex semantics), because token ids must agree.
#include "tokenizer/word_splitters.h"

#include "tokenizer/unicode_data.h"

namespace ridge::pretok {

namespace {

constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

// One chunk of the codepoint array; reads outside it see "no codepoint" (flags 0).
struct Window {
  const std::vector<uint32_t>& cpts;
  size_t begin, end;
  uint32_t cpt(size_t pos) const { return pos >= begin && pos < end ? cpts[pos] : kOutOfRange; }
  uint16_t flags(size_t pos) const { return pos >= begin && pos < end ? unicode::codepoint_flags(cpts[pos]) : 0; }
};

// Collects chunk ends within one window.
struct Emitter {
  Chunks& out;
  size_t prev_end;
  void cut(size_t end) {
    if (end > prev_end) out.push_back(end - prev_end);
    prev_end = end;
  }
};

bool letter(uint16_t f) { return f & unicode::kLetter; }
bool number(uint16_t f) { return f & unicode::kNumber; }
bool space(uint16_t f) { return f & unicode::kWhitespace; }
// [^\s\p{L}\p{N}] for a real codepoint.
bool other(uint16_t f) { return !(f & (unicode::kWhitespace | unicode::kLetter | unicode::kNumber)) && f != 0; }

// Simple lowercase mapping restricted to what the contraction test can observe: no non-ASCII
// codepoint lowercases to s, t, r, e, v, m, l or d.
uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// Length of a contraction ('s 't 're 've 'm 'll 'd) at pos, or 0.
size_t contraction_length(const Window& w, size_t pos, bool any_case) {
  if (w.cpt(pos) != '\'' || pos + 1 >= w.end) return 0;
  auto lower = [&](size_t p) { return any_case ? ascii_lower(w.cpt(p)) : w.cpt(p); };
  const uint32_t c1 = lower(pos + 1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
  if (pos + 2 >= w.end) return 0;
  const uint32_t c2 = lower(pos + 2);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
  return 0;
}

template <typename SplitWindow>
Chunks for_each_window(const std::vector<uint32_t>& cpts, const Chunks& chunks, SplitWindow split) {
  Chunks out;
  out.reserve(chunks.size());
  size_t start = 0;
  for (size_t len : chunks) {
    Window w{cpts, start, start + len};
    Emitter e{out, start};
    split(w, e);
    start += len;
  }
  return out;
}

}  // namespace

Chunks split_gpt2(const std::vector<uint32_t>& cpts, const Chunks& chunks) {
  return for_each_window(cpts, chunks, [](const Window& w, Emitter& e) {
    for (size_t pos = w.begin; pos < w.end;) {
      const uint32_t cpt = w.cpt(pos);
      if (size_t n = contraction_length(w, pos, false)) {
        e.cut(pos += n);
        continue;
      }
      // An optional leading space joins a following letter / number / other run.
      const bool lead_space = cpt == ' ';
      uint16_t f = lead_space ? w.flags(pos + 1) : w.flags(pos);
      if (letter(f) || number(f) || other(f)) {
        auto same_class = letter(f) ? letter : number(f) ? number : other;
        pos += lead_space;
        while (same_class(f)) f = w.flags(++pos);
        e.cut(pos);
        continue;
      }
      size_t n_space = 0;
      while (space(w.flags(pos + n_space))) ++n_space;
      if (n_space > 1 && w.cpt(pos + n_space) != kOutOfRange) {
        e.cut(pos += n_space - 1);  // \s+(?!\S): leave the last space to the next word
      } else if (n_space > 0) {
        e.cut(pos += n_space);
      } else {
        e.cut(++pos);
      }
    }
  });
}

Chunks split_llama3(const std::vector<uint32_t>& cpts, const Chunks& chunks, size_t max_digits) {
  return for_each_window(cpts, chunks, [max_digits](const Window& w, Emitter& e) {
    for (size_t pos = w.begin; pos < w.end;) {
      const uint32_t cpt = w.cpt(pos);
      const uint16_t f = w.flags(pos);
      if (size_t n = contraction_length(w, pos, true)) {
        e.cut(pos += n);
        continue;
      }
      // [^\r\n\p{L}\p{N}]?\p{L}+
      if (cpt != '\r' && cpt != '\n' && !number(f) && (letter(f) || letter(w.flags(pos + 1)))) {
        ++pos;
        while (letter(w.flags(pos))) ++pos;
        e.cut(pos);
        continue;
      }
      // \p{N}{1,max_digits}
      if (number(f)) {
        size_t run_start = pos;
        while (number(w.flags(pos))) {
          if (++pos - run_start >= max_digits) {
            e.cut(pos);
            run_start = pos;
          }
        }
        e.cut(pos);
        continue;
      }
      // " ?[^\s\p{L}\p{N}]+[\r\n]*" (the first codepoint only needs to exist)
      uint16_t f2 = cpt == ' ' ? w.flags(pos + 1) : f;
      if (!(f2 & (unicode::kWhitespace | unicode::kLetter | unicode::kNumber)) && f != 0) {
        pos += cpt == ' ';
        while (other(f2)) f2 = w.flags(++pos);
        while (w.cpt(pos) == '\r' || w.cpt(pos) == '\n') ++pos;
        e.cut(pos);
        continue;
      }
      size_t n_space = 0, after_last_newline = 0;
      while (space(w.flags(pos + n_space))) {
        const uint32_t c = w.cpt(pos + n_space);
        if (c == '\r' || c == '\n') after_last_newline = pos + n_space + 1;
        ++n_space;
      }
      if (after_last_newline > 0) {
        e.cut(pos = after_last_newline);  // \s*[\r\n]+
      } else if (n_space > 1 && w.cpt(pos + n_space) != kOutOfRange) {
        e.cut(pos += n_space - 1);  // \s+(?!\S)
      } else if (n_space > 0) {
        e.cut(pos += n_space);
      } else {
        e.cut(++pos);
      }
    }
  });
}

namespace {

// llama.cpp runs these patterns with std::regex over a text where each non-ASCII codepoint is
// replaced by one byte standing for its category; a non-ASCII whitespace never matches \p{..}.
bool non_ascii_in(uint32_t cpt, uint16_t category) {
  const uint16_t f = unicode::codepoint_flags(cpt);
  return !(f & unicode::kWhitespace) && (f & category);
}

bool is_number_class(uint32_t c) { return c < 128 ? (c >= '0' && c <= '9') : non_ascii_in(c, unicode::kNumber); }

bool is_punctuation_class(uint32_t c) {
  if (c < 128) return c != '`' && ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E));
  return non_ascii_in(c, unicode::kPunctuation);
}

bool is_ascii_digit(uint32_t c) { return c >= '0' && c <= '9'; }

// Length of the match starting exactly at pos, or 0.
size_t match_at(const Window& w, size_t pos, Isolate what) {
  switch (what) {
    case Isolate::kEachNumber:
      return is_number_class(w.cpts[pos]) ? 1 : 0;
    case Isolate::kNumberRuns:
    case Isolate::kPunctuationRuns: {
      auto in_class = what == Isolate::kNumberRuns ? is_number_class : is_punctuation_class;
      size_t end = pos;
      while (end < w.end && in_class(w.cpts[end])) ++end;
      return end - pos;
    }
    case Isolate::kAsciiDigitTriples:
      if (pos + 3 > w.end) return 0;
      return is_ascii_digit(w.cpts[pos]) && is_ascii_digit(w.cpts[pos + 1]) && is_ascii_digit(w.cpts[pos + 2]) ? 3 : 0;
  }
  return 0;
}

}  // namespace

Chunks isolate(const std::vector<uint32_t>& cpts, const Chunks& chunks, Isolate what) {
  return for_each_window(cpts, chunks, [what](const Window& w, Emitter& e) {
    for (size_t pos = w.begin; pos < w.end;) {
      if (size_t n = match_at(w, pos, what)) {
        e.cut(pos);  // the stretch before the match, if any
        e.cut(pos += n);
      } else {
        ++pos;
      }
    }
    e.cut(w.end);
  });
}

}  // namespace ridge::pretok
