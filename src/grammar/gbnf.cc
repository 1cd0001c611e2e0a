// GBNF text to a Grammar by recursive descent, as llama.cpp reads it: a newline ends a rule unless it
// falls inside parentheses or right after '|'. Two extensions: a line may start with '|' to add
// alternatives to the rule above, and names may contain '_'. Groups become choice rules, quantifiers
// builder repeats; characters are code points, spelled out as UTF-8 by the builder.
#include "grammar/gbnf.h"

#include <map>
#include <optional>
#include <set>
#include <string>

#include "grammar/builder.h"
#include "grammar/utf8_text.h"

namespace ridge::grammar {

namespace {

// Refused above these: a bound of {0,1000000} would build a million rules.
constexpr int64_t kMaxRepetitionBound = 10000;
constexpr int64_t kMaxUnrolledSymbols = 100000;  // symbols all repetitions of a grammar write out together
constexpr int kMaxGroupDepth = 200;               // the parser recurses once per level

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  Grammar parse() {
    register_defined_names();
    skip_space(/*newline_ok=*/true);
    while (!at_end()) {
      parse_rule();
      skip_space(/*newline_ok=*/true);
    }
    if (!defined_.contains("root")) throw GrammarError("gbnf: no rule named root (the start rule)");
    std::optional<std::pair<size_t, std::string>> first_undefined;
    for (const auto& [name, offset] : first_reference_) {
      if (!defined_.contains(name) && (!first_undefined || offset < first_undefined->first)) {
        first_undefined = {offset, name};
      }
    }
    if (first_undefined) fail_at(first_undefined->first, "undefined rule '" + first_undefined->second + "'");
    return builder_.finish(builder_.named_rule("root"));
  }

