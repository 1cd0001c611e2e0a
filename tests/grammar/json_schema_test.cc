// JSON Schema to grammar: the texts each keyword's grammar accepts and rejects (exhaustively for
// integer ranges), the JSON spellings of strings and numbers, member order and whitespace, $ref
// resolution, composition (allOf / anyOf / oneOf / not / if) compiled exactly, and the errors for
// unsupported keywords, unsatisfiable schemas and schemas too large to compile.
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/recognize.h"

namespace ridge::grammar {
namespace {

struct Compiled {
  Grammar grammar;
  bool operator()(std::string_view text) const { return grammar_accepts(grammar, text); }
};

// Validation semantics (every spelling) unless a test asks for generation's one spelling.
JsonSchemaOptions exact() {
  JsonSchemaOptions options;
  options.all_escapes = true;
  return options;
}

Compiled compile(std::string_view schema, JsonSchemaOptions options = exact()) {
  return Compiled{json_schema_grammar(nlohmann::ordered_json::parse(schema), options)};
}

Compiled flexible(std::string_view schema, int max_whitespace = 20) {
  JsonSchemaOptions options = exact();
  options.whitespace = Whitespace::kFlexible;
  options.max_whitespace = max_whitespace;
  return compile(schema, options);
}

std::string error_of(std::string_view schema) {
  try {
    compile(schema);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_all(const Compiled& g, const std::vector<std::string>& yes, const std::vector<std::string>& no) {
  for (const auto& t : yes) EXPECT_TRUE(g(t)) << "should accept " << t;
  for (const auto& t : no) EXPECT_FALSE(g(t)) << "should reject " << t;
}

TEST(JsonSchemaTest, GenerationSpellsEachValueOneWay) {
  const Compiled g = compile(R"({"type":"object","properties":{"id":{"type":"integer"},"x":{"type":"number"},)"
                             R"("s":{"type":"string"}},"required":["id","x","s"],"additionalProperties":false})",
                             JsonSchemaOptions{});
  expect_all(g, {R"({"id":5,"x":1.5,"s":"a\"b\n\u0001é"})", R"({"id":-3,"x":2e10,"s":""})"},
             {R"({"id":5.0,"x":1.5,"s":""})", R"({"id":5,"x":1.50,"s":""})", R"({"id":-0,"x":1,"s":""})",
              R"({"id":5,"x":1,"s":"\u0061"})", R"({"id":5,"x":1,"s":"\/"})", R"({"\u0069d":5,"x":1,"s":""})"});
}

TEST(JsonSchemaTest, Types) {
  expect_all(compile(R"({"type":"null"})"), {"null"}, {"nul", "0", "\"null\"", " null"});
  expect_all(compile(R"({"type":"boolean"})"), {"true", "false"}, {"1", "null", "True"});
  expect_all(compile(R"({"type":"integer"})"), {"0", "-0", "12", "-120", "1.0", "-3.000"},
             {"01", "1.5", "1e2", "+1", "-", "1.", ".5", "\"1\""});
  expect_all(compile(R"({"type":"number"})"), {"0", "-1.5", "1e10", "2.5E-3", "-0.0e+1"}, {"1.", "01", "e1", "--1"});
  expect_all(compile(R"({"type":"string"})"), {R"("")", R"("abc")"}, {"abc", R"("a)"});
  expect_all(compile(R"({"type":"array"})"), {"[]", "[1,\"a\",[null],{}]"}, {"[1,]", "[,]", "{}"});
  expect_all(compile(R"({"type":"object"})"), {"{}", R"({"a":[1,{"b":null}]})"}, {"[]", R"({"a"})", R"({a:1})"});
  expect_all(compile(R"({"type":["integer","string"]})"), {"1", R"("x")"}, {"1.5", "null", "[]"});
  expect_all(compile(R"({"type":["number","integer"]})"), {"1.5", "2", "1e3"}, {"true"});
  expect_all(compile("true"), {"null", "1", R"({"a":[]})"}, {"", "nul"});
  expect_all(compile("{}"), {"[[[]]]", "-2.5e-7"}, {"[[]"});
}

TEST(JsonSchemaTest, StringSpellings) {
  const auto g = compile(R"({"type":"string"})");
  expect_all(g,
             {R"("\"\\\/\b\f\n\r\t")", R"("\u00e9\u00E9")", R"("\ud83d\udca9")", "\"\xc3\xa9\"", "\"\xf0\x9f\x92\xa9\"",
              "\"\x7f\""},
             {"\"\n\"", "\"\t\"", R"("\x41")", R"("\u00e")", R"("\a")", "\"\xc3\"", "\"\xed\xa0\x80\""});
  // The same spellings in constrained strings: every character may be escaped.
  const auto two = compile(R"({"type":"string","minLength":2,"maxLength":2})");
  expect_all(two, {R"("ab")", R"("\u0061b")", R"("\ud83d\udca9\u00e9")", "\"\xc3\xa9\xf0\x9f\x92\xa9\""},
             {R"("a")", R"("abc")", R"("\ud83d")"});
}

TEST(JsonSchemaTest, LengthsCountCodePoints) {
  const auto g = compile(R"({"maxLength":2})");
  expect_all(g, {R"("")", R"("ab")", "\"\xf0\x9f\x92\xa9\xf0\x9f\x92\xa9\"", "1", "[]"},
             {R"("abc")", "\"\xf0\x9f\x92\xa9\xf0\x9f\x92\xa9x\""});
  expect_all(compile(R"({"minLength":3})"), {R"("abc")", R"("\n\n\n")"}, {R"("ab")", R"("\n\n")"});
}

TEST(JsonSchemaTest, LengthRangesExhaustive) {
  const auto quoted = [](int n) { return "\"" + std::string(size_t(n), 'x') + "\""; };
  for (int min = 0; min <= 9; ++min) {
    for (int max = -1; max <= 13; ++max) {
      if (max >= 0 && max < min) continue;
      std::string schema = R"({"type":"string","minLength":)" + std::to_string(min);
      if (max >= 0) schema += R"(,"maxLength":)" + std::to_string(max);
      const auto g = compile(schema + "}");
      for (int n = 0; n <= 16; ++n) EXPECT_EQ(g(quoted(n)), n >= min && (max < 0 || n <= max)) << schema << " " << n;
    }
  }
}

TEST(JsonSchemaTest, LongLengths) {
  // Above 4096 characters a range on plain strings compiles to blocks of 2^k characters, not a state
  // per character (a few long strings here: each costs the matcher a step per byte).
  const auto quoted = [](int n) { return "\"" + std::string(size_t(n), 'x') + "\""; };
  const auto g = compile(R"({"type":"string","minLength":4099,"maxLength":4203})");
  for (int n : {4098, 4099, 4203, 4204}) EXPECT_EQ(g(quoted(n)), n >= 4099 && n <= 4203) << n;
  const auto at_least = compile(R"({"type":"string","minLength":5000})");
  EXPECT_FALSE(at_least(quoted(4999)));
  EXPECT_TRUE(at_least(quoted(5001)));
  // Ranges stay exact under negation, and a long bound on a finite language costs nothing.
  const auto ranged = compile(R"({"maxLength":262144,"not":{"maxLength":3}})");
  expect_all(ranged, {R"("abcd")"}, {R"("abc")", "1"});
  expect_all(compile(R"({"enum":["a","bb"],"maxLength":100000})"), {R"("a")", R"("bb")"}, {R"("c")"});
  expect_all(compile(R"({"type":"string","maxLength":1000000000})"), {R"("")", R"("abc")"}, {"1"});
  EXPECT_NE(error_of(R"({"enum":["ab"],"not":{"minLength":1}})").find("unsatisfiable"), std::string::npos);
  EXPECT_NE(error_of(R"({"pattern":"^a+$","maxLength":100000})").find("'maxLength'"), std::string::npos);
  EXPECT_NE(error_of(R"({"propertyNames":{"maxLength":100000}})").find("'propertyNames'"), std::string::npos);
}

TEST(JsonSchemaTest, PatternSearchesAndCombines) {
  expect_all(compile(R"({"type":"string","pattern":"a+"})"), {R"("xaay")", R"("a")"}, {R"("")", R"("xyz")"});
  expect_all(compile(R"({"type":"string","pattern":"^[a-z]+$"})"), {R"("abc")"}, {R"("abc1")", R"("")"});
  // Intersected with lengths and enums, exactly.
  expect_all(compile(R"({"type":"string","pattern":"^[a-z]+$","maxLength":3})"), {R"("ab")", R"("abc")"},
             {R"("abcd")", R"("")", R"("a1")"});
  expect_all(compile(R"({"enum":["apple","berry","cherry"],"pattern":"rr"})"), {R"("berry")", R"("cherry")"},
             {R"("apple")"});
  expect_all(compile(R"({"type":"string","not":{"pattern":"^x"}})"), {R"("ax")", R"("")"}, {R"("xa")"});
  expect_all(compile(R"({"pattern":"^\u00e9+$"})"), {"\"\xc3\xa9\xc3\xa9\"", R"("\u00e9")"}, {R"("e")"});
  EXPECT_NE(error_of(R"js({"pattern":"(?=a)"})js").find("lookahead"), std::string::npos);
}

TEST(JsonSchemaTest, Formats) {
  expect_all(compile(R"({"format":"date"})"), {R"("2024-02-29")", R"("2023-12-31")", "5"},
             {R"("2023-02-29")", R"("2023-13-01")", R"("2023-04-31")", R"("1900-02-29")"});
  expect_all(compile(R"({"format":"date-time"})"), {R"("2023-06-01T12:30:00Z")", R"("2023-06-01t12:30:00.25+05:30")"},
             {R"("2023-06-01 12:30:00Z")", R"("2023-06-01T24:00:00Z")", R"("2023-06-01T12:30:00")"});
  expect_all(compile(R"({"format":"uuid"})"), {R"("123e4567-e89b-12d3-a456-426614174000")"},
             {R"("123e4567e89b12d3a456426614174000")"});
  expect_all(compile(R"({"format":"ipv4"})"), {R"("192.168.0.1")", R"("0.0.0.0")"},
             {R"("256.1.1.1")", R"("01.1.1.1")", R"("1.1.1")"});
  expect_all(compile(R"({"format":"email"})"), {R"("joe.bloggs@example.com")"}, {R"("joe@")", R"("2962")"});
  expect_all(compile(R"({"format":"uri"})"),
             {R"("https://example.com/a?b=c#d")", R"("http://[::1]:80/p")", R"("urn:isbn:0451450523")", R"("mailto:a@b.c")"},
             {R"("//example.com")", R"("a b:c")", R"("a:]")", R"("a:b[c]")", R"("a:#x#y")"});
  // JSON Schema's default: format is an annotation.
  JsonSchemaOptions annotation;
  annotation.assert_format = false;
  expect_all(compile(R"({"format":"date"})", annotation), {R"("not a date")"}, {});
  expect_all(compile(R"({"format":"no-such-format"})"), {R"("anything")"}, {});
}

TEST(JsonSchemaTest, EnumAndConst) {
  const auto g = compile(R"({"enum":[6,"foo",[],true,{"foo":12},null]})");
  expect_all(g, {"6", "6.0", R"("foo")", "[]", "true", R"({"foo":12})", "null"},
             {"7", "false", R"("fo")", "[6]", R"({"foo":12,"bar":1})", R"({})"});
  expect_all(compile(R"({"const":-2.0})"), {"-2", "-2.0", "-2.00"}, {"2", "-2.1", "-20"});
  expect_all(compile(R"({"const":0})"), {"0", "-0", "0.0"}, {"false", "1"});
  expect_all(compile(R"({"const":false})"), {"false"}, {"0", "true"});
  expect_all(compile(R"({"const":[{"a":false}]})"), {R"([{"a":false}])"}, {R"([{"a":0}])", R"([{"a":false},1])"});
  expect_all(compile(R"({"const":"hello\u0000there"})"), {R"("hello\u0000there")"}, {R"("hellothere")"});
  expect_all(compile(R"({"enum":["foo\nbar","a\"b"]})"), {R"("foo\nbar")", R"("foo\u000abar")", R"("a\"b")"},
             {R"("foo bar")"});
}

// The integers lo..hi the grammar accepts, as a string of 0 / 1.
std::string accepted_range(const Compiled& g, int lo, int hi) {
  std::string out;
  for (int v = lo; v <= hi; ++v) out += g(std::to_string(v)) ? '1' : '0';
  return out;
}

TEST(JsonSchemaTest, IntegerRangesExhaustive) {
  struct Bounds {
    const char* keywords;
    bool (*in)(int);
  };
  const Bounds cases[] = {
      {R"("minimum":-120,"maximum":120)", [](int v) { return v >= -120 && v <= 120; }},
      {R"("minimum":5,"maximum":12)", [](int v) { return v >= 5 && v <= 12; }},
      {R"("minimum":-15,"maximum":-3)", [](int v) { return v >= -15 && v <= -3; }},
      {R"("exclusiveMinimum":-100,"exclusiveMaximum":99)", [](int v) { return v > -100 && v < 99; }},
      {R"("minimum":0)", [](int v) { return v >= 0; }},
      {R"("maximum":0)", [](int v) { return v <= 0; }},
      {R"("exclusiveMaximum":-1)", [](int v) { return v < -1; }},
      {R"("minimum":-9,"maximum":10)", [](int v) { return v >= -9 && v <= 10; }},
      {R"("minimum":1.5,"maximum":99.5)", [](int v) { return v >= 2 && v <= 99; }},
      {R"("exclusiveMinimum":-10.5,"maximum":100)", [](int v) { return v >= -10 && v <= 100; }},
      {R"("minimum":-120,"maximum":120,"multipleOf":7)", [](int v) { return v >= -120 && v <= 120 && v % 7 == 0; }},
  };
  for (const auto& c : cases) {
    const auto g = compile(std::string(R"({"type":"integer",)") + c.keywords + "}");
    std::string expected;
    for (int v = -150; v <= 150; ++v) expected += c.in(v) ? '1' : '0';
    EXPECT_EQ(accepted_range(g, -150, 150), expected) << c.keywords;
    // Spellings of the same value agree: -0 is 0, 5.0 is 5.
    EXPECT_EQ(g("-0"), c.in(0)) << c.keywords;
    EXPECT_EQ(g("-0.0"), c.in(0)) << c.keywords;
    EXPECT_EQ(g("7.00"), c.in(7)) << c.keywords;
    EXPECT_FALSE(g("7.5")) << c.keywords;
  }
  EXPECT_NE(error_of(R"({"type":"integer","minimum":5,"maximum":3})").find("unsatisfiable"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"integer","exclusiveMinimum":2,"exclusiveMaximum":3})").find("unsatisfiable"),
            std::string::npos);
}

TEST(JsonSchemaTest, NumberBounds) {
  const auto g = compile(R"({"type":"number","minimum":1.1,"exclusiveMaximum":3})");
  expect_all(g, {"1.1", "1.10", "1.2", "2", "2.999999", "1.100000001"},
             {"1.09", "1", "3", "3.0", "-2", "1e0", "1.0999"});
  const auto neg = compile(R"({"maximum":-0.5})");
  expect_all(neg, {"-0.5", "-0.51", "-1", "-100.25", "\"x\""}, {"-0.49", "0", "-0", "0.5", "-0.4999"});
  // Exponents: taken when numbers are unconstrained, not under a bound (every value has a plain spelling).
  expect_all(compile(R"({"type":"number"})"), {"1e400"}, {});
  expect_all(compile(R"({"type":"number","minimum":0})"), {"100000"}, {"1e5"});
}

TEST(JsonSchemaTest, MultipleOf) {
  const auto three = compile(R"({"type":"integer","multipleOf":3})");
  for (int v = -40; v <= 40; ++v) EXPECT_EQ(three(std::to_string(v)), v % 3 == 0) << v;
  expect_all(compile(R"({"multipleOf":1.5})"), {"0", "4.5", "-3", "3.0", "1500"}, {"1", "4.4", "0.15"});
  expect_all(compile(R"({"multipleOf":0.01})"), {"0.07", "12.3", "1", "0.070"}, {"0.001", "0.075"});
  expect_all(compile(R"({"type":"number","multipleOf":2})"), {"4", "4.0", "-8"}, {"4.5", "3"});
  EXPECT_NE(error_of(R"({"multipleOf":0.123456789})").find("'multipleOf'"), std::string::npos);
}

TEST(JsonSchemaTest, ObjectProperties) {
  const auto g = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},
                             "required":["a"]})");
  // Named members in the schema's order; other members (additionalProperties defaults to true) anywhere.
  expect_all(g, {R"({"a":1})", R"({"a":1,"b":"x"})", R"({"a":1,"c":[1,{}]})", R"({"c":1,"a":2,"d":3,"b":"y"})"},
             {R"({})", R"({"b":"x"})", R"({"a":"1"})", R"({"a":1,"b":2})", R"({"b":"x","a":1})", R"({"a":1,"a":2})"});
  const auto closed = compile(R"({"properties":{"foo":{},"bar":{}},"additionalProperties":false})");
  expect_all(closed, {"{}", R"({"foo":1})", R"({"foo":1,"bar":2})", "[]"}, {R"({"baz":1})", R"({"foo":1,"fo":2})"});
  const auto typed = compile(R"({"properties":{"foo":{}},"additionalProperties":{"type":"boolean"}})");
  expect_all(typed, {R"({"foo":1,"x":true})"}, {R"({"x":1})"});
  // A name written with escapes is the same name.
  expect_all(compile(R"({"properties":{"foo":{"type":"integer"}}})"), {R"({"f\u006fo":1})"}, {R"({"f\u006fo":"x"})"});
  // Required names outside properties take additionalProperties' schema.
  const auto required_only = compile(R"({"required":["x"],"additionalProperties":{"type":"null"}})");
  expect_all(required_only, {R"({"x":null})", R"({"x":null,"y":null})"}, {R"({"y":null})", R"({"x":1})"});
}

