// Regex patterns compiled to grammars: the language each accepts (raw bytes, and the JSON encoding of
// a string), search semantics, the errors of unsupported features, and agreement with std::regex.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <regex>
#include <string>

#include "grammar/recognize.h"
#include "grammar/regex.h"

namespace ridge::grammar {
namespace {

bool matches(std::string_view pattern, std::string_view text) { return grammar_accepts(regex_grammar(pattern), text); }

bool matches_with(std::string_view pattern, std::string_view text, RegexOptions options) {
  GrammarBuilder builder;
  const RuleId rule = add_regex_rule(builder, pattern, options);
  return grammar_accepts(builder.finish(rule), text);
}

bool search(std::string_view pattern, std::string_view text) {
  return matches_with(pattern, text, {RegexTarget::kRaw, /*search=*/true});
}

// `encoded` is what stands between the quotes of a JSON string.
bool json_matches(std::string_view pattern, std::string_view encoded, bool search_anywhere = false) {
  return matches_with(pattern, encoded, {RegexTarget::kJsonStringContent, search_anywhere});
}

std::string error_of(std::string_view pattern) {
  try {
    regex_grammar(pattern);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "(no error)";
}

::testing::AssertionResult fails_with(std::string_view pattern, std::string_view message) {
  const std::string error = error_of(pattern);
  if (error.find(message) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "pattern " << pattern << " gave: " << error;
}

TEST(Regex, Literals) {
  EXPECT_TRUE(matches("abc", "abc"));
  EXPECT_FALSE(matches("abc", "ab"));
  EXPECT_FALSE(matches("abc", "abcd"));
  EXPECT_FALSE(matches("abc", ""));
  EXPECT_TRUE(matches("", ""));
  EXPECT_FALSE(matches("", "a"));
  EXPECT_TRUE(matches("a b", "a b"));
  EXPECT_TRUE(matches("}", "}"));   // Annex B: a lone } or ] is itself
  EXPECT_TRUE(matches("]", "]"));
  EXPECT_TRUE(matches("a{,5}", "a{,5}"));  // a { that starts no quantifier is itself
  EXPECT_TRUE(matches("a{", "a{"));
  EXPECT_TRUE(matches("{x}", "{x}"));
}

TEST(Regex, Escapes) {
  EXPECT_TRUE(matches("\\d+", "0123456789"));
  EXPECT_FALSE(matches("\\d", "a"));
  EXPECT_TRUE(matches("\\D", "a"));
  EXPECT_FALSE(matches("\\D", "5"));
  EXPECT_TRUE(matches("\\w+", "az_AZ09"));
  EXPECT_FALSE(matches("\\w", "-"));
  EXPECT_TRUE(matches("\\W", "-"));
  EXPECT_TRUE(matches("\\W", "\xC3\xA9"));  // é is no \w character in ECMAScript
  EXPECT_TRUE(matches("\\s+", " \t\n\r\v\f"));
  EXPECT_TRUE(matches("\\s", "\xC2\xA0"));      // U+00A0
  EXPECT_TRUE(matches("\\s", "\xE2\x80\xA8"));  // U+2028
  EXPECT_TRUE(matches("\\s", "\xEF\xBB\xBF"));  // U+FEFF
  EXPECT_FALSE(matches("\\s", "a"));
  EXPECT_TRUE(matches("\\S", "a"));
  EXPECT_FALSE(matches("\\S", " "));
  EXPECT_TRUE(matches("\\t\\n\\r\\f\\v\\0", std::string("\t\n\r\f\v\0", 6)));
  EXPECT_TRUE(matches("\\x41\\x7a", "Az"));
  EXPECT_TRUE(matches("\\u00e9", "\xC3\xA9"));
  EXPECT_TRUE(matches("\\u4E2D", "\xE4\xB8\xAD"));
  EXPECT_TRUE(matches("\\uD83D\\uDE00", "\xF0\x9F\x98\x80"));  // a surrogate pair is one character
  EXPECT_TRUE(matches("\\u{1F600}", "\xF0\x9F\x98\x80"));
  EXPECT_TRUE(matches("\\cJ", "\n"));
  EXPECT_TRUE(matches("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\\\/\\-", ".*+?()[]{}|^$\\/-"));
  EXPECT_FALSE(matches("\\.", "a"));
  EXPECT_TRUE(matches("\\@\\:\\#", "@:#"));  // punctuation escapes are identity escapes
}

TEST(Regex, Dot) {
  EXPECT_TRUE(matches(".", "a"));
  EXPECT_TRUE(matches(".", "\xE4\xB8\xAD"));
  EXPECT_TRUE(matches(".", "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(matches(".", "\n"));
  EXPECT_FALSE(matches(".", "\r"));
  EXPECT_FALSE(matches(".", "\xE2\x80\xA8"));  // U+2028 and U+2029 are line terminators too
  EXPECT_FALSE(matches(".", "\xE2\x80\xA9"));
  EXPECT_TRUE(matches(".", "\xE2\x80\xAA"));
  EXPECT_FALSE(matches(".", "ab"));
  EXPECT_FALSE(matches(".", ""));
  // Only well-formed UTF-8 is a character: no lone lead bytes, overlongs or surrogates.
  EXPECT_FALSE(matches(".", "\xC3"));
  EXPECT_FALSE(matches(".", "\xC0\x80"));
  EXPECT_FALSE(matches(".", "\xED\xA0\x80"));
  EXPECT_FALSE(matches(".", "\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST(Regex, Classes) {
  EXPECT_TRUE(matches("[a-c]+", "abcba"));
  EXPECT_FALSE(matches("[a-c]", "d"));
  EXPECT_TRUE(matches("[^a-c]", "d"));
  EXPECT_FALSE(matches("[^a-c]", "b"));
  EXPECT_TRUE(matches("[-a]+", "-a"));
  EXPECT_TRUE(matches("[a-]+", "a-"));
  EXPECT_TRUE(matches("[\\d-]+", "1-2"));
  EXPECT_TRUE(matches("[\\w-.]+", "a-b.c"));  // Annex B: '-' next to a class escape is itself
  EXPECT_FALSE(matches("[\\w-.]", ","));
  EXPECT_TRUE(matches("[\\]]", "]"));
  EXPECT_TRUE(matches("[\\\\]", "\\"));
  EXPECT_TRUE(matches("[.]", "."));
  EXPECT_FALSE(matches("[.]", "a"));
  EXPECT_TRUE(matches("[\\b]", "\b"));  // a backspace in a class
  EXPECT_TRUE(matches("[\\s\\d]+", " 1\t2"));
  EXPECT_TRUE(matches("[^\\d]", "x"));
  EXPECT_FALSE(matches("[^\\d]", "7"));
  EXPECT_TRUE(matches("[\\D]", "x"));
  EXPECT_TRUE(matches("[^]", "\n"));  // [^] is any character, line terminators included
  EXPECT_TRUE(matches("a|[]", "a"));  // [] matches nothing
  EXPECT_TRUE(fails_with("[]", "matches no string"));
  EXPECT_TRUE(matches("[$^]+", "$^"));
  EXPECT_TRUE(matches("[\\x41-\\x43]+", "ABC"));
  EXPECT_TRUE(matches("[\\u0000-\\uFFFF]", "\xEF\xBF\xBF"));  // the surrogates in it are dropped, not an error
}

TEST(Regex, Utf8Classes) {
  EXPECT_TRUE(matches("[\xC3\xA9-\xC3\xBC]", "\xC3\xB1"));  // [é-ü] holds ñ
  EXPECT_FALSE(matches("[\xC3\xA9-\xC3\xBC]", "a"));
  EXPECT_FALSE(matches("[\xC3\xA9-\xC3\xBC]", "\xC3\xBD"));
  EXPECT_TRUE(matches("[\xE4\xB8\x80-\xE9\xBF\xBF]+", "\xE4\xB8\xAD\xE6\x96\x87"));  // CJK: 中文
  EXPECT_TRUE(matches("[a\xF0\x9F\x98\x80]", "\xF0\x9F\x98\x80"));
  EXPECT_TRUE(matches("[a\xF0\x9F\x98\x80]", "a"));
  EXPECT_FALSE(matches("[a\xF0\x9F\x98\x80]", "\xF0\x9F\x98\x81"));
  // Negated classes take characters of every length, one character at a time.
  EXPECT_TRUE(matches("[^a]", "b"));
  EXPECT_TRUE(matches("[^a]", "\xC3\xA9"));
  EXPECT_TRUE(matches("[^a]", "\xE4\xB8\xAD"));
  EXPECT_TRUE(matches("[^a]", "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(matches("[^a]", "a"));
  EXPECT_FALSE(matches("[^a]", "bb"));
  EXPECT_FALSE(matches("[^a]", "\xE4\xB8"));
  EXPECT_FALSE(matches("[^\xC3\xA9]", "\xC3\xA9"));
  EXPECT_TRUE(matches("[^\xC3\xA9]", "\xC3\xA8"));
  EXPECT_TRUE(matches("[^\\n]", "\xE2\x80\xA8"));
  EXPECT_TRUE(matches("\xE4\xB8\xAD\xE6\x96\x87+", "\xE4\xB8\xAD\xE6\x96\x87\xE6\x96\x87"));  // 中文+ repeats 文
  EXPECT_FALSE(matches("\xE4\xB8\xAD\xE6\x96\x87+", "\xE4\xB8\xAD\xE6\x96\x87\x87"));
}

TEST(Regex, GroupsAndAlternation) {
  EXPECT_TRUE(matches("(ab)+", "ababab"));
  EXPECT_FALSE(matches("(ab)+", "aba"));
  EXPECT_TRUE(matches("(?:ab|cd){2}", "abcd"));
  EXPECT_FALSE(matches("(?:ab|cd){2}", "ab"));
  EXPECT_TRUE(matches("(?<year>\\d{4})-(?<month>\\d\\d)", "2024-05"));
  EXPECT_TRUE(matches("a|ab|abc", "ab"));
  EXPECT_TRUE(matches("a|ab|abc", "abc"));
  EXPECT_FALSE(matches("a|ab|abc", "abcd"));
  EXPECT_TRUE(matches("((a|b)c|d)*", "acbcdd"));
  EXPECT_TRUE(matches("((a|b)c|d)*", ""));
  EXPECT_FALSE(matches("((a|b)c|d)*", "ab"));
  EXPECT_TRUE(matches("x(|a)y", "xy"));
  EXPECT_TRUE(matches("x(|a)y", "xay"));
  EXPECT_TRUE(matches("()", ""));
}

TEST(Regex, Quantifiers) {
  EXPECT_TRUE(matches("a?", ""));
  EXPECT_TRUE(matches("a?", "a"));
  EXPECT_FALSE(matches("a?", "aa"));
  EXPECT_TRUE(matches("a*", ""));
  EXPECT_TRUE(matches("a*", "aaaa"));
  EXPECT_FALSE(matches("a+", ""));
  EXPECT_TRUE(matches("a+", "aaa"));
  EXPECT_TRUE(matches("a{3}", "aaa"));
  EXPECT_FALSE(matches("a{3}", "aa"));
  EXPECT_FALSE(matches("a{3}", "aaaa"));
  EXPECT_TRUE(matches("a{2,}", "aaaaa"));
  EXPECT_FALSE(matches("a{2,}", "a"));
  EXPECT_TRUE(matches("a{2,4}", "aaaa"));
  EXPECT_FALSE(matches("a{2,4}", "aaaaa"));
  EXPECT_TRUE(matches("a{0}b", "b"));
  EXPECT_TRUE(matches("a{0,0}", ""));
  // Lazy forms match the same strings.
  EXPECT_TRUE(matches("a+?b", "aaab"));
  EXPECT_TRUE(matches("a*?", ""));
  EXPECT_TRUE(matches("a??", "a"));
  EXPECT_TRUE(matches("a{2,3}?", "aaa"));
  EXPECT_FALSE(matches("a{2,3}?", "aaaa"));
  EXPECT_TRUE(matches("a{1000}", std::string(1000, 'a')));
  EXPECT_FALSE(matches("a{1000}", std::string(999, 'a')));
}

TEST(Regex, RepeatedItemsThatMatchEmpty) {
  // A repeated item that can match "" must not become a left-recursive (or endlessly ambiguous) rule.
  EXPECT_TRUE(matches("(a*)*", ""));
  EXPECT_TRUE(matches("(a*)*", "aaa"));
  EXPECT_FALSE(matches("(a*)*", "b"));
  EXPECT_TRUE(matches("(a?b?)*", "abbab"));
  EXPECT_TRUE(matches("(a?b?)+", ""));
  EXPECT_TRUE(matches("(|a)+", "aa"));
  EXPECT_TRUE(matches("((a|)(b|))*c", "abbac"));
  EXPECT_TRUE(matches("(a*b*){2,3}", "aabbab"));
  EXPECT_TRUE(matches("(a*b*){2,3}", ""));
  EXPECT_TRUE(matches("(a{0,2}){3}", "aaaaaa"));
  EXPECT_FALSE(matches("(a{0,2}){3}", "aaaaaaa"));
  EXPECT_TRUE(matches("(()*)*", ""));
  EXPECT_TRUE(matches("(a*)*b(c?)+", "aabcc"));
  // A long sequence of optional parts under a star stays small (no copy of every suffix).
  std::string optionals = "(";
  for (int i = 0; i < 500; ++i) optionals += i % 2 ? "b?" : "a?";
  optionals += ")*";
  EXPECT_TRUE(matches(optionals, "abbaab"));
  EXPECT_FALSE(matches(optionals, "abc"));
}

TEST(Regex, DeepNesting) {
  EXPECT_TRUE(matches(std::string(100, '(') + "a" + std::string(100, ')'), "a"));
  EXPECT_TRUE(fails_with(std::string(300, '(') + "a" + std::string(300, ')'), "regex: groups nested deeper than 200"));
}

TEST(Regex, Anchors) {
  EXPECT_TRUE(matches("^abc$", "abc"));
  EXPECT_TRUE(matches("^abc", "abc"));
  EXPECT_TRUE(matches("^a|b$", "b"));
  EXPECT_TRUE(matches("^$", ""));
  EXPECT_FALSE(matches("^$", "a"));
}

TEST(Regex, SearchSemantics) {
  EXPECT_TRUE(search("abc", "abc"));
  EXPECT_TRUE(search("abc", "xxabcxx"));
  EXPECT_FALSE(search("abc", "abxc"));
  EXPECT_TRUE(search("^abc", "abcxx"));
  EXPECT_FALSE(search("^abc", "xabc"));
  EXPECT_TRUE(search("abc$", "xxabc"));
  EXPECT_FALSE(search("abc$", "abcx"));
  EXPECT_TRUE(search("^abc$", "abc"));
  EXPECT_FALSE(search("^abc$", "abcabc"));
  // Each top-level alternative has its own anchors.
  EXPECT_TRUE(search("^a|b$", "ax"));
  EXPECT_TRUE(search("^a|b$", "xb"));
  EXPECT_FALSE(search("^a|b$", "xa"));
  EXPECT_FALSE(search("^a|b$", "bx"));
  EXPECT_TRUE(search("", "anything \xE4\xB8\xAD"));
  EXPECT_TRUE(search("", ""));
  EXPECT_TRUE(search("$", "xyz"));
  EXPECT_TRUE(search("^$", ""));
  EXPECT_FALSE(search("^$", "x"));
  EXPECT_TRUE(search("\\d", "room 101"));
  EXPECT_TRUE(search("\\d", "\xE4\xB8\xAD""1\n"));  // any characters around, newlines and UTF-8 included
  EXPECT_FALSE(search("\\d", "none"));
  EXPECT_FALSE(search("a", "\xFF""a"));  // not UTF-8: no character
  EXPECT_TRUE(search("^[a-z]+$", "hello"));
  EXPECT_FALSE(search("^[a-z]+$", "hello!"));
}

TEST(Regex, JsonStringContent) {
  // The pattern describes the string value; the grammar matches its JSON encoding.
  EXPECT_TRUE(json_matches("^a\"b$", "a\\\"b"));
  EXPECT_FALSE(json_matches("^a\"b$", "a\"b"));
  EXPECT_TRUE(json_matches("^a\\\\b$", "a\\\\b"));  // one backslash, written \\ in JSON
  EXPECT_FALSE(json_matches("^a\\\\b$", "a\\b"));
  EXPECT_TRUE(json_matches("^\\n$", "\\n"));
  EXPECT_TRUE(json_matches("^\\n$", "\\u000a"));
  EXPECT_TRUE(json_matches("^\\n$", "\\u000A"));
  EXPECT_FALSE(json_matches("^\\n$", "\n"));  // a raw control is not allowed in a JSON string
  EXPECT_TRUE(json_matches("^/$", "/"));
  EXPECT_TRUE(json_matches("^/$", "\\/"));
  EXPECT_TRUE(json_matches("^\xC3\xA9+$", "\xC3\xA9\xC3\xA9"));
  EXPECT_TRUE(json_matches("^[^a]$", "\\\""));
  EXPECT_TRUE(json_matches("^[^a]$", "\\\\"));
  EXPECT_TRUE(json_matches("^[^a]$", "\\u0001"));
  EXPECT_TRUE(json_matches("^[^a]$", "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(json_matches("^[^a]$", "a"));
  EXPECT_FALSE(json_matches("^[^a]$", "\""));
  EXPECT_TRUE(json_matches("^\\d{3}-\\d{4}$", "555-1234"));
  EXPECT_TRUE(json_matches("^.$", "\\t"));
  EXPECT_FALSE(json_matches("^.$", "\\n"));  // '.' excludes the newline, in any encoding
  // Search: any encoded characters around an unanchored end.
  EXPECT_TRUE(json_matches("\\d", "x1y", true));
  EXPECT_TRUE(json_matches("\\d", "\\\"1\\n", true));
  EXPECT_FALSE(json_matches("\\d", "\"1", true));  // the raw quote would end the string
  EXPECT_FALSE(json_matches("\\d", "xy", true));
  EXPECT_TRUE(json_matches("^\"", "\\\"rest", true));
}

TEST(Regex, UnsupportedFeatures) {
  EXPECT_TRUE(fails_with("(?=a)a", "regex: lookahead (?=...) is not supported"));
  EXPECT_TRUE(fails_with("a(?!b)", "regex: negative lookahead (?!...) is not supported"));
  EXPECT_TRUE(fails_with("(?<=a)b", "regex: lookbehind (?<=...) is not supported"));
  EXPECT_TRUE(fails_with("(?<!a)b", "regex: negative lookbehind (?<!...) is not supported"));
  EXPECT_TRUE(fails_with("(a)\\1", "regex: backreference \\1 is not supported"));
  EXPECT_TRUE(fails_with("(?<n>a)\\k<n>", "regex: named backreference \\k<name> is not supported"));
  EXPECT_TRUE(fails_with("\\bword", "regex: word boundary \\b is not supported"));
  EXPECT_TRUE(fails_with("a\\B", "regex: non-word boundary \\B is not supported"));
  EXPECT_TRUE(fails_with("a^b", "regex: ^ in the middle of a pattern is not supported"));
  EXPECT_TRUE(fails_with("(^a)", "regex: ^ in the middle of a pattern is not supported"));
  EXPECT_TRUE(fails_with("a$b", "regex: $ in the middle of a pattern is not supported"));
  EXPECT_TRUE(fails_with("(a$)", "regex: $ in the middle of a pattern is not supported"));
  EXPECT_TRUE(fails_with("\\p{L}", "regex: Unicode property escape \\p{...} is not supported"));
  EXPECT_TRUE(fails_with("[\\P{L}]", "regex: Unicode property escape \\P{...} is not supported"));
  EXPECT_TRUE(fails_with("(?i)abc", "regex: group modifier (?i is not supported"));
  EXPECT_TRUE(fails_with("\\012", "regex: octal escape \\01 is not supported"));
  EXPECT_TRUE(fails_with("[\\1]", "regex: octal escape \\1 is not supported"));
}

TEST(Regex, SyntaxErrors) {
  EXPECT_TRUE(fails_with("(ab", "regex: missing ) for this ( (at offset 0)"));
  EXPECT_TRUE(fails_with("ab)", "regex: unmatched ) (at offset 2)"));
  EXPECT_TRUE(fails_with("x[ab", "regex: missing ] for this [ (at offset 1)"));
  EXPECT_TRUE(fails_with("*a", "regex: nothing to repeat before *"));
  EXPECT_TRUE(fails_with("a|+", "regex: nothing to repeat before +"));
  EXPECT_EQ(error_of("(?:)?"), "(no error)");
  EXPECT_TRUE(fails_with("a**", "regex: nothing to repeat"));
  EXPECT_TRUE(fails_with("a{2}{3}", "regex: nothing to repeat"));
  EXPECT_TRUE(fails_with("{2}", "regex: nothing to repeat before {"));
  EXPECT_TRUE(fails_with("a{3,2}", "regex: numbers out of order in {m,n} quantifier"));
  EXPECT_TRUE(fails_with("[z-a]", "regex: class range out of order z-a"));
  EXPECT_TRUE(fails_with("ab\\", "regex: \\ at the end of the pattern"));
  EXPECT_TRUE(fails_with("\\q", "regex: unknown escape \\q"));
  EXPECT_TRUE(fails_with("\\x4", "regex: \\x needs two hex digits"));
  EXPECT_TRUE(fails_with("\\u12", "regex: \\u needs four hex digits"));
  EXPECT_TRUE(fails_with("\\uD800", "regex: a lone surrogate \\uD800 matches no character"));
  EXPECT_TRUE(fails_with("\\u{110000}", "regex: \\u{...} beyond U+10FFFF"));
  EXPECT_TRUE(fails_with("\\c1", "regex: \\c needs a letter"));
  EXPECT_TRUE(fails_with("(?<>a)", "regex: bad group name"));
  EXPECT_TRUE(fails_with("a\xC3", "regex: invalid UTF-8 (at offset 1)"));
}

TEST(Regex, SizeLimit) {
  EXPECT_TRUE(fails_with("a{0,100000}", "more than 10000 symbols once unrolled"));
  EXPECT_TRUE(fails_with("(abc){5000}", "more than 10000 symbols once unrolled"));
  EXPECT_TRUE(fails_with("(a{100}){101}", "more than 10000 symbols once unrolled"));
  EXPECT_TRUE(fails_with("a{99999999999999999999}", "more than 10000 symbols once unrolled"));
  EXPECT_TRUE(fails_with("a{9999999999,}", "more than 10000 symbols once unrolled"));
  EXPECT_EQ(error_of("a{0,10000}"), "(no error)");
  EXPECT_EQ(error_of("(\\d{1,3}\\.){3}\\d{1,3}"), "(no error)");
}

TEST(Regex, TypicalSchemaPatterns) {
  const std::string email = "^[\\w.+-]+@[\\w-]+\\.[\\w.-]+$";
  EXPECT_TRUE(search(email, "john.doe+x@example.co.uk"));
  EXPECT_FALSE(search(email, "john.doe@example"));
  const std::string date = "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$";
  EXPECT_TRUE(search(date, "2024-02-29"));
  EXPECT_FALSE(search(date, "2024-13-01"));
  const std::string phone = "^(\\([0-9]{3}\\))?[0-9]{3}-[0-9]{4}$";
  EXPECT_TRUE(search(phone, "(888)555-1212"));
  EXPECT_TRUE(search(phone, "555-1212"));
  EXPECT_FALSE(search(phone, "(888)555-1212 ext. 532"));
  const std::string ipv4 = "^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$";
  EXPECT_TRUE(search(ipv4, "192.168.0.255"));
  EXPECT_FALSE(search(ipv4, "192.168.0.256"));
  EXPECT_TRUE(search("^[A-Z]{2,3}$|^\\d+$", "123"));
  EXPECT_TRUE(search("^[A-Z]{2,3}$|^\\d+$", "ABC"));
  EXPECT_FALSE(search("^[A-Z]{2,3}$|^\\d+$", "AB1"));
}

// Full-text matches of random ASCII strings against std::regex (ECMAScript), an independent engine.
TEST(Regex, AgreesWithStdRegex) {
  const std::vector<std::string> patterns = {
      "abc",           "a|b|c",          "(a|b)*c",       "a+b*",          "a?b?c?",        "(ab|a)(bc|c)",
      "[a-c]+",        "[^ab]*",         "a{2}",          "a{1,3}b",       "(a{2,}|b)+",    "\\d+",
      "\\w*",          "\\s?a",          "\\D\\W",        "(?:ab)+",       "a.c",           ".*",
      "(a|)+b",        "(a*)*",          "((a|b)c)*",     "x(a|b|)y",      "[\\d.]+",       "[a\\-]+",
      "a*?b",          "(a|b){0,3}",     "^a|b$",         "[^\\s]+",       "\\.",           "a\\.b",
      "(a+)+b",        "[ -.]+",         "(a|b|c){2,4}",  "(?:a?b?){2}",   "b(a*c)?a",      "[abc][^abc]",
      "(ab?)*",        "\\w+\\s\\w+",    "[\\w-]*",       ".?a.?",         "(a(b(c)?)?)+",  "a{0,2}b{1,2}",
  };
  const std::string alphabet = "aaabbbcccx1 .-_\n";  // weighted so that the patterns match often enough
  std::mt19937 rng(12345);
  int n_accepted = 0, n_rejected = 0;
  for (const std::string& pattern : patterns) {
    const Grammar grammar = regex_grammar(pattern);
    const std::regex reference(pattern, std::regex::ECMAScript);
    for (int i = 0; i < 400; ++i) {
      std::string text;
      const int length = static_cast<int>(rng() % 8);
      for (int k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
      const bool expected = std::regex_match(text, reference);
      EXPECT_EQ(grammar_accepts(grammar, text), expected) << "pattern " << pattern << " text \"" << text << "\"";
      ++(expected ? n_accepted : n_rejected);
    }
  }
  EXPECT_GT(n_accepted, 1000);  // both outcomes well represented
  EXPECT_GT(n_rejected, 1000);
  std::printf("std::regex comparison: %d accepted, %d rejected\n", n_accepted, n_rejected);
}

}  // namespace
}  // namespace ridge::grammar
