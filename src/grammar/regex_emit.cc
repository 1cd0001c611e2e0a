// A regex_ast tree to grammar rules: the tree is simplified first so that no repeated item can match
// the empty string (x* with a nullable x is ambiguous without end and calls itself before reading a
// byte), then each node becomes builder parts: characters a class or literal bytes, alternation a
// choice, repetition a repeat.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "grammar/regex.h"
#include "grammar/regex_ast.h"
#include "grammar/utf8_text.h"

namespace ridge::grammar {

namespace {

using regex_ast::Branch;
using regex_ast::Node;
using Kind = Node::Kind;

// Above this many symbols once every repetition is unrolled, a pattern is refused: {0,100000} would
// build a grammar of that many rules.
constexpr int64_t kMaxUnrolledSymbols = 10000;

bool nullable(const Node& node) {
  switch (node.kind) {
    case Kind::kEmpty:
      return true;
    case Kind::kNothing:
    case Kind::kChars:
      return false;
    case Kind::kSequence:
      return std::all_of(node.children.begin(), node.children.end(), nullable);
    case Kind::kAlternation:
      return std::any_of(node.children.begin(), node.children.end(), nullable);
    case Kind::kRepeat:
      return node.min == 0 || nullable(node.children[0]);
  }
  return false;
}

Node without_empty(const Node& node);

// The same strings, with empty parts dropped, one-part sequences and alternations unwrapped, nested
// ones flattened, no string where a part matches none, single-character alternatives merged into one
// class, and repeated items that never match the empty string.
Node simplify(const Node& node) {
  switch (node.kind) {
    case Kind::kEmpty:
    case Kind::kNothing:
    case Kind::kChars:
      return node;
    case Kind::kSequence: {
      std::vector<Node> parts;
      for (const Node& child : node.children) {
        Node part = simplify(child);
        if (part.kind == Kind::kNothing) return Node::nothing();
        if (part.kind == Kind::kEmpty) continue;
        if (part.kind == Kind::kSequence) {
          for (Node& inner : part.children) parts.push_back(std::move(inner));
        } else {
          parts.push_back(std::move(part));
        }
      }
      if (parts.empty()) return Node::empty();
      return parts.size() == 1 ? std::move(parts[0]) : Node::sequence(std::move(parts));
    }
    case Kind::kAlternation: {
      std::vector<Node> options;
      bool has_empty = false;
      const auto add = [&](Node option) {
        if (option.kind == Kind::kNothing || (option.kind == Kind::kEmpty && has_empty)) return;
        has_empty = has_empty || option.kind == Kind::kEmpty;
        if (option.kind == Kind::kChars) {
          for (Node& other : options) {
            if (other.kind != Kind::kChars) continue;
            other.chars.add(option.chars);
            other.literal = false;
            return;
          }
        }
        options.push_back(std::move(option));
      };
      for (const Node& child : node.children) {
        Node option = simplify(child);
        if (option.kind == Kind::kAlternation) {
          for (Node& inner : option.children) add(std::move(inner));
        } else {
          add(std::move(option));
        }
      }
      if (options.empty()) return Node::nothing();
      return options.size() == 1 ? std::move(options[0]) : Node::alternation(std::move(options));
    }
    case Kind::kRepeat: {
      Node item = simplify(node.children[0]);
      int64_t min = node.min;
      if (node.max == 0 || item.kind == Kind::kEmpty) return Node::empty();
      if (item.kind == Kind::kNothing) return min == 0 ? Node::empty() : Node::nothing();
      if (nullable(item)) {
        // (x|)^k matches (x)^0 .. (x)^k, so x{m,n} with a nullable x is x'{0,n}, x' = x without "".
        item = without_empty(item);
        min = 0;
        if (item.kind == Kind::kNothing) return Node::empty();
      }
      if (min == 1 && node.max == 1) return item;
      return Node::repeat(std::move(item), min, node.max);
    }
  }
  return node;
}

// The strings of a simplified `node` other than the empty string, simplified.
Node without_empty(const Node& node) {
  switch (node.kind) {
    case Kind::kEmpty:
    case Kind::kNothing:
      return Node::nothing();
    case Kind::kChars:
      return node;
    case Kind::kAlternation: {
      std::vector<Node> options;
      for (const Node& child : node.children) options.push_back(without_empty(child));
      return simplify(Node::alternation(std::move(options)));
    }
    case Kind::kSequence: {
      if (!nullable(node)) return node;
      // Every part is nullable, so (L R) without "" is L' R | R'. Splitting in the middle keeps the
      // copies of R to O(k log k) nodes for k parts (splitting off one part would be O(k^2)).
      const auto middle = node.children.begin() + static_cast<std::ptrdiff_t>(node.children.size() / 2);
      Node left = simplify(Node::sequence(std::vector<Node>(node.children.begin(), middle)));
      Node right = simplify(Node::sequence(std::vector<Node>(middle, node.children.end())));
      Node right_without_empty = without_empty(right);
      std::vector<Node> left_then_right;
      left_then_right.push_back(without_empty(left));
      left_then_right.push_back(std::move(right));
      std::vector<Node> options;
      options.push_back(Node::sequence(std::move(left_then_right)));
      options.push_back(std::move(right_without_empty));
      return simplify(Node::alternation(std::move(options)));
    }
    case Kind::kRepeat:  // simplified: the item is not nullable
      if (node.min > 0) return node;
      return simplify(Node::repeat(node.children[0], 1, node.max));
  }
  return node;
}

int64_t saturating_add(int64_t a, int64_t b) { return std::min(a + b, kMaxUnrolledSymbols + 1); }
int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > (kMaxUnrolledSymbols + 1) / b ? kMaxUnrolledSymbols + 1 : std::min(a * b, kMaxUnrolledSymbols + 1);
}

// Symbols in `node` with every repetition written out (an unbounded one as its minimum plus one more).
int64_t unrolled_size(const Node& node) {
  switch (node.kind) {
    case Kind::kEmpty:
    case Kind::kNothing:
      return 0;
    case Kind::kChars:
      return 1;
    case Kind::kSequence:
    case Kind::kAlternation: {
      int64_t total = 0;
      for (const Node& child : node.children) total = saturating_add(total, unrolled_size(child));
      return total;
    }
    case Kind::kRepeat: {
      const int64_t copies = node.max >= 0 ? node.max : saturating_add(node.min, 1);
      return saturating_mul(unrolled_size(node.children[0]), copies);
    }
  }
  return 0;
}

class Emitter {
 public:
  Emitter(GrammarBuilder& builder, RegexTarget target) : builder_(builder), target_(target) {}

