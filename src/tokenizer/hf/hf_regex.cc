// Parsing a Split pattern into a tree, and matching it by backtracking over code points. A repeat
// of one-character items (\p{L}+, \s*, [^\r\n]{1,3}) is matched by counting, not by recursion, so
// long runs of text cannot exhaust the stack; what recursion remains is bounded.
#include "tokenizer/hf/hf_regex.h"

#include <functional>

#include "core/error.h"
#include "tokenizer/hf/unicode_compose.h"
#include "tokenizer/unicode_data.h"
#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {

bool is_regex_word_char(uint32_t cpt) {
  if (cpt == '_' || cpt == 0x200C || cpt == 0x200D || cpt == 0x203F || cpt == 0x2040 || cpt == 0x2054 ||
      cpt == 0xFE33 || cpt == 0xFE34 || (cpt >= 0xFE4D && cpt <= 0xFE4F) || cpt == 0xFF3F)
    return true;
  const uint16_t flags = unicode::codepoint_flags(cpt);
  return (flags & (unicode::kLetter | unicode::kMark)) || ((flags & unicode::kNumber) && !unicode::is_other_number(cpt));
}

// One character test: ranges and classes, possibly negated.
struct CharSet {
  enum Class : uint8_t { kSpace = 1, kDigit = 2, kWord = 4 };
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  uint16_t flags = 0, not_flags = 0;  // unicode::CodepointFlag masks: \p{..} and \P{..}
  uint8_t classes = 0, not_classes = 0;
  uint8_t letters = 0, not_letters = 0;  // bit (1 << unicode::LetterCategory): \p{Lu} ... \p{Lo}
  bool negated = false, ignore_case = false;

  bool has(uint32_t c) const {
    if (test(c)) return !negated;
    if (ignore_case) {
      const uint32_t lower = unicode::to_lowercase(c).cpt[0];
      const uint32_t upper = c >= 'a' && c <= 'z' ? c - 32 : c;
      if ((lower != c && test(lower)) || (upper != c && test(upper))) return !negated;
    }
    return negated;
  }

 private:
  static bool in_class(uint8_t classes, uint32_t c) {
    return ((classes & kSpace) && unicode::is_whitespace(c)) ||
           ((classes & kDigit) && unicode::is_number(c) && !unicode::is_other_number(c)) ||
           ((classes & kWord) && is_regex_word_char(c));
  }
  bool test(uint32_t c) const {
    for (const auto& [lo, hi] : ranges)
      if (c >= lo && c <= hi) return true;
    const uint16_t f = unicode::codepoint_flags(c);
    if ((f & flags) || (not_flags && !(f & not_flags)) || in_class(classes, c) ||
        (not_classes && !in_class(not_classes, c)))
      return true;
    if (!letters && !not_letters) return false;
    const uint8_t bit = uint8_t(1u << unicode::letter_category(c));
    return (letters & bit) || (not_letters && !(not_letters & bit));
  }
};

struct RegexNode {
  enum Kind { kSet, kSeq, kAlt, kRepeat, kLookahead } kind = kSeq;
  CharSet set;                                       // kSet
  std::vector<std::shared_ptr<RegexNode>> children;  // kSeq, kAlt; kRepeat / kLookahead: one
  size_t min = 0, max = 0;                           // kRepeat
  bool greedy = true, possessive = false;            // kRepeat
  bool negative = false;                             // kLookahead
};

namespace {

using Node = std::shared_ptr<RegexNode>;
constexpr size_t kUnbounded = SIZE_MAX;
constexpr int kMaxDepth = 2000;  // recursion of nested groups and complex repeats while matching

class Parser {
 public:
  explicit Parser(std::string_view pattern) : text_(pattern), cpts_(utf8::decode_all_lenient(pattern)) {}

  Node parse() {
    Node root = alternation(false);
    if (pos_ < cpts_.size()) unsupported("an unbalanced ')'");
    return root;
  }

