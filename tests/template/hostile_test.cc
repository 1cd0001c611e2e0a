// Hostile templates end quickly with a clear error: endless loops, huge output, recursion.
#include <gtest/gtest.h>

#include <chrono>

#include "core/error.h"
#include "render_helper.h"

namespace ridge::tmpl {
namespace {

// The error a render ends with, and that it ended in bounded time (generous: sanitizer builds run
// the interpreter an order of magnitude slower than release builds).
std::string failure(const std::string& source, const RenderOptions& options = {}) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    testing::render(source, "{}", options);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << source;
  return message;
}

TEST(TemplateHostile, HugeRangeIsRefused) {
  EXPECT_NE(failure("{% for i in range(10**9) %}x{% endfor %}").find("range too big"), std::string::npos);
}

// The step budget, made small so the test is quick in every build (the default is 2,000,000).
RenderOptions few_steps() {
  RenderOptions options;
  options.limits.max_steps = 20'000;
  return options;
}

TEST(TemplateHostile, NestedLoopsRunOutOfSteps) {
  const std::string loops =
      "{% for i in range(100000) %}{% for j in range(100000) %}{% set x = 1 %}{% endfor %}{% endfor %}";
  EXPECT_NE(failure(loops, few_steps()).find("gave up after"), std::string::npos);
}

TEST(TemplateHostile, OutputPastTheCapIsRefused) {
  EXPECT_NE(failure("{% for i in range(20000) %}{{ 'x' * 100 }}{% endfor %}").find("output passes the limit"),
            std::string::npos);
  RenderOptions small;
  small.limits.max_output = 1000;
  EXPECT_NE(failure("{{ 'x' * 2000 }}", small).find("limit of 1000 bytes"), std::string::npos);
}

TEST(TemplateHostile, DoublingStringsHitTheCap) {
  EXPECT_NE(failure("{% set ns = namespace(s='xx') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
                    "{% endfor %}")
                .find("limit"),
            std::string::npos);
  EXPECT_NE(failure("{{ 'x' * 10**12 }}").find("too large"), std::string::npos);
}

TEST(TemplateHostile, MacroRecursionIsBounded) {
  EXPECT_NE(failure("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("recursion"), std::string::npos);
  // Mutual recursion too.
  EXPECT_NE(failure("{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}")
                .find("recursion"),
            std::string::npos);
}

TEST(TemplateHostile, ExponentialMacroFanOutRunsOutOfSteps) {
  EXPECT_NE(failure("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
                    few_steps())
                .find("gave up after"),
            std::string::npos);
}

TEST(TemplateHostile, IntegerOverflowIsAnError) {
  EXPECT_NE(failure("{{ 2 ** 100 }}").find("overflow"), std::string::npos);
}

}  // namespace
}  // namespace ridge::tmpl

namespace ridge::tmpl {
namespace {

TEST(TemplateHostile, HugeNumbersAreValuesOrErrorsNotCrashes) {
  EXPECT_EQ(testing::render("{{ 1e999 }}"), "inf");
  EXPECT_NE(failure("{{ 99999999999999999999 }}").find("too large"), std::string::npos);
  EXPECT_EQ(testing::render("{{ [{'a': 1}]|map(attribute='99999999999999999999')|list }}"), "[Undefined]");
  EXPECT_NE(failure("{{ '{99999999999}'.format(1) }}").find("no argument"), std::string::npos);
}

}  // namespace
}  // namespace ridge::tmpl
