// libFuzzer target for the grammar front ends and the byte-level matcher (see fuzz/README.md).
// Input: byte 0 picks the kind (% 3: JSON Schema, regex, GBNF) and the whitespace policy (/ 3 % 3);
// then the source, up to the first NUL; the bytes after it steer the matcher. When build_grammar
// accepts the source, the grammar is printed, flattened (FlatGrammar::from) and run on a Pda:
//   - the steering bytes are stepped one at a time and all at once: the same state;
//   - a walk that takes, at each step, the n-th byte the state allows (n from a steering byte)
//     checks next_bytes / byte_classes / step against each other and against a second Pda that
//     steps only the walked bytes; when it ends in an accepting state, grammar_accepts (a fresh
//     matcher) must accept the walked text.
// GrammarError is the expected failure; anything else, or a broken invariant, aborts.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "grammar/flat_grammar.h"
#include "grammar/grammar_spec.h"
#include "grammar/pda.h"
#include "grammar/recognize.h"
#include "fuzz_common.h"

namespace g = ridge::grammar;

namespace {

using ridge::fuzz::check;

constexpr size_t kMaxWalk = 48;

void run_matcher(const g::Grammar& grammar, std::string_view steer) {
  auto flat = std::make_shared<const g::FlatGrammar>(g::FlatGrammar::from(grammar));
  g::Pda pda(flat);
  const g::Pda::StateId start = pda.initial();
  check(start != g::Pda::kDead);

  // The steering bytes as text: byte by byte, then in one call.
  const std::string_view text = steer.substr(0, kMaxWalk);
  g::Pda::StateId s = start;
  for (size_t i = 0; i < text.size() && s != g::Pda::kDead; ++i) s = pda.step(s, uint8_t(text[i]));
  if (s != g::Pda::kDead) {
    check(pda.step(start, reinterpret_cast<const uint8_t*>(text.data()), text.size()) == s);
  }

  // A walk through allowed bytes only, mirrored on a second Pda that steps only the walked bytes
  // (so none of its transitions comes from the first one's byte-class shortcut).
  std::string walked;
  g::Pda mirror(flat);
  g::Pda::StateId m = mirror.initial();
  s = start;
  for (size_t i = 0; i < kMaxWalk; ++i) {
    const g::ByteSet next = pda.next_bytes(s);
    check(m != g::Pda::kDead && mirror.next_bytes(m) == next && mirror.accepting(m) == pda.accepting(s));
    std::array<uint16_t, 256> classes{};
    const int n_classes = pda.byte_classes(s, classes);
    check(n_classes >= 1);
    std::array<g::Pda::StateId, 256> by_class;
    by_class.fill(-2);
    for (int b = 0; b < 256; ++b) {
      check((classes[b] != 0) == next.has(uint8_t(b)));
      check(classes[b] < n_classes);
      if (classes[b] == 0) continue;
      const g::Pda::StateId t = pda.step(s, uint8_t(b));
      check(t != g::Pda::kDead);  // an allowed byte leads somewhere
      if (by_class[classes[b]] == -2) by_class[classes[b]] = t;
      check(by_class[classes[b]] == t);  // bytes of one class lead to one state
    }
    if (next.empty() || (pda.accepting(s) && (i >= steer.size() || uint8_t(steer[i]) < 32))) break;
    int pick = i < steer.size() ? uint8_t(steer[i]) % next.count() : 0;
    int b = 0;
    for (;; ++b)
      if (next.has(uint8_t(b)) && pick-- == 0) break;
    walked.push_back(char(b));
    s = pda.step(s, uint8_t(b));
    m = mirror.step(m, uint8_t(b));
  }
  if (pda.accepting(s)) check(g::grammar_accepts(grammar, walked));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t nul = rest.find('\0');
  g::GrammarSpec spec;
  static constexpr g::GrammarSpec::Kind kKinds[] = {g::GrammarSpec::Kind::kJsonSchema, g::GrammarSpec::Kind::kRegex,
                                                    g::GrammarSpec::Kind::kGbnf};
  static constexpr g::Whitespace kSpaces[] = {g::Whitespace::kCompact, g::Whitespace::kFlexible,
                                              g::Whitespace::kSpaced};
  spec.kind = kKinds[data[0] % 3];
  spec.whitespace = kSpaces[data[0] / 3 % 3];
  spec.source = std::string(rest.substr(0, nul));
  const std::string_view steer = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  try {
    const g::Grammar grammar = g::build_grammar(spec);
    check(grammar.root >= 0 && size_t(grammar.root) < grammar.rules.size());
    volatile size_t printed = grammar.to_string().size();
    (void)printed;
    ridge::fuzz::accepted(spec.describe().c_str());
    run_matcher(grammar, steer);
  } catch (const g::GrammarError& e) {
    ridge::fuzz::rejected(e);
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  return 0;
}
