// Regex pattern text to a regex_ast tree: recursive descent over the ECMAScript grammar, with Annex B's
// leniencies that JSON Schema patterns rely on (a '{' that starts no quantifier, a lone ']' or '}',
// [\w-.] with a literal '-'). Every feature outside the supported subset is named in its error.
#include <algorithm>
#include <string>

#include "grammar/regex_ast.h"
#include "grammar/utf8_text.h"

namespace ridge::grammar::regex_ast {

namespace {

constexpr int64_t kHugeCount = int64_t{1} << 40;  // bounds are saturated here; the size limit rejects them
constexpr int kMaxGroupDepth = 200;               // parsing and simplifying recurse once per level

CodepointSet digits() { return CodepointSet::range('0', '9'); }

CodepointSet word_chars() {
  CodepointSet set = CodepointSet::range('a', 'z');
  set.add_range('A', 'Z');
  set.add_range('0', '9');
  set.add('_');
  return set;
}

// ECMAScript's WhiteSpace and LineTerminator code points, what \s matches.
CodepointSet white_space() {
  CodepointSet set = CodepointSet::range('\t', '\r');
  for (uint32_t cp : {0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u, 0xFEFFu}) set.add(cp);
  set.add_range(0x2000, 0x200A);
  return set;
}

// What '.' matches without the s flag: everything but the line terminators.
CodepointSet any_but_line_terminators() {
  CodepointSet terminators;
  for (uint32_t cp : {0x0Au, 0x0Du, 0x2028u, 0x2029u}) terminators.add(cp);
  return terminators.complement();
}

bool is_ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

class Parser {
 public:
  explicit Parser(std::string_view pattern) : pattern_(pattern) {}

  std::vector<Branch> parse_pattern() {
    std::vector<Branch> branches;
    while (true) {
      Branch branch;
      while (peek() == '^') {
        branch.anchored_start = true;
        ++pos_;
      }
      branch.body = parse_sequence(&branch.anchored_end);
      branches.push_back(std::move(branch));
      if (at_end()) return branches;
      if (peek() == ')') fail("unmatched )");
      ++pos_;  // '|'
    }
  }

 private:
  // One character of a class: a single code point (may bound a range) or a class escape such as \d.
  struct ClassAtom {
    CodepointSet set;
    bool single = false;
    uint32_t cp = 0;
  };

  [[noreturn]] void fail_at(size_t offset, const std::string& what) const {
    throw GrammarError("regex: " + what + " (at offset " + std::to_string(offset) + ")");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at_end() const { return pos_ >= pattern_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < pattern_.size() ? pattern_[pos_ + ahead] : '\0'; }
  bool looking_at(std::string_view text) const { return pattern_.substr(pos_).starts_with(text); }

  uint32_t next_code_point() {
    uint32_t cp;
    if (!utf8_text::decode(pattern_, pos_, cp)) fail("invalid UTF-8");
    return cp;
  }

  // The alternatives inside a group, up to its ')'.
  Node parse_alternation() {
    std::vector<Node> options;
    options.push_back(parse_sequence(nullptr));
    while (peek() == '|') {
      ++pos_;
      options.push_back(parse_sequence(nullptr));
    }
    return options.size() == 1 ? std::move(options[0]) : Node::alternation(std::move(options));
  }

  // Quantified atoms up to '|', ')' or the end. `anchored_end` is null inside groups.
  Node parse_sequence(bool* anchored_end) {
    std::vector<Node> parts;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        const bool at_branch_end = pos_ + 1 == pattern_.size() || pattern_[pos_ + 1] == '|';
        if (anchored_end == nullptr || !at_branch_end) {
          fail("$ in the middle of a pattern is not supported (only at the end of the pattern or of a top-level "
               "alternative)");
        }
        ++pos_;
        *anchored_end = true;
        break;
      }
      if (peek() == '^') {
        fail("^ in the middle of a pattern is not supported (only at the start of the pattern or of a top-level "
             "alternative)");
      }
      Node atom = parse_atom();
      int64_t min, max;
      if (parse_quantifier(min, max)) {
        atom = Node::repeat(std::move(atom), min, max);
        if (at_quantifier()) fail("nothing to repeat (a quantifier follows a quantifier)");
      }
      parts.push_back(std::move(atom));
    }
    return parts.size() == 1 ? std::move(parts[0]) : Node::sequence(std::move(parts));
  }

  Node parse_atom() {
    switch (peek()) {
      case '(':
        return parse_group();
      case '[':
        return parse_class();
      case '.':
        ++pos_;
        return Node::of_chars(any_but_line_terminators());
      case '\\':
        ++pos_;
        return parse_escape();
      case '*':
      case '+':
      case '?':
        fail(std::string("nothing to repeat before ") + peek());
      case '{':
        if (at_quantifier()) fail("nothing to repeat before {");
        break;  // Annex B: a '{' that starts no quantifier is itself
      default:
        break;
    }
    CodepointSet set;
    set.add(next_code_point());
    return Node::of_chars(std::move(set), /*literal=*/true);
  }