 private:
  [[noreturn]] void fail_at(size_t offset, const std::string& what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line, column = 1;
      } else if ((static_cast<uint8_t>(text_[i]) & 0xC0) != 0x80) {  // count characters, not bytes
        ++column;
      }
    }
    throw GrammarError("gbnf: " + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // What is at pos_, for "expected X, found Y" messages.
  std::string found() const {
    if (at_end()) return "the end of the text";
    if (peek() == '\n' || peek() == '\r') return "the end of the line";
    size_t offset = pos_;
    uint32_t cp;
    if (!utf8_text::decode(text_, offset, cp)) return "invalid UTF-8";
    std::string quoted = "'";
    quoted.append(text_.substr(pos_, offset - pos_));
    quoted += '\'';
    return quoted;
  }

  // Spaces, tabs and # comments, and line breaks too when `newline_ok`.
  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  // Every rule is defined at the start of a line. Naming them all before any group or repetition
  // makes its helper rule keeps the builder's generated names (root-1, ...) off the user's names.
  void register_defined_names() {
    for (size_t line = 0; line < text_.size();) {
      size_t i = line;
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
      const size_t name_start = i;
      while (i < text_.size() && is_name_char(text_[i])) ++i;
      const size_t name_end = i;
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
      if (name_end > name_start && text_.substr(i, 3) == "::=") {
        builder_.named_rule(text_.substr(name_start, name_end - name_start));
      }
      const size_t newline = text_.find('\n', line);
      line = newline == std::string_view::npos ? text_.size() : newline + 1;
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    if (pos_ == start) fail("expected a rule name, found " + found());
    return std::string(text_.substr(start, pos_ - start));
  }

  void parse_rule() {
    const size_t start = pos_;
    const std::string name = parse_name();
    skip_space(/*newline_ok=*/false);
    if (text_.substr(pos_, 3) != "::=") fail("expected ::= after the rule name '" + name + "', found " + found());
    pos_ += 3;
    skip_space(/*newline_ok=*/true);
    rule_name_ = name;
    std::vector<Sequence> alternatives = parse_alternatives(/*nested=*/false);
    if (!at_end() && peek() != '\n' && peek() != '\r') {
      fail("expected the end of the rule (a newline), found " + found());
    }
    if (!defined_.insert(name).second) fail_at(start, "rule '" + name + "' is defined twice");
    builder_.set_alternatives(builder_.named_rule(name), std::move(alternatives));
  }

  // Alternatives separated by '|'. At the top level a rule ends at a line break, unless the next line
  // goes on with '|'.
  std::vector<Sequence> parse_alternatives(bool nested) {
    std::vector<Sequence> alternatives;
    alternatives.push_back(parse_sequence(nested));
    while (true) {
      if (peek() == '|') {
        ++pos_;
        skip_space(/*newline_ok=*/true);
        alternatives.push_back(parse_sequence(nested));
        continue;
      }
      if (!nested) {
        const size_t line_end = pos_;
        skip_space(/*newline_ok=*/true);
        if (peek() == '|') continue;
        pos_ = line_end;
      }
      return alternatives;
    }
  }

  Sequence parse_sequence(bool nested) {
    Sequence sequence;
    std::optional<size_t> last_item;  // where the symbols of the item a quantifier applies to begin
    while (!at_end()) {
      const char c = peek();
      if (c == '"') {
        last_item = sequence.size();
        GrammarBuilder::append(sequence, parse_literal());
      } else if (c == '[') {
        last_item = sequence.size();
        sequence.push_back(parse_class());
      } else if (c == '.') {
        ++pos_;
        last_item = sequence.size();
        sequence.push_back(any_char());
      } else if (is_name_char(c)) {
        const size_t offset = pos_;
        const std::string name = parse_name();
        first_reference_.try_emplace(name, offset);
        last_item = sequence.size();
        sequence.push_back(Symbol::of_rule(builder_.named_rule(name)));
      } else if (c == '(') {
        const size_t open = pos_++;
        if (++depth_ > kMaxGroupDepth) fail_at(open, "groups nested deeper than " + std::to_string(kMaxGroupDepth));
        skip_space(/*newline_ok=*/true);
        std::vector<Sequence> alternatives = parse_alternatives(/*nested=*/true);
        if (peek() != ')') fail_at(open, "missing ) for this (; found " + found());
        ++pos_;
        --depth_;
        last_item = sequence.size();
        if (alternatives.size() == 1) {
          GrammarBuilder::append(sequence, alternatives[0]);
        } else {
          sequence.push_back(builder_.choice(std::move(alternatives), rule_name_));
        }
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!last_item) fail(std::string("expected an item before ") + c);
        apply_quantifier(sequence, *last_item);
      } else if (c == '<') {
        fail("token references <...> are not supported");
      } else {
        break;
      }
      skip_space(nested);
    }
    return sequence;
  }

  // Replaces the symbols from `item_start` on by their repetition.
  void apply_quantifier(Sequence& sequence, size_t item_start) {
    const size_t at = pos_;
    int64_t min = 0, max = -1;
    switch (peek()) {
      case '*':
        ++pos_;
        break;
      case '+':
        min = 1, ++pos_;
        break;
      case '?':
        max = 1, ++pos_;
        break;
      default:
        parse_braces(min, max);
        break;
    }
    const Sequence item(sequence.begin() + static_cast<std::ptrdiff_t>(item_start), sequence.end());
    sequence.resize(item_start);
    if (item.empty()) return;  // "" repeated is ""
    const int64_t copies = max >= 0 ? max : min + 1;
    unrolled_symbols_ += copies * static_cast<int64_t>(item.size());
    if (unrolled_symbols_ > kMaxUnrolledSymbols) {
      fail_at(at, "the grammar's repetitions are too large (more than " + std::to_string(kMaxUnrolledSymbols) +
                      " symbols once unrolled)");
    }
    sequence.push_back(builder_.repeat(item, min, max, rule_name_));
  }

  // {m} {m,} {m,n}, spaces allowed inside.
  void parse_braces(int64_t& min, int64_t& max) {
    const size_t open = pos_++;
    skip_space(/*newline_ok=*/false);
    if (!parse_count(min)) fail("expected a number in {m,n}, found " + found());
    skip_space(/*newline_ok=*/false);
    max = min;
    if (peek() == ',') {
      ++pos_;
      skip_space(/*newline_ok=*/false);
      if (!parse_count(max)) max = -1;
      skip_space(/*newline_ok=*/false);
    }
    if (peek() != '}') fail("expected } to close {m,n}, found " + found());
    ++pos_;
    if (max >= 0 && min > max) fail_at(open, "numbers out of order in {m,n}");
  }

  bool parse_count(int64_t& value) {
    const size_t start = pos_;
    value = 0;
    while (peek() >= '0' && peek() <= '9') {
      value = value * 10 + (peek() - '0');
      if (value > kMaxRepetitionBound) {
        fail_at(start, "repetition bound over the limit of " + std::to_string(kMaxRepetitionBound));
      }
      ++pos_;
    }
    return pos_ > start;
  }

  Sequence parse_literal() {
    const size_t open = pos_++;
    std::string bytes;
    while (true) {
      if (at_end()) fail_at(open, "missing \" to close this literal");
      if (peek() == '"') break;
      utf8_text::append(bytes, parse_char());
    }
    ++pos_;
    return GrammarBuilder::literal(bytes);
  }

  Symbol parse_class() {
    const size_t open = pos_++;
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    CodepointSet set;
    while (true) {
      if (at_end()) fail_at(open, "missing ] to close this class");
      if (peek() == ']') break;
      const uint32_t low = parse_char();
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
        const size_t dash = pos_++;
        const uint32_t high = parse_char();
        if (low > high) {
          fail_at(dash, "class range out of order " + utf8_text::describe(low) + "-" + utf8_text::describe(high));
        }
        set.add_range(low, high);
      } else {
        set.add(low);
      }
    }
    ++pos_;
    set = set.intersect(CodepointSet::any());  // a range across the surrogates keeps the characters only
    if (negated) set = set.complement();
    if (set.empty()) fail_at(open, negated ? "this class excludes every character" : "empty class [] matches nothing");
    return builder_.utf8_class(set);
  }

