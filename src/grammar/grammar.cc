#include "grammar/grammar.h"

#include <fmt/format.h>

namespace ridge::grammar {

namespace {

std::string byte_text(int b) {
  if (b == '\\' || b == '"' || b == ']' || b == '[' || b == '^' || b == '-') return fmt::format("\\{}", char(b));
  if (b >= 0x20 && b < 0x7F) return std::string(1, char(b));
  return fmt::format("\\x{:02X}", b);
}

std::string set_text(const ByteSet& set) {
  if (set.count() == 1) {
    for (int b = 0; b < 256; ++b)
      if (set.has(static_cast<uint8_t>(b))) return "\"" + byte_text(b) + "\"";
  }
  std::string out = "[";
  for (int b = 0; b < 256;) {
    if (!set.has(static_cast<uint8_t>(b))) {
      ++b;
      continue;
    }
    int e = b;
    while (e + 1 < 256 && set.has(static_cast<uint8_t>(e + 1))) ++e;
    out += byte_text(b);
    if (e > b) out += "-" + byte_text(e);
    b = e + 1;
  }
  return out + "]";
}

}  // namespace

std::string Grammar::to_string() const {
  std::string out;
  auto print_rule = [&](const Rule& rule) {
    out += rule.name + " ::=";
    if (rule.alternatives.empty()) out += " [] (nothing)";
    for (size_t a = 0; a < rule.alternatives.size(); ++a) {
      if (a) out += " |";
      if (rule.alternatives[a].empty()) out += " \"\"";
      for (const Symbol& s : rule.alternatives[a])
        out += " " + (s.kind == Symbol::Kind::kBytes ? set_text(s.bytes) : rules.at(s.rule).name);
    }
    out += "\n";
  };
  if (root >= 0) print_rule(rules.at(root));
  for (RuleId r = 0; r < static_cast<RuleId>(rules.size()); ++r)
    if (r != root) print_rule(rules[r]);
  return out;
}

}  // namespace ridge::grammar