 private:
  [[noreturn]] void unsupported(std::string_view what) const {
    fail("pre_tokenizer Split: regex '{}' uses {}, which ridge's regex engine does not support", text_, what);
  }
  bool at_end() const { return pos_ >= cpts_.size(); }
  uint32_t peek(size_t ahead = 0) const { return pos_ + ahead < cpts_.size() ? cpts_[pos_ + ahead] : 0; }
  uint32_t next() {
    if (at_end()) unsupported("a pattern that ends too early");
    return cpts_[pos_++];
  }
  bool eat(uint32_t c) {
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
  }

  Node alternation(bool ignore_case) {
    auto alt = std::make_shared<RegexNode>();
    alt->kind = RegexNode::kAlt;
    alt->children.push_back(sequence(ignore_case));
    while (eat('|')) alt->children.push_back(sequence(ignore_case));
    return alt->children.size() == 1 ? alt->children[0] : alt;
  }

  Node sequence(bool ignore_case) {
    auto seq = std::make_shared<RegexNode>();
    while (!at_end() && peek() != '|' && peek() != ')') seq->children.push_back(quantified(atom(ignore_case)));
    return seq;
  }

  Node atom(bool ignore_case) {
    const uint32_t c = next();
    if (c == '(') return group(ignore_case);
    if (c == '[') return set_node(char_class(ignore_case));
    if (c == '.') {
      CharSet any;
      any.ranges = {{'\n', '\n'}};
      any.negated = true;
      return set_node(any);
    }
    if (c == '^' || c == '$') unsupported("an anchor");
    if (c == '*' || c == '+' || c == '?' || c == '{') unsupported("a quantifier with nothing to repeat");
    CharSet set;
    set.ignore_case = ignore_case;
    if (c == '\\') escape(set, false);
    else set.ranges = {{c, c}};
    return set_node(set);
  }

  Node group(bool ignore_case) {
    Node inner;
    if (eat('?')) {
      const uint32_t kind = next();
      if (kind == ':') {
        inner = alternation(ignore_case);
      } else if (kind == 'i' && eat(':')) {
        inner = alternation(true);
      } else if (kind == '=' || kind == '!') {
        auto look = std::make_shared<RegexNode>();
        look->kind = RegexNode::kLookahead;
        look->negative = kind == '!';
        look->children.push_back(alternation(ignore_case));
        inner = look;
      } else {
        unsupported("a group kind other than (?: ), (?i: ), (?= ) and (?! )");
      }
    } else {
      inner = alternation(ignore_case);  // capturing groups only group here
    }
    if (!eat(')')) unsupported("an unclosed group");
    return inner;
  }

  void property(CharSet& set, bool negated) {
    std::string name;
    if (eat('{')) {
      while (!at_end() && peek() != '}') name += static_cast<char>(next());
      if (!eat('}')) unsupported("an unclosed \\p{");
    } else {
      name = static_cast<char>(next());
    }
    uint16_t flag = 0;
    if (name == "L" || name == "Letter") flag = unicode::kLetter;
    else if (name == "N" || name == "Number") flag = unicode::kNumber;
    else if (name == "M" || name == "Mark") flag = unicode::kMark;
    else if (name == "P" || name == "Punctuation") flag = unicode::kPunctuation;
    else if (name == "S" || name == "Symbol") flag = unicode::kSymbol;
    else if (name == "Z" || name == "Separator") flag = unicode::kSeparator;
    else if (name == "C" || name == "Other") flag = unicode::kControl;
    if (flag) {
      (negated ? set.not_flags : set.flags) |= flag;
      return;
    }
    static constexpr std::pair<const char*, unicode::LetterCategory> kLetterNames[] = {
        {"Lu", unicode::kLu}, {"Ll", unicode::kLl}, {"Lt", unicode::kLt}, {"Lm", unicode::kLm}, {"Lo", unicode::kLo}};
    for (const auto& [letter_name, category] : kLetterNames) {
      if (name != letter_name) continue;
      (negated ? set.not_letters : set.letters) |= uint8_t(1u << category);
      return;
    }
    unsupported("the property \\p{" + name + "}");
  }