TEST(JsonSchemaTest, PatternPropertiesAndNames) {
  const auto g = compile(R"({"patternProperties":{"^a":{"type":"integer"},"b$":{"minimum":10}},
                             "additionalProperties":false})");
  expect_all(g, {R"({"a1":1,"xb":20,"ab":30})"}, {R"({"ab":5})", R"({"ab":"x"})", R"({"c":1})", R"({"a":"x"})"});
  const auto names = compile(R"({"propertyNames":{"maxLength":3}})");
  expect_all(names, {R"({"abc":1})", "{}", "[]"}, {R"({"abcd":1})"});
  const auto counted = compile(R"({"minProperties":1,"maxProperties":2})");
  expect_all(counted, {R"({"a":1})", R"({"a":1,"b":2})"}, {"{}", R"({"a":1,"b":2,"c":3})"});
}

TEST(JsonSchemaTest, Dependencies) {
  const auto g = compile(R"({"dependentRequired":{"bar":["foo"]}})");
  expect_all(g, {R"({})", R"({"foo":1})", R"({"foo":1,"bar":2})", R"({"bar":2,"foo":1})"}, {R"({"bar":2})"});
  const auto s = compile(R"({"dependentSchemas":{"bar":{"properties":{"foo":{"type":"integer"}}}}})");
  expect_all(s, {R"({"foo":"x"})", R"({"foo":1,"bar":2})"}, {R"({"foo":"x","bar":2})"});
}

