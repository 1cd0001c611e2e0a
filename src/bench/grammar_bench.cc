#include "bench/grammar_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "bench/progress.h"
#include "grammar/compiled_grammar.h"
#include "grammar/matcher.h"

namespace ridge::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> files_with(const std::string& dir, const std::string& ext) {
  std::vector<std::filesystem::path> out;
  if (dir.empty()) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t fnv1a_mask(const std::vector<uint64_t>& words, int32_t n_vocab) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const size_t n_bytes = (static_cast<size_t>(n_vocab) + 7) / 8;
  for (size_t i = 0; i < n_bytes; ++i) {
    h ^= (words[i / 8] >> (8 * (i % 8))) & 0xFF;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void write_mask(std::ostream& out, const std::vector<uint64_t>& words, int32_t n_vocab) {
  const size_t n_bytes = (static_cast<size_t>(n_vocab) + 7) / 8;
  std::string bytes(n_bytes, '\0');
  for (size_t i = 0; i < n_bytes; ++i) bytes[i] = static_cast<char>((words[i / 8] >> (8 * (i % 8))) & 0xFF);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * double(v.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - double(lo)) * (v[hi] - v[lo]);
}

// build_grammar(spec), except that a JSON schema takes the case's own JsonSchemaOptions (build_grammar
// uses the defaults but for whitespace).
grammar::Grammar case_grammar(const GrammarCase& c) {
  if (c.spec.kind != grammar::GrammarSpec::Kind::kJsonSchema) return grammar::build_grammar(c.spec);
  nlohmann::ordered_json schema;  // ordered: members are generated in the schema's order
  try {
    schema = nlohmann::ordered_json::parse(c.spec.source);
  } catch (const nlohmann::json::exception& e) {
    throw grammar::GrammarError(fmt::format("json schema: not valid JSON: {}", e.what()));
  }
  grammar::JsonSchemaOptions options = c.json_options;
  options.whitespace = c.spec.whitespace;
  return grammar::json_schema_grammar(schema, options);
}

nlohmann::json stats_of(const std::vector<double>& v) {
  return {{"count", v.size()}, {"p50", pct(v, 50)}, {"p99", pct(v, 99)},
          {"max", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())}};
}

}  // namespace