  Sequence emit(const Node& node) {
    switch (node.kind) {
      case Kind::kEmpty:
      case Kind::kNothing:  // pruned by simplify
        return {};
      case Kind::kChars:
        return chars(node);
      case Kind::kSequence: {
        Sequence out;
        for (const Node& child : node.children) GrammarBuilder::append(out, emit(child));
        return out;
      }
      case Kind::kAlternation: {
        std::vector<Sequence> options;
        for (const Node& child : node.children) options.push_back(emit(child));
        return {builder_.choice(std::move(options), "regex-alt")};
      }
      case Kind::kRepeat:
        return {builder_.repeat(emit(node.children[0]), node.min, node.max, "regex-rep")};
    }
    return {};
  }

  // Any characters at all: what an unanchored end of a search pattern allows.
  Symbol any_chars() {
    if (!any_chars_) {
      any_chars_ = builder_.repeat({char_class(CodepointSet::any())}, 0, -1, "regex-any");
    }
    return *any_chars_;
  }

 private:
  Sequence chars(const Node& node) {
    if (target_ == RegexTarget::kRaw && node.literal && node.chars.ranges().size() == 1 &&
        node.chars.ranges()[0].first == node.chars.ranges()[0].second) {
      return GrammarBuilder::literal(utf8_text::encode(node.chars.ranges()[0].first));
    }
    return {char_class(node.chars)};
  }

  Symbol char_class(const CodepointSet& set) {
    return target_ == RegexTarget::kRaw ? builder_.utf8_class(set) : builder_.json_char_class(set);
  }

  GrammarBuilder& builder_;
  RegexTarget target_;
  std::optional<Symbol> any_chars_;
};

}  // namespace

RuleId add_regex_rule(GrammarBuilder& builder, std::string_view pattern, const RegexOptions& options) {
  std::vector<Branch> branches = regex_ast::parse(pattern);
  int64_t size = 0;
  for (Branch& branch : branches) {
    branch.body = simplify(branch.body);
    size = saturating_add(size, unrolled_size(branch.body));
  }
  if (size > kMaxUnrolledSymbols) {
    throw GrammarError("regex: the pattern's repetitions are too large (more than " +
                       std::to_string(kMaxUnrolledSymbols) + " symbols once unrolled)");
  }

  Emitter emitter(builder, options.target);
  const RuleId rule = builder.add_rule("regex");
  bool any_branch = false;
  for (const Branch& branch : branches) {
    if (branch.body.kind == Kind::kNothing) continue;
    any_branch = true;
    const bool open_start = options.search && !branch.anchored_start;
    const bool open_end = options.search && !branch.anchored_end;
    Sequence alternative;
    if (branch.body.kind == Kind::kEmpty) {
      if (open_start || open_end) alternative.push_back(emitter.any_chars());  // one, not two in a row
    } else {
      if (open_start) alternative.push_back(emitter.any_chars());
      GrammarBuilder::append(alternative, emitter.emit(branch.body));
      if (open_end) alternative.push_back(emitter.any_chars());
    }
    builder.add_alternative(rule, std::move(alternative));
  }
  if (!any_branch) throw GrammarError("regex: the pattern matches no string");
  return rule;
}

Grammar regex_grammar(std::string_view pattern) {
  GrammarBuilder builder;
  const RuleId root = add_regex_rule(builder, pattern, RegexOptions{});
  return builder.finish(root);
}

}  // namespace ridge::grammar