TEST(JsonSchemaTest, Arrays) {
  expect_all(compile(R"({"items":{"type":"integer"},"minItems":1,"maxItems":3})"), {"[1]", "[1,2,3]"},
             {"[]", "[1,2,3,4]", "[1.5]"});
  const auto tuple = compile(R"({"prefixItems":[{"type":"integer"},{"type":"string"}],"items":false})");
  expect_all(tuple, {"[]", "[1]", R"([1,"a"])"}, {R"(["a"])", R"([1,"a",2])"});
  const auto contains = compile(R"({"contains":{"const":1},"minContains":2,"maxContains":3})");
  expect_all(contains, {"[1,1]", "[1,0,1,1]", "[2,1,3,1]"}, {"[1]", "[1,1,1,1]", "[]"});
  expect_all(compile(R"({"items":{"type":"number"},"contains":{"minimum":5}})"), {"[1,6]", "[6]"},
             {"[1,2]", "[6,\"x\"]"});
  EXPECT_NE(error_of(R"({"uniqueItems":true})").find("'uniqueItems'"), std::string::npos);
  expect_all(compile(R"({"uniqueItems":false})"), {"[1,1]"}, {});
}

TEST(JsonSchemaTest, Composition) {
  expect_all(compile(R"({"allOf":[{"properties":{"bar":{"type":"integer"}},"required":["bar"]},
                                  {"properties":{"foo":{"type":"string"}},"required":["foo"]}]})"),
             {R"({"bar":2,"foo":"x"})"}, {R"({"bar":2})", R"({"foo":"x"})", R"({"bar":"2","foo":"x"})"});
  expect_all(compile(R"({"allOf":[{"maximum":30},{"minimum":20}]})"), {"25", "20", "30"}, {"19", "31"});
  expect_all(compile(R"({"type":"string","anyOf":[{"maxLength":2},{"minLength":4}]})"), {R"("ab")", R"("abcd")"},
             {R"("abc")", "1"});
  // oneOf with overlapping branches: exactly one, not at least one.
  const auto one = compile(R"({"oneOf":[{"type":"integer"},{"minimum":2}]})");
  expect_all(one, {"1", "2.5", "-3"}, {"3", "1.5"});
  expect_all(compile(R"({"type":"object","oneOf":[{"required":["foo","bar"]},{"required":["foo","baz"]}]})"),
             {R"({"foo":1,"bar":2})", R"({"foo":1,"baz":3})"}, {R"({"foo":1,"bar":2,"baz":3})", R"({"foo":1})"});
  expect_all(compile(R"({"not":{"type":["integer","boolean"]}})"), {"1.5", "\"x\"", "null", "[]"}, {"1", "true"});
  expect_all(compile(R"({"not":{"type":"object","properties":{"foo":{"type":"string"}}}})"),
             {R"({"foo":1})", "1", R"({"foo":1,"bar":"x"})"}, {R"({"foo":"x"})", R"({})", R"({"bar":1})"});
  const auto cond = compile(R"({"if":{"exclusiveMaximum":0},"then":{"minimum":-10},"else":{"multipleOf":2}})");
  expect_all(cond, {"-1", "-10", "0", "4", "\"x\""}, {"-11", "3"});
  EXPECT_NE(error_of(R"({"allOf":[true,false]})").find("unsatisfiable"), std::string::npos);
}