  // One character of a literal or class, escapes decoded.
  uint32_t parse_char() {
    if (peek() != '\\') {
      uint32_t cp;
      if (!utf8_text::decode(text_, pos_, cp)) fail("invalid UTF-8");
      return cp;
    }
    const size_t start = pos_++;
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
        return static_cast<uint8_t>(c);
      case 'x':
        return parse_hex(2, start);
      case 'u':
        return parse_hex(4, start);
      case 'U':
        return parse_hex(8, start);
      default:
        if (c == '\0' && at_end()) fail_at(start, "\\ at the end of the text");
        fail_at(start, "unknown escape \\" + std::string(1, c));
    }
  }

  uint32_t parse_hex(int n_digits, size_t start) {
    uint32_t value = 0;
    for (int i = 0; i < n_digits; ++i) {
      const int digit = utf8_text::hex_value(peek());
      if (digit < 0) fail_at(start, "expected " + std::to_string(n_digits) + " hex digits after \\" + text_[start + 1]);
      value = value * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    if (value > kMaxCodepoint) fail_at(start, "escape beyond U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF) fail_at(start, "a surrogate code point is no character");
    return value;
  }

  Symbol any_char() {
    if (!any_char_) any_char_ = builder_.utf8_class(CodepointSet::any());
    return *any_char_;
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarBuilder builder_;
  std::string rule_name_;  // the rule being parsed: the name hint of the rules its groups make
  std::set<std::string> defined_;
  std::map<std::string, size_t> first_reference_;
  int64_t unrolled_symbols_ = 0;
  int depth_ = 0;  // groups open at pos_
  std::optional<Symbol> any_char_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace ridge::grammar
