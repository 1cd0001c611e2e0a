#pragma once
// The parsed form of a regex pattern, between regex_parse.cc (text to tree) and regex_emit.cc (tree
// to grammar rules). Private to those two files.
#include <cstdint>
#include <string_view>
#include <vector>

#include "grammar/builder.h"

namespace ridge::grammar::regex_ast {

struct Node {
  enum class Kind : uint8_t {
    kEmpty,        // the empty string
    kNothing,      // no string at all (an empty class); pruned before emission
    kChars,        // one character of `chars`
    kSequence,     // `children` one after another
    kAlternation,  // any one of `children`
    kRepeat,       // children[0] repeated min..max times (max < 0: unbounded)
  };
  Kind kind = Kind::kEmpty;
  CodepointSet chars;
  std::vector<Node> children;
  int64_t min = 0, max = 0;
  bool literal = false;  // kChars written as one literal character (emitted as its bytes when raw)

  static Node empty() { return Node{}; }
  static Node nothing() { return Node{Kind::kNothing, {}, {}, 0, 0, false}; }
  static Node of_chars(CodepointSet chars, bool literal = false) {
    if (chars.empty()) return nothing();
    return Node{Kind::kChars, std::move(chars), {}, 0, 0, literal};
  }
  static Node sequence(std::vector<Node> parts) { return Node{Kind::kSequence, {}, std::move(parts), 0, 0, false}; }
  static Node alternation(std::vector<Node> options) {
    return Node{Kind::kAlternation, {}, std::move(options), 0, 0, false};
  }
  static Node repeat(Node item, int64_t min, int64_t max) {
    std::vector<Node> children;
    children.push_back(std::move(item));
    return Node{Kind::kRepeat, {}, std::move(children), min, max, false};
  }
};

// One top-level alternative of the pattern with its anchors.
struct Branch {
  Node body;
  bool anchored_start = false;  // began with ^
  bool anchored_end = false;    // ended with $
};

// The top-level alternatives of `pattern`. Throws GrammarError ("regex: ...") for a syntax error or an
// unsupported feature.
std::vector<Branch> parse(std::string_view pattern);

}  // namespace ridge::grammar::regex_ast
