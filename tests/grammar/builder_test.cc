#include "grammar/builder.h"

#include <gtest/gtest.h>

#include "grammar/recognize.h"

namespace ridge::grammar {
namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

Grammar one_symbol(const std::function<Symbol(GrammarBuilder&)>& make) {
  GrammarBuilder b;
  const RuleId root = b.add_rule("root");
  const Symbol s = make(b);
  b.add_alternative(root, {s});
  return b.finish(root);
}

TEST(CodepointSet, MergesAndComplements) {
  CodepointSet s;
  s.add_range('a', 'c');
  s.add_range('e', 'g');
  s.add('d');
  ASSERT_EQ(s.ranges().size(), 1u);
  EXPECT_EQ(s.ranges()[0], std::make_pair(uint32_t('a'), uint32_t('g')));
  const CodepointSet c = s.complement();
  EXPECT_FALSE(c.contains('a'));
  EXPECT_TRUE(c.contains('h'));
  EXPECT_TRUE(c.contains(0));
  EXPECT_FALSE(c.contains(0xD800));  // surrogates are never in a set
  EXPECT_TRUE(c.contains(0x10FFFF));
  EXPECT_TRUE(s.intersect(CodepointSet::range('f', 'z')).contains('g'));
  EXPECT_FALSE(s.intersect(CodepointSet::range('f', 'z')).contains('e'));
}

// Every code point of a set encodes to a sentence, every other one does not: checked against a
// direct encoding over awkward boundaries of the UTF-8 length classes.
TEST(GrammarBuilder, Utf8ClassMatchesExactlyItsCodePoints) {
  const std::vector<std::pair<uint32_t, uint32_t>> cases = {
      {0x41, 0x5A}, {0x7F, 0x80}, {0x7FF, 0x800}, {0x3B1, 0x3C9}, {0xFFFF, 0x10000}, {0x80, 0x10FFFF},
      {0x1F600, 0x1F64F}, {0xE000, 0xFFFD}, {0x10, 0x2000}};
  const std::vector<uint32_t> probes = {0,      0x20,    0x41,    0x5A,    0x5B,     0x7F,    0x80,   0x81,
                                        0x3B0,  0x3B1,   0x3C9,   0x3CA,   0x7FF,    0x800,   0x801,  0xFFF,
                                        0x1000, 0xD7FF,  0xE000,  0xFFFD,  0xFFFF,   0x10000, 0x1F5FF, 0x1F600,
                                        0x1F64F, 0x1F650, 0x10FFFF, 0x2000, 0x2001, 0x10, 0xF};
  for (auto [lo, hi] : cases) {
    const Grammar g = one_symbol([&](GrammarBuilder& b) { return b.utf8_class(CodepointSet::range(lo, hi)); });
    const Grammar neg =
        one_symbol([&](GrammarBuilder& b) { return b.utf8_class(CodepointSet::range(lo, hi).complement()); });
    for (uint32_t cp : probes) {
      const bool in = cp >= lo && cp <= hi;
      EXPECT_EQ(grammar_accepts(g, utf8(cp)), in) << std::hex << lo << "-" << hi << " cp " << cp;
      EXPECT_EQ(grammar_accepts(neg, utf8(cp)), !in) << "negated " << std::hex << lo << "-" << hi << " cp " << cp;
    }
    EXPECT_FALSE(grammar_accepts(g, ""));
    EXPECT_FALSE(grammar_accepts(g, "\xC0\x80"));  // overlong NUL is never a character
  }
}

TEST(GrammarBuilder, JsonCharClassSpellsEscapes) {
  CodepointSet set = CodepointSet::range('a', 'b');
  set.add('"');
  set.add('\\');
  set.add('\n');
  set.add(0x1F);
  set.add('/');
  const Grammar g = one_symbol([&](GrammarBuilder& b) { return b.json_char_class(set); });
  for (const char* ok : {"a", "b", "\\\"", "\\\\", "\\n", "\\u000a", "\\u000A", "\\u001f", "\\u001F", "/", "\\/"})
    EXPECT_TRUE(grammar_accepts(g, ok)) << ok;
  for (const char* bad : {"c", "\"", "\\", "\n", "\\t", "\\u0009", "\x1f", "\\u0061"})
    EXPECT_FALSE(grammar_accepts(g, bad)) << bad;
}

TEST(GrammarBuilder, RepeatBounds) {
  auto rep = [](int64_t min, int64_t max) {
    return one_symbol([&](GrammarBuilder& b) { return b.repeat(GrammarBuilder::literal("ab"), min, max, "r"); });
  };
  for (auto [min, max] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 1}, {2, 2}, {1, 4}, {0, -1}, {3, -1}}) {
    const Grammar g = rep(min, max);
    for (int n = 0; n <= 7; ++n) {
      std::string text;
      for (int k = 0; k < n; ++k) text += "ab";
      const bool want = n >= min && (max < 0 || n <= max);
      EXPECT_EQ(grammar_accepts(g, text), want) << "{" << min << "," << max << "} n=" << n;
    }
    EXPECT_FALSE(grammar_accepts(g, "aba"));
  }
  GrammarBuilder b;
  EXPECT_THROW(b.repeat(GrammarBuilder::literal("a"), 0, 1000000, "big"), GrammarError);
  EXPECT_THROW(b.repeat(GrammarBuilder::literal("a"), 3, 2, "bad"), GrammarError);
}

