// The lexer's whitespace rules under trim_blocks + lstrip_blocks, as jinja2 applies them
// (expected strings are what jinja2 3.1 renders for the same source).
#include "template/lexer.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "render_helper.h"

namespace ridge::tmpl {
namespace {

using testing::render;

TEST(TemplateLexer, TokensOfATag) {
  const auto tokens = tokenize("a{{ x.y|f(1, 'b\\n') }}");
  ASSERT_EQ(tokens.size(), 14u);
  EXPECT_EQ(tokens[0].kind, TokenKind::Text);
  EXPECT_EQ(tokens[1].kind, TokenKind::VarBegin);
  EXPECT_EQ(tokens[2].text, "x");
  EXPECT_EQ(tokens[3].text, ".");
  EXPECT_EQ(tokens[10].kind, TokenKind::String);
  EXPECT_EQ(tokens[10].text, "b\n");
  EXPECT_EQ(tokens[12].kind, TokenKind::VarEnd);
  EXPECT_EQ(tokens[13].kind, TokenKind::Eof);
}

TEST(TemplateLexer, TrimBlocksEatsOneNewlineAfterABlockTag) {
  EXPECT_EQ(render("{% if true %}\na\n{% endif %}\nb"), "a\nb");
  EXPECT_EQ(render("{% if true %}\n\na{% endif %}"), "\na");
  // A print tag keeps its newline.
  EXPECT_EQ(render("{{ 1 }}\n2"), "1\n2");
  // Comments are trimmed like blocks.
  EXPECT_EQ(render("{# c #}\nx"), "x");
}

TEST(TemplateLexer, LstripBlocksRemovesIndentBeforeBlockTags) {
  EXPECT_EQ(render("{% for x in [1] %}\n  a\n  {% endfor %}\n  b\n"), "  a\n  b");
  EXPECT_EQ(render("  {{ 1 }}"), "  1");     // not for print tags
  EXPECT_EQ(render("x  {% if true %}y{% endif %}"), "x  y");  // only at a line's start
  EXPECT_EQ(render("  {%+ if true %}y{% endif %}"), "  y");  // `+` keeps the indent
}

TEST(TemplateLexer, MinusStripsAllWhitespace) {
  EXPECT_EQ(render("a  \n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("a\n\n{%- if true -%}\n\n b {%- endif %}"), "ab");
  EXPECT_EQ(render("{{ 5 -3 }}"), "2");
}

TEST(TemplateLexer, DropsOneTrailingNewlineAndNormalisesNewlines) {
  EXPECT_EQ(render("x\n"), "x");
  EXPECT_EQ(render("x\n\n"), "x\n");
  EXPECT_EQ(render("a\r\nb\rc"), "a\nb\nc");
}

TEST(TemplateLexer, StringEscapesAsPython) {
  EXPECT_EQ(render(R"({{ 'a\tb\\c\'d' ~ "\u00e9\x41" ~ '\d' }})"), "a\tb\\c'd\xc3\xa9" "A\\d");
  EXPECT_EQ(render("{{ 'a' 'b' }}"), "ab");
}

TEST(TemplateLexer, BracesInsideATagDoNotCloseIt) {
  EXPECT_EQ(render("{{ {'a': {'b': 1}} }}"), "{'a': {'b': 1}}");
}

TEST(TemplateLexer, UnclosedTagsAreErrors) {
  EXPECT_THROW(tokenize("{{ x "), Error);
  EXPECT_THROW(tokenize("{# x "), Error);
  EXPECT_THROW(tokenize("{{ 'abc }}"), Error);
}

}  // namespace
}  // namespace ridge::tmpl