  // After a backslash; a single character lands in `single` when the caller wants it for a range.
  void escape(CharSet& set, bool in_class, uint32_t* single = nullptr) {
    const uint32_t c = next();
    auto literal = [&](uint32_t v) {
      if (single) *single = v;
      set.ranges.push_back({v, v});
    };
    switch (c) {
      case 'p': property(set, false); return;
      case 'P': property(set, true); return;
      case 's': set.classes |= CharSet::kSpace; return;
      case 'S': set.not_classes |= CharSet::kSpace; return;
      case 'd': set.classes |= CharSet::kDigit; return;
      case 'D': set.not_classes |= CharSet::kDigit; return;
      case 'w': set.classes |= CharSet::kWord; return;
      case 'W': set.not_classes |= CharSet::kWord; return;
      case 'r': literal('\r'); return;
      case 'n': literal('\n'); return;
      case 't': literal('\t'); return;
      case 'f': literal('\f'); return;
      case 'v': literal('\v'); return;
      case 'x': {
        const bool braced = eat('{');
        uint32_t v = 0;
        for (int digits = 0; braced ? peek() != '}' : digits < 2; ++digits) {
          const uint32_t h = next();
          const int d = h >= '0' && h <= '9' ? int(h - '0') : h >= 'a' && h <= 'f' ? int(h - 'a' + 10) : h >= 'A' && h <= 'F' ? int(h - 'A' + 10) : -1;
          if (d < 0 || digits > 6) unsupported("a malformed \\x escape");
          v = v * 16 + uint32_t(d);
        }
        if (braced) eat('}');
        literal(v);
        return;
      }
      default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
          unsupported(std::string("the escape \\") + char(c));
        literal(c);  // an escaped punctuation character is itself
        (void)in_class;
    }
  }

  CharSet char_class(bool ignore_case) {
    CharSet set;
    set.ignore_case = ignore_case;
    set.negated = eat('^');
    bool first = true;
    while (!at_end() && (peek() != ']' || first)) {
      first = false;
      uint32_t lo = 0;
      bool single = true;
      const uint32_t c = next();
      if (c == '[') unsupported("a nested class");
      if (c == '\\') {
        lo = UINT32_MAX;
        escape(set, true, &lo);
        single = lo != UINT32_MAX;
        if (single) set.ranges.pop_back();
      } else {
        lo = c;
      }
      if (!single) continue;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < cpts_.size()) {
        ++pos_;
        uint32_t hi = next();
        if (hi == '\\') {
          CharSet scratch;
          hi = UINT32_MAX;
          escape(scratch, true, &hi);
          if (hi == UINT32_MAX) unsupported("a range ending in a class");
        }
        if (hi < lo) unsupported("a reversed range");
        set.ranges.push_back({lo, hi});
      } else {
        set.ranges.push_back({lo, lo});
      }
    }
    if (!eat(']')) unsupported("an unclosed class");
    return set;
  }

  Node quantified(Node item) {
    size_t min = 0, max = 0;
    if (eat('*')) min = 0, max = kUnbounded;
    else if (eat('+')) min = 1, max = kUnbounded;
    else if (eat('?')) min = 0, max = 1;
    else if (peek() == '{' && peek(1) >= '0' && peek(1) <= '9') {
      ++pos_;
      min = number();
      max = eat(',') ? (peek() == '}' ? kUnbounded : number()) : min;
      if (!eat('}') || max < min) unsupported("a malformed {n,m}");
    } else {
      return item;
    }
    auto repeat = std::make_shared<RegexNode>();
    repeat->kind = RegexNode::kRepeat;
    repeat->min = min, repeat->max = max;
    repeat->greedy = !eat('?');
    repeat->possessive = repeat->greedy && eat('+');
    repeat->children.push_back(std::move(item));
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') unsupported("a repeated quantifier");
    return repeat;
  }