TEST(JsonSchemaTest, Refs) {
  const auto tree = compile(R"({"properties":{"foo":{"$ref":"#"}},"additionalProperties":false})");
  expect_all(tree, {R"({"foo":{"foo":{}}})", "{}"}, {R"({"foo":{"bar":1}})", R"({"bar":1})"});
  const auto defs = compile(R"({"$defs":{"a":{"type":"integer"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/b"})");
  expect_all(defs, {"1"}, {"\"a\""});
  expect_all(compile(R"({"definitions":{"x":{"type":"null"}},"items":{"$ref":"#/definitions/x"}})"), {"[null]"},
             {"[1]"});
  const auto escaped = compile(R"({"$defs":{"tilde~field":{"type":"integer"},"slash/field":{"type":"string"},
      "percent%field":{"type":"null"}},"prefixItems":[{"$ref":"#/$defs/tilde~0field"},
      {"$ref":"#/$defs/slash~1field"},{"$ref":"#/$defs/percent%25field"}]})");
  expect_all(escaped, {R"([1,"a",null])"}, {R"(["a"])", R"([1,1])", R"([1,"a",1])"});
  // A recursive list, a $id-relative reference and an anchor.
  const auto list = compile(R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
      "next":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/node"}]}},"required":["v","next"],
      "additionalProperties":false}},"$ref":"#/$defs/node"})");
  expect_all(list, {R"({"v":1,"next":null})", R"({"v":1,"next":{"v":2,"next":null}})"},
             {R"({"v":1,"next":{"v":"x","next":null}})", R"({"v":1})"});
  expect_all(compile(R"({"$id":"http://example.com/root.json","$defs":{"a":{"$id":"other.json","type":"string"}},
                         "$ref":"other.json"})"),
             {R"("x")"}, {"1"});
  expect_all(compile(R"({"$ref":"#foo","$defs":{"A":{"$anchor":"foo","type":"integer"}}})"), {"1"}, {"1.5"});
  EXPECT_NE(error_of(R"({"$ref":"https://example.com/x.json"})").find("remote $ref"), std::string::npos);
  EXPECT_NE(error_of(R"({"$ref":"#/$defs/missing"})").find("points to nothing"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})").find("cycle"),
      std::string::npos);
}

TEST(JsonSchemaTest, Unevaluated) {
  const auto g = compile(R"({"properties":{"foo":{"type":"string"}},"allOf":[{"properties":{"bar":{}}}],
                             "unevaluatedProperties":false})");
  expect_all(g, {R"({"foo":"a","bar":1})", "{}"}, {R"({"foo":"a","baz":1})"});
  const auto any = compile(R"({"anyOf":[{"properties":{"a":{"const":1}},"required":["a"]},
                                        {"properties":{"b":{"const":2}},"required":["b"]}],
                               "unevaluatedProperties":false})");
  // Only a successful branch evaluates its properties.
  expect_all(any, {R"({"a":1})", R"({"a":1,"b":2})"}, {R"({"a":1,"b":3})", R"({"a":2,"b":2,"c":0})"});
  expect_all(compile(R"({"prefixItems":[{"type":"string"}],"unevaluatedItems":false})"), {R"(["a"])", "[]"},
             {R"(["a",1])"});
}

TEST(JsonSchemaTest, Whitespace) {
  const char* schema = R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}})";
  const auto compact = compile(schema);
  const auto loose = flexible(schema, 5);
  const std::string pretty = "{\n  \"a\": [\n    1,\n    2\n  ]\n}";
  EXPECT_TRUE(compact(R"({"a":[1,2]})"));
  EXPECT_FALSE(compact(pretty));
  EXPECT_TRUE(loose(pretty));
  EXPECT_TRUE(loose("{ }"));
  EXPECT_TRUE(loose("{\"a\" :[ ]}"));
  EXPECT_FALSE(loose("{      \"a\":[]}")) << "six spaces in a row, five allowed";
  EXPECT_FALSE(loose(" {}")) << "nothing before the value";
  EXPECT_FALSE(loose("{\"a\":[1 2]}"));
}

