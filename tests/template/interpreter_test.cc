// The interpreter against jinja2: each case's expected output (or error) is what jinja2 3.1 renders
// for it in transformers' chat-template environment (tojson, raise_exception, strftime_now at
// 2025-12-01, loop controls, trim_blocks, lstrip_blocks).
#include "template/template.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "render_helper.h"

namespace ridge::tmpl {
namespace {

struct Case {
  const char* source;
  const char* context;
  const char* expected;
  bool raises;
};

const Case kCases[] = {
    {"{{ [1, 'a', none, true, 1.5, {'k': \"v'\"}] }}", "{}", "[1, 'a', None, True, 1.5, {'k': \"v'\"}]", false},
    {"{{ (1,) }}|{{ (1, 2) }}|{{ () }}", "{}", "(1,)|(1, 2)|()", false},
    {"{{ 7/2 }} {{ 7//2 }} {{ -7//2 }} {{ 7%3 }} {{ -7 % 3 }} {{ 2**10 }} {{ 1e20 }} {{ 1.0 }} {{ 0.1+0.2 }} {{ 1e-5 }} {{ 123456789.125 }}", "{}", "3.5 3 -4 1 2 1024 1e+20 1.0 0.30000000000000004 1e-05 123456789.125", false},
    {"{{ 3 * 'ab' }}{{ 'x' * 2 }}{{ [1] * 2 }}{{ [1] + [2] }}", "{}", "abababxx[1, 1][1, 2]", false},
    {"{{ 'abc' ~ 1 ~ none ~ true ~ foo }}", "{}", "abc1NoneTrue", false},
    {"{{ '%s-%d|%5s|%r|%.2f' % ('a', 3, 'ab', 'c', 1.234) }}", "{}", "a-3|   ab|'c'|1.23", false},
    {"{{ 1 if false }}|{{ 'y' if x else 'n' }}", "{\"x\": 0}", "|n", false},
    {"{{ x or 'd' }}|{{ x and 'a' }}|{{ not x }}|{{ 'a' in 'cat' }}|{{ 2 not in [1, 2] }}|{{ 'k' in d }}", "{\"x\": \"\", \"d\": {\"k\": 1}}", "d||True|True|False|True", false},
    {"{{ 1 < 2 }}{{ 'a' >= 'b' }}{{ [1, 2] == [1, 2] }}{{ 1 == 1.0 }}{{ true == 1 }}{{ none == foo }}", "{}", "TrueFalseTrueTrueTrueFalse", false},
    {"{{ -x|abs }}|{{ -1|abs }}|{{ 2 + 3 * 4 }}|{{ (2 + 3) * 4 }}|{{ 2 ** 3 ** 2 }}", "{\"x\": 5}", "5|1|14|20|64", false},
    {"{{ 1 ~ 2 + 3 }}", "{}", "", true},
    // jinja2: TypeError: can only concatenate str (not "int") to str
    {"{{ m.role }}|{{ m['content'] }}|{{ m.missing }}|{{ m.items()|list }}|{{ none.x }}|{{ l[1] }}|{{ l[-1] }}|{{ l[9] }}|{{ l.0 }}", "{\"m\": {\"role\": \"user\", \"content\": \"hi\"}, \"l\": [1, 2, 3]}", "user|hi||[('role', 'user'), ('content', 'hi')]||2|3||1", false},
    {"{{ s[::-1] }}|{{ s[1:] }}|{{ s[:-1] }}|{{ l[1:] }}|{{ l[::2] }}|{{ s[1] }}|{{ s|length }}", "{\"s\": \"h\\u00e9llo\", \"l\": [1, 2, 3, 4]}", "olléh|éllo|héll|[2, 3, 4]|[1, 3]|é|5", false},
    {"{% for x in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}", "{}", "1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|", false},
    {"{% for x in [1, 2, 3] %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }}{{ loop.cycle('a', 'b') }} {% endfor %}", "{}", "<1>2a 1<2>3b 2<3>a ", false},
    {"{% for a in [1, 2, 3] if a > 1 %}{{ loop.index }}{{ loop.length }}{{ loop.last }}{% endfor %}", "{}", "12False22True", false},
    {"{% for x in [] %}a{% else %}e{% endfor %}|{% for x in foo %}a{% else %}u{% endfor %}", "{}", "e|u", false},
    {"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}", "{\"d\": {\"b\": 1, \"a\": 2}}", "b=1;a=2;ba", false},
    {"{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", "{}", "0134", false},
    {"{% for i in range(3) %}{% if i == 0 %}{% set x = 'a' %}{% endif %}[{{ x }}]{% endfor %}", "{}", "[a][][]", false},
    {"{% set x = 1 %}{% for i in range(2) %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}", "{}", "221", false},
    {"{% if true %}{% set y = 5 %}{% endif %}{{ y }}", "{}", "5", false},
    {"{% set ns = namespace(a=1, found=false) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.found }}", "{}", "4False", false},
    {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (3, 4) %}{% set c, d = t %}{{ c }}{{ d }}", "{}", "1234", false},
    {"{% set x %}  block {{ 1 }} {% endset %}[{{ x }}]{% set y | trim %}  z  {% endset %}[{{ y }}]", "{}", "[  block 1 ][z]", false},
    {"{% if a %}1{% elif b %}2{% else %}3{% endif %}{% if not a and not b %}4{% endif %}", "{\"a\": 0, \"b\": 1}", "2", false},
    {"{% macro m(a, b=2) %}{{ a }}{{ b }}{{ varargs }}{% endmacro %}{{ m(1) }}{{ m(1, 3, 4) }}{{ m(b=5, a=6) }}", "{}", "12()13(4,)65()", false},
    {"{% set x = 3 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 4 %}{{ m() }}", "{}", "4", false},
    {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", "{}", "321", false},
    {"{% filter upper %}abc{{ 'd' }}{% endfilter %}", "{}", "ABCD", false},
    {"{% generation %}gen{% endgeneration %}", "{}", "gen", false},
    {"{{ foo is defined }}{{ foo is undefined }}{{ none is none }}{{ 'a' is string }}{{ 1 is number }}{{ true is number }}{{ 1 is integer }}{{ true is integer }}{{ 1.0 is float }}", "{}", "FalseTrueTrueTrueTrueTrueTrueFalseTrue", false},
    {"{{ d is mapping }}{{ l is mapping }}{{ l is iterable }}{{ s is iterable }}{{ 1 is iterable }}{{ s is sequence }}{{ foo is iterable }}{{ true is boolean }}{{ true is true }}{{ 0 is false }}", "{\"d\": {}, \"l\": [], \"s\": \"x\"}", "TrueFalseTrueTrueFalseTrueTrueTrueTrueFalse", false},
    {"{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(2) }}{{ 2 is equalto 2 }}{{ 'a' is in ['a'] }}{{ x is not none }}{{ 2 is eq 2 }}{{ 3 is gt 2 }}", "{\"x\": 1}", "TrueTrueTrueFalseTrueTrueTrueTrueTrue", false},
    {"{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ [1, 2]|length }}|{{ 'abc'|count }}|{{ foo|length }}|{{ [1, 2]|join(', ') }}|{{ foo|join }}", "{}", "a b|a|2|3|0|1, 2|", false},
    {"{{ ms|map(attribute='role')|join(',') }}|{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='c')|list }}|{{ ms|rejectattr('role', 'eq', 'user')|list|length }}|{{ ms|selectattr('c')|list|length }}", "{\"ms\": [{\"role\": \"user\", \"c\": \"a\"}, {\"role\": \"assistant\", \"c\": \"\"}, {\"role\": \"user\", \"c\": \"b\"}]}", "user,assistant,user|['a', 'b']|1|2", false},
    {"{{ [1, 2, 3, 4]|select('odd')|list }}{{ [1, 0, 2]|select|list }}{{ [1, 2, 3]|reject('even')|list }}{{ ['a', 'b']|map('upper')|list }}", "{}", "[1, 3][1, 2][1, 3]['A', 'B']", false},
    {"{{ [3, 1, 2]|first }}{{ [3, 1, 2]|last }}{{ []|first }}|{{ 'abc'|list }}|{{ d|list }}|{{ 12|string }}|{{ none|string }}", "{\"d\": {\"a\": 1, \"b\": 2}}", "32|['a', 'b', 'c']|['a', 'b']|12|None", false},
    {"{{ '3.7'|int }}{{ 'x'|int }}{{ 'x'|int(7) }}{{ 3.9|int }}{{ '12'|float }}{{ 2|float }}{{ true|int }}", "{}", "307312.02.01", false},
    {"{{ 'AbC'|lower }}{{ 'AbC'|upper }}{{ 'hello WORLD'|capitalize }}{{ 'hello-world foo'|title }}{{ 'hello-world foo'.title() }}", "{}", "abcABCHello worldHello-World FooHello-World Foo", false},
    {"{{ foo|default('x') }}{{ ''|default('y') }}{{ ''|default('z', true) }}{{ 0|d('w', boolean=true) }}{{ none|default('n') }}", "{}", "xzwNone", false},
    {"{{ d|items|list }}{{ d|dictsort }}{{ d|dictsort(reverse=true) }}{{ d|dictsort(by='value') }}", "{\"d\": {\"b\": 1, \"a\": 2, \"C\": 0}}", "[('b', 1), ('a', 2), ('C', 0)][('a', 2), ('b', 1), ('C', 0)][('C', 0), ('b', 1), ('a', 2)][('C', 0), ('b', 1), ('a', 2)]", false},
    {"{{ ['b', 'A', 'a', 'B']|unique|list }}{{ [3, 1, 2]|sort }}{{ ['b', 'A']|sort }}{{ ['b', 'A']|sort(case_sensitive=true) }}{{ [1, 3, 2]|sort(reverse=true) }}{{ ms|sort(attribute='n')|map(attribute='n')|list }}", "{\"ms\": [{\"n\": 2}, {\"n\": 1}]}", "['b', 'A'][1, 2, 3]['A', 'b']['A', 'b'][3, 2, 1][1, 2]", false},
    {"{{ 'aXbXc'|replace('X', '-') }}|{{ 'aXbXc'|replace('X', '-', 1) }}|{{ 'a\nb\n\nc'|indent(2) }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }}", "{}", "a-b-c|a-bXc|a\n  b\n\n  c|  a\n  b|a\n  \n  b", false},
    {"{{ '<a href=\"x\">&\\''|e }}|{{ '<b>'|safe }}|{{ 3|round }}{{ 2.5|round }}{{ 3.5|round }}{{ 2.567|round(2) }}{{ 2.5|round(0, 'floor') }}{{ 2.1|round(0, 'ceil') }}", "{}", "&lt;a href=&#34;x&#34;&gt;&amp;&#39;|<b>|32.04.02.572.03.0", false},
    {"{{ -3|abs }}{{ [1, 2, 3]|sum }}{{ ms|sum(attribute='n') }}{{ [3, 1, 2]|max }}{{ [3, 1, 2]|min }}{{ ['b', 'A']|max }}{{ []|max }}|{{ [1, 2]|reverse|list }}{{ 'abc'|reverse }}", "{\"ms\": [{\"n\": 2}, {\"n\": 1.5}]}", "363.531b|[2, 1]cba", false},
    {"{{ '%s and %s'|format('a', 'b') }}|{{ 'one two  three'|wordcount }}", "{}", "a and b|3", false},
    {"{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ 'é\n\"'|tojson }}|{{ 1.0|tojson }}|{{ (1, 2)|tojson }}|{{ d|tojson(separators=(',', ':')) }}|{{ d|tojson(sort_keys=true) }}|{{ 'é'|tojson(ensure_ascii=true) }}", "{\"d\": {\"b\": [1, {\"x\": null}], \"a\": true, \"e\": {}, \"f\": []}}", "{\"b\": [1, {\"x\": null}], \"a\": true, \"e\": {}, \"f\": []}|{\n  \"b\": [\n    1,\n    {\n      \"x\": null\n    }\n  ],\n  \"a\": true,\n  \"e\": {},\n  \"f\": []\n}|\"é\\n\\\"\"|1.0|[1, 2]|{\"b\":[1,{\"x\":null}],\"a\":true,\"e\":{},\"f\":[]}|{\"a\": true, \"b\": [1, {\"x\": null}], \"e\": {}, \"f\": []}|\"\\u00e9\"", false},
    {"{{ '  x  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ '  x  '.rstrip() }}|{{ 'a b  c'.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}", "{}", "x|axx|  x|['a', 'b', 'c']|['a', 'b', '', 'c']|['a', 'b,c']", false},
    {"{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'abc'.upper() }}{{ 'ABC'.lower() }}{{ 'aab'.replace('a', 'x') }}{{ 'hello world'.capitalize() }}", "{}", "TrueTrueABCabcxxbHello world", false},
    {"{{ '{}-{x}'.format(1, x=2) }}{{ '{0}{0}'.format(3) }}|{{ 'abcb'.find('b') }}{{ 'abcb'.rfind('b') }}{{ 'abcb'.find('z') }}|{{ 'abab'.count('ab') }}|{{ ', '.join(['a', 'b']) }}|{{ '12'.isdigit() }}{{ 'a1'.isalpha() }}", "{}", "1-233|13-1|2|a, b|TrueFalse", false},
    {"{{ d.get('a') }}{{ d.get('z') }}{{ d.get('z', 5) }}{{ d.keys()|list }}{{ d.values()|list }}{{ l.index(2) }}{{ l.count(1) }}", "{\"d\": {\"a\": 1}, \"l\": [1, 2, 1]}", "1None5['a'][1]12", false},
    {"{{ strftime_now('%Y-%m-%d %d %B %Y %b') }}", "{}", "2025-12-01 01 December 2025 Dec", false},
    {"{{ dict(a=1, b='x') }}{{ range(3)|list }}{{ range(1, 7, 2)|list }}{{ range(3, 0, -1)|list }}", "{}", "{'a': 1, 'b': 'x'}[0, 1, 2][1, 3, 5][3, 2, 1]", false},
    {"{{ foo.bar }}", "{}", "", true},
    // jinja2: UndefinedError: 'foo' is undefined
    {"{{ d.x.y }}", "{\"d\": {}}", "", true},
    // jinja2: UndefinedError: 'dict object' has no attribute 'x'
    {"{{ foo() }}", "{}", "", true},
    // jinja2: UndefinedError: 'foo' is undefined
    {"{{ 'a' + 1 }}", "{}", "", true},
    // jinja2: TypeError: can only concatenate str (not "int") to str
    {"{{ x.append(1) }}", "{\"x\": []}", "", true},
    // jinja2: SecurityError: access to attribute 'append' of 'list' object is unsafe.
    {"{{ raise_exception('no system role') }}", "{}", "", true},
    // jinja2: TemplateError: no system role
    {"{{ foo|tojson }}", "{}", "", true},
    // jinja2: TypeError: Object of type Undefined is not JSON serializable
    {"{{ 1 / 0 }}", "{}", "", true},
    // jinja2: ZeroDivisionError: division by zero
    {"{% set x = 1 %}{% set x.a = 2 %}", "{}", "", true},
    // jinja2: TemplateRuntimeError: cannot assign attribute on non-namespace object
    {"{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "{}", "", true},
    // jinja2: TypeError: macro 'm' takes not more than 1 argument(s)
    {"{{ foo < 1 }}", "{}", "", true},
    // jinja2: UndefinedError: 'foo' is undefined
    {"{{ -foo }}", "{}", "", true},
    // jinja2: UndefinedError: 'foo' is undefined
    {"{% for a, b in [1] %}{% endfor %}", "{}", "", true},
    // jinja2: TypeError: cannot unpack non-iterable int object
};

class JinjaCase : public ::testing::TestWithParam<Case> {};

TEST_P(JinjaCase, RendersAsJinja2) {
  const Case& c = GetParam();
  if (c.raises) {
    EXPECT_THROW(testing::render(c.source, c.context), Error) << c.source;
  } else {
    EXPECT_EQ(testing::render(c.source, c.context), c.expected) << c.source;
  }
}

INSTANTIATE_TEST_SUITE_P(Template, JinjaCase, ::testing::ValuesIn(kCases));

TEST(TemplateRender, RaiseExceptionCarriesTheMessage) {
  try {
    testing::render("{{ raise_exception('Conversation roles must alternate') }}");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Conversation roles must alternate"), std::string::npos);
  }
}

TEST(TemplateRender, UndefinedErrorsNameWhatWasMissing) {
  try {
    testing::render("{{ messages[0].content.x.y }}", R"({"messages": [{"content": {}}]})");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no attribute 'x'"), std::string::npos) << e.what();
  }
}

TEST(TemplateRender, ContextKeepsKeyOrderForTojson) {
  EXPECT_EQ(testing::render("{{ t|tojson }}", R"({"t": {"z": 1, "a": {"y": 2, "b": 3}}})"),
            R"({"z": 1, "a": {"y": 2, "b": 3}})");
}

}  // namespace
}  // namespace ridge::tmpl