TEST(GrammarBuilder, NullableStarDoesNotLoop) {
  // (a?)* : an item that matches the empty string, repeated without bound.
  const Grammar g = one_symbol([](GrammarBuilder& b) {
    const Symbol opt = b.optional(GrammarBuilder::literal("a"), "opt");
    return b.repeat({opt}, 0, -1, "star");
  });
  EXPECT_TRUE(grammar_accepts(g, ""));
  EXPECT_TRUE(grammar_accepts(g, "aaaa"));
  EXPECT_FALSE(grammar_accepts(g, "ab"));
}

TEST(GrammarBuilder, UnsatisfiableAndLeftRecursive) {
  {
    GrammarBuilder b;
    const RuleId root = b.add_rule("root");
    const RuleId never = b.add_rule("never");  // no alternatives
    b.add_alternative(root, {Symbol::of_rule(never), Symbol::of_byte('x')});
    EXPECT_THROW(b.finish(root), GrammarError);
  }
  {
    GrammarBuilder b;
    const RuleId root = b.add_rule("root");  // root ::= root "a" | "b"
    b.add_alternative(root, {Symbol::of_rule(root), Symbol::of_byte('a')});
    b.add_alternative(root, GrammarBuilder::literal("b"));
    const Grammar g = b.finish(root);
    try {
      grammar_accepts(g, "ba");
      FAIL() << "left recursion accepted";
    } catch (const GrammarError& e) {
      EXPECT_NE(std::string(e.what()).find("left-recursive"), std::string::npos) << e.what();
    }
  }
  {
    // Right recursion with a nullable prefix is a tail call: fine.
    GrammarBuilder b;
    const RuleId root = b.add_rule("root");  // root ::= "a"? root | "b"
    const Symbol opt = b.optional(GrammarBuilder::literal("a"), "opt");
    b.add_alternative(root, {opt, Symbol::of_rule(root)});
    b.add_alternative(root, GrammarBuilder::literal("b"));
    const Grammar g = b.finish(root);
    EXPECT_TRUE(grammar_accepts(g, "aaab"));
    EXPECT_TRUE(grammar_accepts(g, "b"));
    EXPECT_FALSE(grammar_accepts(g, "aa"));
  }
}

TEST(Pda, DeepNestingIsLinear) {
  // value ::= "[" value "]" | "x": nesting 5000 deep.
  GrammarBuilder b;
  const RuleId value = b.add_rule("value");
  Sequence nested = GrammarBuilder::literal("[");
  nested.push_back(Symbol::of_rule(value));
  GrammarBuilder::append(nested, GrammarBuilder::literal("]"));
  b.add_alternative(value, nested);
  b.add_alternative(value, GrammarBuilder::literal("x"));
  const Grammar g = b.finish(value);
  const std::string deep = std::string(5000, '[') + "x" + std::string(5000, ']');
  EXPECT_TRUE(grammar_accepts(g, deep));
  EXPECT_FALSE(grammar_accepts(g, deep + "]"));
  EXPECT_FALSE(grammar_accepts(g, deep.substr(1)));
}

}  // namespace
}  // namespace ridge::grammar