  size_t number() {
    size_t v = 0;
    while (peek() >= '0' && peek() <= '9' && !at_end()) {
      v = v * 10 + (next() - '0');
      if (v > 100000) unsupported("a repeat count that large");
    }
    return v;
  }

  static Node set_node(const CharSet& set) {
    auto node = std::make_shared<RegexNode>();
    node->kind = RegexNode::kSet;
    node->set = set;
    return node;
  }

  std::string_view text_;
  std::vector<uint32_t> cpts_;
  size_t pos_ = 0;
};

using Continuation = std::function<bool(size_t)>;

class Matcher {
 public:
  explicit Matcher(const std::vector<uint32_t>& cpts) : cpts_(cpts) {}

  bool match(const RegexNode& node, size_t pos, const Continuation& then) {
    if (++depth_ > kMaxDepth) fail("tokenizer: the text is too deeply nested for the pre-tokenizer's regex");
    const bool ok = match_node(node, pos, then);
    --depth_;
    return ok;
  }

 private:
  bool match_node(const RegexNode& node, size_t pos, const Continuation& then) {
    switch (node.kind) {
      case RegexNode::kSet: return pos < cpts_.size() && node.set.has(cpts_[pos]) && then(pos + 1);
      case RegexNode::kSeq: return sequence(node, 0, pos, then);
      case RegexNode::kAlt:
        for (const auto& child : node.children)
          if (match(*child, pos, then)) return true;
        return false;
      case RegexNode::kLookahead: {
        const bool found = match(*node.children[0], pos, [](size_t) { return true; });
        return found != node.negative && then(pos);
      }
      case RegexNode::kRepeat: return repeat(node, pos, then);
    }
    return false;
  }

  bool sequence(const RegexNode& node, size_t index, size_t pos, const Continuation& then) {
    if (index == node.children.size()) return then(pos);
    return match(*node.children[index], pos, [&](size_t next) { return sequence(node, index + 1, next, then); });
  }

  bool repeat(const RegexNode& node, size_t pos, const Continuation& then) {
    const RegexNode& item = *node.children[0];
    if (item.kind == RegexNode::kSet) {  // count the run, then give back from its end
      size_t n = 0;
      while (n < node.max && pos + n < cpts_.size() && item.set.has(cpts_[pos + n])) ++n;
      if (n < node.min) return false;
      if (node.possessive) return then(pos + n);
      if (node.greedy) {
        for (size_t k = n + 1; k-- > node.min;)
          if (then(pos + k)) return true;
        return false;
      }
      for (size_t k = node.min; k <= n; ++k)
        if (then(pos + k)) return true;
      return false;
    }
    if (node.possessive) fail("tokenizer: a possessive repeat of a group is not supported");
    return repeat_group(node, item, 0, pos, then);
  }

  bool repeat_group(const RegexNode& node, const RegexNode& item, size_t count, size_t pos, const Continuation& then) {
    auto more = [&] {
      return count < node.max && match(item, pos, [&](size_t next) {
               return next != pos && repeat_group(node, item, count + 1, next, then);  // no empty iterations
             });
    };
    if (count < node.min) return more();
    if (node.greedy) return more() || then(pos);
    return then(pos) || more();
  }

  const std::vector<uint32_t>& cpts_;
  int depth_ = 0;
};

}  // namespace

Regex Regex::compile(std::string_view pattern) {
  Regex r;
  r.pattern_ = pattern;
  r.root_ = Parser(pattern).parse();
  return r;
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(const std::vector<uint32_t>& cpts) const {
  std::vector<std::pair<size_t, size_t>> out;
  Matcher matcher(cpts);
  for (size_t pos = 0; pos < cpts.size();) {
    size_t end = pos;
    const bool found = matcher.match(*root_, pos, [&](size_t e) {
      end = e;
      return true;
    });
    if (found && end > pos) {
      out.push_back({pos, end});
      pos = end;
    } else {
      ++pos;
    }
  }
  return out;
}

}  // namespace ridge::hf
