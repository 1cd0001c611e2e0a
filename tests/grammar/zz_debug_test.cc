// TEMPORARY: masks on the bench corpus against the naive per-token reference (to be removed).
#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <nlohmann/json.hpp>
#include "grammar/grammar_spec.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"

namespace ridge::grammar {
namespace {
std::shared_ptr<const TokenVocab> load(const char* path) {
  std::ifstream vf(path);
  if (!vf) return nullptr;
  nlohmann::json v = nlohmann::json::parse(vf);
  std::vector<std::string> bytes;
  for (auto& h : v["tokens"]) {
    std::string s, hx = h.get<std::string>();
    for (size_t i = 0; i < hx.size(); i += 2) s.push_back(static_cast<char>(std::stoi(hx.substr(i, 2), nullptr, 16)));
    bytes.push_back(s);
  }
  return std::make_shared<const TokenVocab>(bytes, v["stop"].get<std::vector<int32_t>>());
}
std::string slurp(const std::filesystem::path& p) { std::ifstream f(p, std::ios::binary); std::stringstream s; s << f.rdbuf(); return s.str(); }

TEST(ZzDebug, CorpusAgainstNaive) {
  const char* vp = getenv("ZZ_VOCAB");
  auto vocab = load(vp ? vp : "/tmp/vocab-q.json");
  if (!vocab) GTEST_SKIP();
  const int steps = getenv("ZZ_STEPS") ? atoi(getenv("ZZ_STEPS")) : 12;
  std::vector<std::pair<std::string, GrammarSpec>> cases;
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::directory_iterator("/work/main/bench/grammar_corpus/schemas")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& f : files) { GrammarSpec s; s.kind = GrammarSpec::Kind::kJsonSchema; s.source = slurp(f); cases.push_back({f.stem().string(), s}); }
  { std::ifstream in("/work/main/bench/grammar_corpus/regex.txt"); std::string line; int n = 0;
    while (std::getline(in, line)) { ++n; if (line.empty()) continue; GrammarSpec s; s.kind = GrammarSpec::Kind::kRegex; s.source = line; cases.push_back({"regex-" + std::to_string(n), s}); } }
  files.clear();
  for (auto& e : std::filesystem::directory_iterator("/work/main/bench/grammar_corpus/gbnf")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& f : files) { GrammarSpec s; s.kind = GrammarSpec::Kind::kGbnf; s.source = slurp(f); cases.push_back({f.stem().string(), s}); }
  size_t checked = 0, bad = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::shared_ptr<const CompiledGrammar> cg;
    try { cg = std::make_shared<const CompiledGrammar>(build_grammar(cases[i].second), vocab); } catch (const GrammarError&) { continue; }
    GrammarMatcher m(cg);
    Pda pda(cg->flat());
    Pda::StateId st = pda.initial();
    std::mt19937_64 rng(7 * 1000003 + i);
    for (int step = 0; step < steps && !m.terminated(); ++step) {
      auto mask = m.mask();
      std::vector<int32_t> allowed;
      size_t diffs = 0;
      for (int32_t t = 0; t < vocab->n_vocab(); ++t) {
        const std::string& b = vocab->bytes(t);
        bool ok = st >= 0 && !b.empty() && pda.step(st, reinterpret_cast<const uint8_t*>(b.data()), b.size()) != Pda::kDead;
        for (int32_t s : vocab->stop_tokens()) ok = ok || (t == s && st >= 0 && pda.accepting(st));
        const bool got = (mask[t >> 6] >> (t & 63)) & 1;
        if (ok != got && diffs++ < 3) printf("%s step %d token %d '%s' naive=%d got=%d\n", cases[i].first.c_str(), step, t, b.c_str(), ok, got);
        if (got) allowed.push_back(t);
      }
      ++checked; bad += diffs > 0;
      if (allowed.empty()) break;
      const int32_t pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(m.accept_token(pick));
      if (m.terminated()) break;
      const std::string& pb = vocab->bytes(pick);
      st = pda.step(st, reinterpret_cast<const uint8_t*>(pb.data()), pb.size());
    }
  }
  printf("checked %zu steps, %zu with differences\n", checked, bad);
  EXPECT_EQ(bad, 0u);
}
}  // namespace
}  // namespace ridge::grammar
