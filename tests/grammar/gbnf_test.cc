// GBNF grammars as llama.cpp writes them: syntax (literals, classes, escapes, groups, quantifiers,
// comments, line rules), example grammars in the style of llama.cpp's grammars/ folder, and errors
// with their line:column.
#include <gtest/gtest.h>

#include <string>

#include "grammar/gbnf.h"
#include "grammar/recognize.h"

namespace ridge::grammar {
namespace {

bool accepts(std::string_view gbnf, std::string_view text) { return grammar_accepts(parse_gbnf(gbnf), text); }

std::string error_of(std::string_view gbnf) {
  try {
    parse_gbnf(gbnf);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "(no error)";
}

::testing::AssertionResult fails_with(std::string_view gbnf, std::string_view message) {
  const std::string error = error_of(gbnf);
  if (error.find(message) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "grammar gave: " << error;
}

TEST(Gbnf, LiteralsAndAlternatives) {
  const char* g = "root ::= \"yes\" | \"no\" | \"\"\n";
  EXPECT_TRUE(accepts(g, "yes"));
  EXPECT_TRUE(accepts(g, "no"));
  EXPECT_TRUE(accepts(g, ""));
  EXPECT_FALSE(accepts(g, "ye"));
  EXPECT_FALSE(accepts(g, "yesno"));
  EXPECT_TRUE(accepts("root ::= \"a\" \"b\"   \"c\"", "abc"));  // no final newline needed
}

TEST(Gbnf, Escapes) {
  EXPECT_TRUE(accepts(R"(root ::= "\n\r\t\\\"\[\]")", "\n\r\t\\\"[]"));
  EXPECT_TRUE(accepts(R"(root ::= "\x41\u00e9\U0001F600")", "A\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_TRUE(accepts(R"(root ::= [\x80-\xFF])", "\xC2\x80"));  // \xHH is a code point, as in llama.cpp
  EXPECT_FALSE(accepts(R"(root ::= [\x80-\xFF])", "\x80"));
  EXPECT_TRUE(accepts("root ::= \"\xE4\xB8\xAD\xE6\x96\x87\"", "\xE4\xB8\xAD\xE6\x96\x87"));  // raw UTF-8
}

TEST(Gbnf, Classes) {
  EXPECT_TRUE(accepts("root ::= [a-z0-9_]+", "ab_09z"));
  EXPECT_FALSE(accepts("root ::= [a-z0-9_]+", "aB"));
  EXPECT_TRUE(accepts("root ::= [^\"\\\\]+", "x\xC3\xA9y"));
  EXPECT_FALSE(accepts("root ::= [^\"\\\\]+", "x\"y"));
  EXPECT_TRUE(accepts("root ::= [-a]+", "-a-"));
  EXPECT_TRUE(accepts("root ::= [a-]+", "a-"));
  EXPECT_TRUE(accepts("root ::= [\\]]", "]"));
  EXPECT_TRUE(accepts("root ::= [\\[]", "["));
  EXPECT_TRUE(accepts("root ::= [ \\t\\n]*", " \t\n "));
  EXPECT_TRUE(accepts("root ::= [\xC3\xA0-\xC3\xBF]", "\xC3\xA9"));
  EXPECT_FALSE(accepts("root ::= [\xC3\xA0-\xC3\xBF]", "e"));
  EXPECT_TRUE(accepts("root ::= [^a]", "\xF0\x9F\x98\x80"));
  EXPECT_TRUE(accepts("root ::= [^a]", "\xE4\xB8\xAD"));
  EXPECT_FALSE(accepts("root ::= [^a]", "a"));
  EXPECT_FALSE(accepts("root ::= [^a]", "\xE4\xB8"));
  EXPECT_TRUE(accepts("root ::= [^]", "\n"));
}

TEST(Gbnf, AnyCharacter) {
  EXPECT_TRUE(accepts("root ::= . .", "a\n"));
  EXPECT_TRUE(accepts("root ::= .", "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(accepts("root ::= .", "ab"));
  EXPECT_FALSE(accepts("root ::= .", "\xFF"));
  EXPECT_TRUE(accepts("root ::= \"<\" (. | \"\\n\")* \">\"", "<a\xC3\xA9>"));
}

TEST(Gbnf, Quantifiers) {
  EXPECT_TRUE(accepts("root ::= \"a\"*", ""));
  EXPECT_TRUE(accepts("root ::= \"a\"*", "aaa"));
  EXPECT_FALSE(accepts("root ::= \"a\"+", ""));
  EXPECT_TRUE(accepts("root ::= \"a\"? \"b\"", "b"));
  EXPECT_TRUE(accepts("root ::= \"ab\"+", "abab"));  // a quantifier takes the whole literal
  EXPECT_FALSE(accepts("root ::= \"ab\"+", "abb"));
  EXPECT_TRUE(accepts("root ::= [0-9]{3}", "123"));
  EXPECT_FALSE(accepts("root ::= [0-9]{3}", "12"));
  EXPECT_TRUE(accepts("root ::= [0-9]{2,}", "12345"));
  EXPECT_FALSE(accepts("root ::= [0-9]{2,}", "1"));
  EXPECT_TRUE(accepts("root ::= [0-9]{1,3}", "123"));
  EXPECT_FALSE(accepts("root ::= [0-9]{1,3}", "1234"));
  EXPECT_TRUE(accepts("root ::= [0-9]{ 1 , 3 }", "12"));  // spaces inside braces, as llama.cpp allows
  EXPECT_TRUE(accepts("root ::= [0-9]{0,}", ""));
  EXPECT_TRUE(accepts("root ::= (\"a\" | \"b\"){2} \"c\"", "bac"));
  EXPECT_TRUE(accepts("root ::= item{2,3}\nitem ::= [a-z] \",\"", "a,b,c,"));
  EXPECT_TRUE(accepts("root ::= (\"a\"?)*", "aa"));  // a repeated item that may be empty
  EXPECT_TRUE(accepts("root ::= (\"a\"*)+ \"b\"", "b"));
  EXPECT_TRUE(accepts("root ::= \"\"* \"x\"", "x"));
}

TEST(Gbnf, RulesCommentsAndLines) {
  const char* g =
      "# a greeting\n"
      "root ::= greeting \" \" name  # trailing comment\n"
      "\n"
      "greeting ::= \"hello\" | \"hi\"\n"
      "name ::= [A-Z] [a-z]*\n";
  EXPECT_TRUE(accepts(g, "hello World"));
  EXPECT_TRUE(accepts(g, "hi Bob"));
  EXPECT_FALSE(accepts(g, "hey Bob"));
  // Inside parentheses a sequence may span lines, comments included; after '|' the rule goes on.
  const char* multiline =
      "root ::= (\n"
      "    \"a\"   # first\n"
      "    \"b\"\n"
      "  ) |\n"
      "  \"c\"\n"
      "  | \"d\"\n"
      "# a comment between\n"
      "  | \"e\"\n";
  EXPECT_TRUE(accepts(multiline, "ab"));
  EXPECT_TRUE(accepts(multiline, "c"));
  EXPECT_TRUE(accepts(multiline, "d"));
  EXPECT_TRUE(accepts(multiline, "e"));
  EXPECT_TRUE(accepts("root ::=\n  \"x\"\n", "x"));  // the body may start on the next line
  EXPECT_TRUE(accepts("root ::= a\r\na ::= \"x\"\r\n", "x"));  // CRLF
  EXPECT_TRUE(accepts("root ::= my_rule-2\nmy_rule-2 ::= \"z\"\n", "z"));
  EXPECT_TRUE(accepts("root ::= 9lives\n9lives ::= \"cat\"\n", "cat"));  // names may start with a digit
}

TEST(Gbnf, UserNamesDoNotClashWithHelperRules) {
  // Groups and repetitions get helper rules named after their rule (root-1, ...): names a user may
  // also define.
  const char* g =
      "root ::= (\"a\" | \"b\") root-1 root-star*\n"
      "root-1 ::= \"c\"\n"
      "root-star ::= \"d\"\n";
  EXPECT_TRUE(accepts(g, "ac"));
  EXPECT_TRUE(accepts(g, "bcdd"));
  EXPECT_FALSE(accepts(g, "ab"));
}

TEST(Gbnf, RecursionAndLeftRecursion) {
  const char* nested = "root ::= \"(\" root \")\" | \"\"\n";
  EXPECT_TRUE(accepts(nested, "((()))"));
  EXPECT_FALSE(accepts(nested, "(()"));
  // The matcher refuses left recursion, naming the rule, as llama.cpp does.
  try {
    accepts("root ::= root \"a\" | \"a\"\n", "aa");
    FAIL() << "left recursion accepted";
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("left-recursive"), std::string::npos) << e.what();
  }
}

// In the style of llama.cpp's grammars/json.gbnf.
TEST(Gbnf, JsonGrammar) {
  const char* json = R"gbnf(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)gbnf";
  EXPECT_TRUE(accepts(json, R"({"a": 1, "b": [true, null, "x\n\u00e9"], "c": {"d": -2.5e3}})"));
  EXPECT_TRUE(accepts(json, "{}"));
  EXPECT_TRUE(accepts(json, "{\n  \"k\": \"\xE4\xB8\xAD\"}"));
  EXPECT_FALSE(accepts(json, "[1]"));           // the root is an object
  EXPECT_FALSE(accepts(json, R"({"a": 01})"));  // no leading zeros
  EXPECT_FALSE(accepts(json, R"({"a" 1})"));
  EXPECT_FALSE(accepts(json, "{\"a\": \"\x01\"}"));  // a raw control in a string
  EXPECT_FALSE(accepts(json, R"({"a": "\x"})"));
}

// In the style of llama.cpp's grammars/arithmetic.gbnf.
TEST(Gbnf, ArithmeticGrammar) {
  const char* arithmetic = R"gbnf(root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)gbnf";
  EXPECT_TRUE(accepts(arithmetic, "1+2=3\n"));
  EXPECT_TRUE(accepts(arithmetic, "(a +b) *c = x_1\nx=2\n"));  // ws follows terms, not operators
  EXPECT_FALSE(accepts(arithmetic, "(a + b)=c\n"));
  EXPECT_FALSE(accepts(arithmetic, "1+=3\n"));
  EXPECT_FALSE(accepts(arithmetic, "1+2=3"));
}

// In the style of llama.cpp's grammars/list.gbnf and chess.gbnf.
TEST(Gbnf, ListAndChessGrammars) {
  const char* list = R"gbnf(root ::= item+

# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
)gbnf";
  EXPECT_TRUE(accepts(list, "- milk\n- \xC5\x93ufs\n"));
  EXPECT_FALSE(accepts(list, ""));
  EXPECT_FALSE(accepts(list, "- a\xC2\x85" "b\n"));  // U+0085 is excluded
  EXPECT_FALSE(accepts(list, "-milk\n"));

  const char* chess = R"gbnf(root ::= (
    # it must start with the characters "1. " followed by a sequence
    # of characters that match the `move` rule, followed by a space, followed
    # by another move, and then a newline
    "1. " move " " move "\n"

    # it's followed by one or more subsequent moves, numbered with one or two digits
    ([1-9] [0-9]? ". " move " " move "\n")+
)

# `move` is an abstract representation, which can be a pawn, nonpawn, or castle.
move ::= (pawn | nonpawn | castle) [+#]?

pawn ::= [a-h] [1-8]
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]
castle ::= "O-O" "-O"?
)gbnf";
  EXPECT_TRUE(accepts(chess, "1. e4 e5\n2. Nf3 Nc6\n3. Bb5 a6\n"));
  EXPECT_TRUE(accepts(chess, "1. e4 e5\n10. O-O-O Qxd8+\n"));
  EXPECT_FALSE(accepts(chess, "1. e4 e5\n"));  // needs a second line
  EXPECT_FALSE(accepts(chess, "1. e9 e5\n2. a3 a6\n"));
}

TEST(Gbnf, Errors) {
  EXPECT_TRUE(fails_with("a ::= \"x\"\n", "gbnf: no rule named root"));
  EXPECT_TRUE(fails_with("", "gbnf: no rule named root"));
  EXPECT_TRUE(fails_with("root ::= a b\na ::= \"x\"\n", "gbnf: 1:12: undefined rule 'b'"));
  EXPECT_TRUE(fails_with("root ::= \"x\"\nroot ::= \"y\"\n", "gbnf: 2:1: rule 'root' is defined twice"));
  EXPECT_TRUE(fails_with("root = \"x\"\n", "gbnf: 1:6: expected ::= after the rule name 'root', found '='"));
  EXPECT_TRUE(fails_with("root ::= (\"x\"\n", "gbnf: 1:10: missing ) for this ("));
  EXPECT_TRUE(fails_with("root ::= \"x\")\n", "gbnf: 1:13: expected the end of the rule (a newline), found ')'"));
  EXPECT_TRUE(fails_with("root ::= \"abc\n", "gbnf: 1:10: missing \" to close this literal"));
  EXPECT_TRUE(fails_with("root ::= [abc\n", "gbnf: 1:10: missing ] to close this class"));
  EXPECT_TRUE(fails_with("root ::= \"\\q\"\n", "gbnf: 1:11: unknown escape \\q"));
  EXPECT_TRUE(fails_with("root ::= \"\\x4\"\n", "gbnf: 1:11: expected 2 hex digits after \\x"));
  EXPECT_TRUE(fails_with("root ::= \"\\uD800\"\n", "gbnf: 1:11: a surrogate code point is no character"));
  EXPECT_TRUE(fails_with("root ::= \"\\U00110000\"\n", "gbnf: 1:11: escape beyond U+10FFFF"));
  EXPECT_TRUE(fails_with("root ::= * \"a\"\n", "gbnf: 1:10: expected an item before *"));
  EXPECT_TRUE(fails_with("root ::= [z-a]\n", "gbnf: 1:12: class range out of order z-a"));
  EXPECT_TRUE(fails_with("root ::= []\n", "gbnf: 1:10: empty class [] matches nothing"));
  EXPECT_TRUE(fails_with("root ::= \"a\"{3,2}\n", "gbnf: 1:13: numbers out of order in {m,n}"));
  EXPECT_TRUE(fails_with("root ::= \"a\"{x}\n", "gbnf: 1:14: expected a number in {m,n}"));
  EXPECT_TRUE(fails_with("root ::= \"a\"{2\n", "gbnf: 1:15: expected } to close {m,n}"));
  EXPECT_TRUE(fails_with("root ::= \"a\"{0,20000}\n", "gbnf: 1:16: repetition bound over the limit of 10000"));
  std::string big = "root ::=";
  for (int i = 0; i < 6; ++i) big += " \"abcdefghij\"{0,2000}";  // 20000 symbols each
  EXPECT_TRUE(fails_with(big, "more than 100000 symbols once unrolled"));
  EXPECT_TRUE(fails_with("root ::= <think> \"x\"\n", "gbnf: 1:10: token references <...> are not supported"));
  EXPECT_TRUE(fails_with("root ::= \"a\" \xC3\n", "gbnf: 1:14: expected the end of the rule (a newline), found inv"));
  EXPECT_TRUE(fails_with("root ::= \"a\xC3\"\n", "gbnf: 1:12: invalid UTF-8"));
  // A newline outside parentheses ends the rule: the next line must start a rule.
  EXPECT_TRUE(fails_with("root ::= \"a\"\n  \"b\"\n", "gbnf: 2:3: expected a rule name, found '\"'"));
  EXPECT_TRUE(fails_with("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')'),
                         "gbnf: 1:210: groups nested deeper than 200"));
  // Columns count characters, not bytes.
  EXPECT_TRUE(fails_with("root ::= \"\xC3\xA9\xC3\xA9\" x\n", "gbnf: 1:15: undefined rule 'x'"));
}

}  // namespace
}  // namespace ridge::grammar