TEST(JsonSchemaTest, ObjectMode) {
  const Compiled g{json_object_grammar()};
  expect_all(g, {"{}", R"({"a":{"b":[1,true,null,"x"]}})"}, {"[]", "1", "\"{}\""});
}

TEST(JsonSchemaTest, RefusalsNameTheKeyword) {
  EXPECT_EQ(error_of(R"({"uniqueItems":true})"), "json schema: keyword 'uniqueItems' is not supported");
  EXPECT_EQ(error_of(R"({"items":{"$dynamicRef":"#x"}})"), "json schema: keyword '$dynamicRef' is not supported");
  EXPECT_NE(error_of(R"({"$schema":"http://example.com/my-meta"})").find("$schema"), std::string::npos);
  EXPECT_EQ(error_of("false"), "json schema: unsatisfiable: no JSON value validates against the schema");
  EXPECT_NE(error_of(R"({"type":"object","required":["a"],"properties":{"a":false}})").find("unsatisfiable"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"minLength":-1})").find("'minLength'"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"strin"})").find("unknown type"), std::string::npos);
  // Annotations and unknown keywords do not constrain anything.
  expect_all(compile(R"({"title":"t","description":"d","examples":[1],"default":2,"deprecated":true,"readOnly":true,
                         "$comment":"c","contentMediaType":"application/json","x-custom":{"type":"string"}})"),
             {"1", "\"s\""}, {});
}

TEST(JsonSchemaTest, LargeSchemasFinishOrFailQuickly) {
  // About 1 MB: many definitions, each an object of a few typed properties, all reachable.
  nlohmann::ordered_json schema = {{"type", "object"},
                                   {"properties", nlohmann::ordered_json::object()},
                                   {"$defs", nlohmann::ordered_json::object()}};
  for (int i = 0; i < 6000; ++i) {
    const std::string name = "definition_number_" + std::to_string(i);
    schema["$defs"][name] = {{"type", "object"},
                             {"description", std::string(60, 'd')},
                             {"properties",
                              {{"id", {{"type", "integer"}, {"minimum", 0}}},
                               {"label", {{"type", "string"}, {"maxLength", 40}}},
                               {"tags", {{"type", "array"}, {"items", {{"enum", {"a", "b", "c"}}}}}}}},
                             {"required", {"id"}}};
    if (i % 60 == 0) schema["properties"]["field_" + std::to_string(i)] = {{"$ref", "#/$defs/" + name}};
  }
  ASSERT_GT(schema.dump().size(), size_t(1) << 20);
  const auto start = std::chrono::steady_clock::now();
  try {
    json_schema_grammar(schema);
  } catch (const GrammarError&) {  // refusing is fine too, quickly
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A bound on hanging, not a speed target (0.4 s in Release here; sanitizer builds are several times slower).
  EXPECT_LT(seconds, 30.0);

  // Too deep, too many repetitions: clean errors.
  std::string deep = "true";
  for (int i = 0; i < 2000; ++i) deep = R"({"items":)" + deep + "}";
  EXPECT_NE(error_of(deep).find("too deeply"), std::string::npos);
}

}  // namespace
}  // namespace ridge::grammar
