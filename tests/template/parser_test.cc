// What the parser refuses, at load: features outside the subset (named, with their line), unknown
// filters and tests, syntax errors, and nesting past the limit.
#include "template/parser.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ridge::tmpl {
namespace {

std::string parse_error(const std::string& source) {
  try {
    parse_template(source);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TemplateParser, UnsupportedTagsFailNamingFeatureAndLine) {
  EXPECT_EQ(parse_error("a\n{% extends 'base.html' %}"), "template line 2: '{% extends %}' is not supported");
  EXPECT_EQ(parse_error("{% include 'x' %}"), "template line 1: '{% include %}' is not supported");
  EXPECT_EQ(parse_error("\n\n{% import 'x' as y %}"), "template line 3: '{% import %}' is not supported");
  EXPECT_EQ(parse_error("{% call m() %}x{% endcall %}"), "template line 1: '{% call %}' is not supported");
  EXPECT_EQ(parse_error("{% do x.append(1) %}"), "template line 1: '{% do %}' is not supported");
  EXPECT_EQ(parse_error("{% frobnicate %}"), "template line 1: unknown tag 'frobnicate'");
}

TEST(TemplateParser, UnknownFiltersAndTestsFailAtLoad) {
  EXPECT_EQ(parse_error("{{ x|from_json }}"), "template line 1: no filter named 'from_json'");
  EXPECT_EQ(parse_error("\n{{ x is frobbed }}"), "template line 2: no test named 'frobbed'");
}

TEST(TemplateParser, SyntaxErrors) {
  EXPECT_NE(parse_error("{% if x %}a"), "");
  EXPECT_NE(parse_error("{% for x in %}{% endfor %}"), "");
  EXPECT_NE(parse_error("{{ (1 }}"), "");
  EXPECT_NE(parse_error("{% endif %}"), "");
  EXPECT_NE(parse_error("{% break %}"), "");  // outside a loop
  EXPECT_EQ(parse_error("{% for x in y %}{% break %}{% endfor %}"), "");
}

TEST(TemplateParser, NestingPastTheLimitIsRefused) {
  const std::string deep_expr = "{{ " + std::string(10000, '(') + "1" + std::string(10000, ')') + " }}";
  EXPECT_NE(parse_error(deep_expr).find("nested deeper than"), std::string::npos);
  std::string deep_blocks;
  for (int i = 0; i < 5000; ++i) deep_blocks += "{% if x %}";
  EXPECT_NE(parse_error(deep_blocks).find("nested deeper than"), std::string::npos);
  std::string fine = "{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}";
  EXPECT_EQ(parse_error(fine), "");
}

TEST(TemplateParser, ParsesTheShapesChatTemplatesUse) {
  const ParsedTemplate t = parse_template(
      "{%- for message in messages if message.role != 'system' -%}\n"
      "{%- set x, y = 1, 2 if a else 3 -%}\n"
      "{{ message.content[::-1]|trim|tojson(indent=2) ~ (x is not none) }}\n"
      "{%- endfor %}");
  ASSERT_EQ(t.body.size(), 1u);
  EXPECT_EQ(t.body[0]->kind, StmtKind::For);
  EXPECT_TRUE(t.body[0]->condition);
}

}  // namespace
}  // namespace ridge::tmpl