  bool at_quantifier() const {
    int64_t min, max;
    size_t end;
    return peek() == '*' || peek() == '+' || peek() == '?' || parse_braces(end, min, max);
  }

  // ? * + {m} {m,} {m,n}, each optionally lazy (the same strings match). Consumes it when present.
  bool parse_quantifier(int64_t& min, int64_t& max) {
    switch (peek()) {
      case '*':
        min = 0, max = -1, ++pos_;
        break;
      case '+':
        min = 1, max = -1, ++pos_;
        break;
      case '?':
        min = 0, max = 1, ++pos_;
        break;
      case '{': {
        size_t end;
        if (!parse_braces(end, min, max)) return false;
        if (max >= 0 && min > max) fail("numbers out of order in {m,n} quantifier");
        pos_ = end;
        break;
      }
      default:
        return false;
    }
    if (peek() == '?') ++pos_;  // lazy
    return true;
  }

  // A {m} {m,} {m,n} quantifier at pos_ (no spaces inside, as in ECMAScript): its bounds and end.
  bool parse_braces(size_t& end, int64_t& min, int64_t& max) const {
    size_t i = pos_;
    if (i >= pattern_.size() || pattern_[i] != '{') return false;
    ++i;
    const auto number = [&](int64_t& value) {
      const size_t first = i;
      value = 0;
      while (i < pattern_.size() && pattern_[i] >= '0' && pattern_[i] <= '9') {
        value = std::min(kHugeCount, value * 10 + (pattern_[i] - '0'));
        ++i;
      }
      return i > first;
    };
    if (!number(min)) return false;
    max = min;
    if (i < pattern_.size() && pattern_[i] == ',') {
      ++i;
      if (!number(max)) max = -1;
    }
    if (i >= pattern_.size() || pattern_[i] != '}') return false;
    end = i + 1;
    return true;
  }

  Node parse_group() {
    const size_t open = pos_;
    ++pos_;
    if (peek() == '?') {
      if (looking_at("?:")) {
        pos_ += 2;
      } else if (looking_at("?=")) {
        fail("lookahead (?=...) is not supported");
      } else if (looking_at("?!")) {
        fail("negative lookahead (?!...) is not supported");
      } else if (looking_at("?<=")) {
        fail("lookbehind (?<=...) is not supported");
      } else if (looking_at("?<!")) {
        fail("negative lookbehind (?<!...) is not supported");
      } else if (looking_at("?<")) {
        // A named group matches what a plain group does; the name only matters to backreferences.
        const size_t close = pattern_.find('>', pos_ + 2);
        if (close == std::string_view::npos || close == pos_ + 2) fail("bad group name in (?<name>...)");
        pos_ = close + 1;
      } else {
        fail(std::string("group modifier (?") + peek(1) + " is not supported (inline flags, ...)");
      }
    }
    if (++depth_ > kMaxGroupDepth) fail("groups nested deeper than " + std::to_string(kMaxGroupDepth));
    Node inner = parse_alternation();
    --depth_;
    if (peek() != ')') fail_at(open, "missing ) for this (");
    ++pos_;
    return inner;
  }

  // After a '\\' outside a class.
  Node parse_escape() {
    if (at_end()) fail("\\ at the end of the pattern");
    const char c = peek();
    switch (c) {
      case 'b':
        fail("word boundary \\b is not supported");
      case 'B':
        fail("non-word boundary \\B is not supported");
      case 'k':
        fail("named backreference \\k<name> is not supported");
      default:
        break;
    }
    if (c >= '1' && c <= '9') fail(std::string("backreference \\") + c + " is not supported");
    ClassAtom atom = parse_escaped_atom(/*in_class=*/false);
    return Node::of_chars(std::move(atom.set), /*literal=*/atom.single);
  }

  // After a '\\' in or out of a class, when not an assertion or backreference: a class escape or one
  // character.
  ClassAtom parse_escaped_atom(bool in_class) {
    const size_t start = pos_ - 1;
    const char c = peek();
    ClassAtom atom;
    switch (c) {
      case 'd':
      case 'D':
        atom.set = digits();
        break;
      case 'w':
      case 'W':
        atom.set = word_chars();
        break;
      case 's':
      case 'S':
        atom.set = white_space();
        break;
      case 'p':
      case 'P':
        fail_at(start, std::string("Unicode property escape \\") + c + "{...} is not supported");
      default:
        return single(parse_character_escape(in_class));
    }
    ++pos_;
    if (c == 'D' || c == 'W' || c == 'S') atom.set = atom.set.complement();
    return atom;
  }

  static ClassAtom single(uint32_t cp) {
    ClassAtom atom;
    atom.set.add(cp);
    atom.single = true;
    atom.cp = cp;
    return atom;
  }