std::vector<GrammarCase> load_grammar_corpus(const std::string& schemas_dir, const std::string& regex_file,
                                             const std::string& gbnf_dir, grammar::Whitespace whitespace,
                                             const grammar::JsonSchemaOptions& json_options) {
  std::vector<GrammarCase> out;
  for (const auto& path : files_with(schemas_dir, ".json")) {
    GrammarCase c{path.stem().string(), {}, json_options};
    c.spec.kind = grammar::GrammarSpec::Kind::kJsonSchema;
    c.spec.source = slurp(path);
    c.spec.whitespace = whitespace;
    c.json_options.whitespace = whitespace;
    out.push_back(std::move(c));
  }
  if (!regex_file.empty()) {
    std::ifstream in(regex_file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.empty()) continue;  // every line is a pattern (some start with #)
      GrammarCase c{fmt::format("regex-{}", n), {}, json_options};
      c.spec.kind = grammar::GrammarSpec::Kind::kRegex;
      c.spec.source = line;
      out.push_back(std::move(c));
    }
  }
  for (const auto& path : files_with(gbnf_dir, ".gbnf")) {
    GrammarCase c{path.stem().string(), {}, json_options};
    c.spec.kind = grammar::GrammarSpec::Kind::kGbnf;
    c.spec.source = slurp(path);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<GrammarWalk> run_grammar_bench(const std::vector<GrammarCase>& corpus,
                                           std::shared_ptr<const grammar::TokenVocab> vocab,
                                           const GrammarBenchOptions& options, bool show_progress) {
  std::vector<GrammarWalk> walks;
  const int32_t n_vocab = vocab->n_vocab();
  std::unique_ptr<ProgressBar> bar;
  if (show_progress) bar = std::make_unique<ProgressBar>("grammars", static_cast<int64_t>(corpus.size()));
  for (size_t i = 0; i < corpus.size(); ++i) {
    const GrammarCase& c = corpus[i];
    GrammarWalk w;
    w.name = c.name;
    w.kind = c.spec.describe();
    std::shared_ptr<const grammar::CompiledGrammar> compiled;
    try {
      const auto t0 = Clock::now();
      compiled = std::make_shared<const grammar::CompiledGrammar>(case_grammar(c), vocab);
      w.compile_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    } catch (const grammar::GrammarError& e) {
      w.error = e.what();
      walks.push_back(std::move(w));
      if (bar) bar->advance(1, c.name);
      continue;
    }
    grammar::GrammarMatcher m(compiled);
    std::mt19937_64 rng(options.seed * 1000003 + i);
    std::vector<uint64_t> words(vocab->n_words());
    std::vector<int32_t> allowed;
    for (int32_t step = 0; step < options.max_steps && !m.terminated(); ++step) {
      const auto t0 = Clock::now();
      m.fill_mask(words.data());
      w.mask_seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      allowed.clear();
      for (int32_t t = 0; t < n_vocab; ++t)
        if ((words[t >> 6] >> (t & 63)) & 1) allowed.push_back(t);
      w.mask_hashes.push_back(fnv1a_mask(words, n_vocab));
      if (options.mask_out) write_mask(*options.mask_out, words, n_vocab);
      w.mask_counts.push_back(static_cast<int32_t>(allowed.size()));
      if (allowed.empty()) break;
      const int32_t pick = allowed[rng() % allowed.size()];
      if (!m.accept_token(pick)) {
        w.error = fmt::format("internal: the mask allowed token {} that the matcher refused", pick);
        break;
      }
      w.tokens.push_back(pick);
      if (m.terminated()) {
        w.terminated = true;
        break;
      }
      w.text += vocab->bytes(pick);
    }
    walks.push_back(std::move(w));
    if (bar) bar->advance(1, c.name);
  }
  return walks;
}

nlohmann::json grammar_walk_json(const GrammarWalk& w) {
  nlohmann::json hashes = nlohmann::json::array();
  for (uint64_t h : w.mask_hashes) hashes.push_back(fmt::format("{:016x}", h));
  return {{"name", w.name},       {"kind", w.kind},         {"error", w.error},
          {"compile_seconds", w.compile_seconds},           {"mask_seconds", w.mask_seconds},
          {"tokens", w.tokens},   {"mask_fnv1a", hashes},   {"mask_counts", w.mask_counts},
          {"text", w.text},       {"terminated", w.terminated}};
}

nlohmann::json grammar_bench_summary(const std::vector<GrammarWalk>& walks) {
  std::vector<double> compile, mask;
  int64_t refused = 0, internal = 0, terminated = 0;
  nlohmann::json refusals = nlohmann::json::array();
  for (const GrammarWalk& w : walks) {
    if (!w.error.empty() && w.mask_seconds.empty()) {
      ++refused;
      refusals.push_back({{"name", w.name}, {"error", w.error}});
      continue;
    }
    if (!w.error.empty()) ++internal;
    compile.push_back(w.compile_seconds);
    mask.insert(mask.end(), w.mask_seconds.begin(), w.mask_seconds.end());
    terminated += w.terminated;
  }
  return {{"grammars", walks.size()}, {"compiled", compile.size()}, {"refused", refused},
          {"internal_errors", internal}, {"terminated_walks", terminated},
          {"compile_seconds", stats_of(compile)}, {"mask_seconds", stats_of(mask)}, {"refusals", refusals}};
}

void print_grammar_bench(const nlohmann::json& s) {
  auto us = [](const nlohmann::json& v) { return fmt::format("{:.1f}", v.get<double>() * 1e6); };
  std::printf("grammars %lld: compiled %lld, refused %lld, walks that reached a stop token %lld\n",
              (long long)s["grammars"].get<int64_t>(), (long long)s["compiled"].get<int64_t>(),
              (long long)s["refused"].get<int64_t>(), (long long)s["terminated_walks"].get<int64_t>());
  std::printf("%-10s %10s %10s %10s %10s\n", "", "count", "p50 us", "p99 us", "max us");
  for (const char* key : {"compile_seconds", "mask_seconds"}) {
    const auto& v = s[key];
    std::printf("%-10s %10lld %10s %10s %10s\n", key == std::string("compile_seconds") ? "compile" : "mask",
                (long long)v["count"].get<int64_t>(), us(v["p50"]).c_str(), us(v["p99"]).c_str(), us(v["max"]).c_str());
  }
  for (const auto& r : s["refusals"]) std::printf("refused %s: %s\n", r["name"].get<std::string>().c_str(),
                                                   r["error"].get<std::string>().c_str());
}

nlohmann::json vocab_json(const grammar::TokenVocab& vocab) {
  nlohmann::json tokens = nlohmann::json::array();
  for (int32_t t = 0; t < vocab.n_vocab(); ++t) {
    std::string hex;
    for (unsigned char c : vocab.bytes(t)) hex += fmt::format("{:02x}", c);
    tokens.push_back(hex);
  }
  return {{"tokens", tokens}, {"stop", vocab.stop_tokens()}};
}

}  // namespace ridge::bench