  // The character an escape such as \n \x41 \u00e9 \u{1F600} \cJ \. stands for; pos_ is past the '\\'.
  uint32_t parse_character_escape(bool in_class) {
    const size_t start = pos_ - 1;
    const char c = peek();
    switch (c) {
      case 't':
        return ++pos_, 0x09;
      case 'n':
        return ++pos_, 0x0A;
      case 'v':
        return ++pos_, 0x0B;
      case 'f':
        return ++pos_, 0x0C;
      case 'r':
        return ++pos_, 0x0D;
      case 'b':  // only reached in a class, where \b is a backspace
        return ++pos_, 0x08;
      case '0':
        if (peek(1) >= '0' && peek(1) <= '9') {
          fail_at(start, "octal escape \\0" + std::string(1, peek(1)) + " is not supported");
        }
        return ++pos_, 0x00;
      case 'x': {
        ++pos_;
        return parse_hex(2, start, "\\x needs two hex digits");
      }
      case 'u':
        return parse_unicode_escape(start);
      case 'c': {
        const char letter = peek(1);
        if (!((letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z'))) {
          fail_at(start, "\\c needs a letter after it");
        }
        pos_ += 2;
        return static_cast<uint32_t>(letter) % 32;
      }
      default:
        break;
    }
    if (c >= '1' && c <= '9') {
      fail_at(start, std::string(in_class ? "octal escape \\" : "backreference \\") + c + " is not supported");
    }
    if (is_ascii_alnum(c)) fail_at(start, std::string("unknown escape \\") + c);
    return next_code_point();  // an escaped metacharacter or punctuation stands for itself
  }

  uint32_t parse_hex(int n_digits, size_t start, const char* error) {
    uint32_t value = 0;
    for (int i = 0; i < n_digits; ++i) {
      const int digit = utf8_text::hex_value(peek());
      if (digit < 0) fail_at(start, error);
      value = value * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    return value;
  }

  // \uHHHH (a surrogate pair of two such escapes is one character) or \u{H...}.
  uint32_t parse_unicode_escape(size_t start) {
    ++pos_;  // 'u'
    if (peek() == '{') {
      ++pos_;
      uint32_t value = 0;
      size_t n_digits = 0;
      for (; utf8_text::hex_value(peek()) >= 0; ++pos_, ++n_digits) {
        value = value * 16 + static_cast<uint32_t>(utf8_text::hex_value(peek()));
        if (value > kMaxCodepoint) fail_at(start, "\\u{...} beyond U+10FFFF");
      }
      if (n_digits == 0 || peek() != '}') fail_at(start, "\\u{...} needs hex digits and a }");
      ++pos_;
      if (value >= 0xD800 && value <= 0xDFFF) fail_at(start, "a lone surrogate \\u{...} matches no character");
      return value;
    }
    const uint32_t value = parse_hex(4, start, "\\u needs four hex digits");
    if (value >= 0xD800 && value <= 0xDBFF && looking_at("\\u")) {
      const size_t save = pos_;
      pos_ += 2;
      bool ok = true;
      uint32_t low = 0;
      for (int i = 0; i < 4 && ok; ++i, ++pos_) {
        ok = utf8_text::hex_value(peek()) >= 0;
        if (ok) low = low * 16 + static_cast<uint32_t>(utf8_text::hex_value(peek()));
      }
      if (ok && low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00);
      pos_ = save;
    }
    if (value >= 0xD800 && value <= 0xDFFF) {
      fail_at(start, "a lone surrogate \\u" + std::string(pattern_.substr(start + 2, 4)) + " matches no character");
    }
    return value;
  }

  Node parse_class() {
    const size_t open = pos_;
    ++pos_;
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    CodepointSet set;
    while (true) {
      if (at_end()) fail_at(open, "missing ] for this [");
      if (peek() == ']') {
        ++pos_;
        break;
      }
      ClassAtom low = parse_class_atom();
      if (peek() != '-' || peek(1) == ']' || pos_ + 1 >= pattern_.size()) {
        set.add(low.set);
        continue;
      }
      const size_t dash = pos_++;
      ClassAtom high = parse_class_atom();
      if (!low.single || !high.single) {  // Annex B: [\w-.] is \w, '-' and '.'
        set.add(low.set);
        set.add('-');
        set.add(high.set);
        continue;
      }
      if (low.cp > high.cp) {
        const std::string range = utf8_text::describe(low.cp) + "-" + utf8_text::describe(high.cp);
        fail_at(dash, "class range out of order " + range);
      }
      set.add_range(low.cp, high.cp);
    }
    set = set.intersect(CodepointSet::any());  // [\u0000-\uFFFF] spans surrogates, which are no characters
    return Node::of_chars(negated ? set.complement() : set);
  }

  ClassAtom parse_class_atom() {
    if (peek() != '\\') return single(next_code_point());
    ++pos_;
    if (at_end()) fail("\\ at the end of the pattern");
    if (peek() == '-') return ++pos_, single('-');
    return parse_escaped_atom(/*in_class=*/true);
  }

  std::string_view pattern_;
  size_t pos_ = 0;
  int depth_ = 0;  // groups open at pos_
};

}  // namespace

std::vector<Branch> parse(std::string_view pattern) { return Parser(pattern).parse_pattern(); }

}  // namespace ridge::grammar::regex_ast
