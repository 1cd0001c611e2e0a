#pragma once
// `ridge bench grammar`: structured output's own costs on a real vocabulary, over a corpus of
// grammars (JSON schemas, regexes, GBNF files): compile time per grammar, and mask time per token
// along seeded random walks (at each step the mask, then a random allowed token). One thread, as
// the mask worker runs beside the forward pass. Walks can be written out (tokens and a hash of each
// step's mask) for a step-by-step comparison with another engine.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/grammar_spec.h"
#include "grammar/token_vocab.h"

namespace ridge::bench {

struct GrammarCase {
  std::string name;
  grammar::GrammarSpec spec;
  // kJsonSchema: compiled with these (spec.whitespace is copied into them), not through build_grammar's
  // defaults, so that a benchmark can ask for the validation spellings (all_escapes) or formats as
  // annotations (assert_format = false), e.g. to match another engine's policy.
  grammar::JsonSchemaOptions json_options;
};

// Every *.json under `schemas_dir`, every line of `regex_file`, every *.gbnf under `gbnf_dir` (each
// optional). Schemas are compiled with `json_options` (its whitespace is the one given here).
std::vector<GrammarCase> load_grammar_corpus(const std::string& schemas_dir, const std::string& regex_file,
                                             const std::string& gbnf_dir, grammar::Whitespace whitespace,
                                             const grammar::JsonSchemaOptions& json_options = {});

struct GrammarBenchOptions {
  int32_t max_steps = 64;
  uint64_t seed = 1;
  bool cached_compile = false;  // false: every grammar compiled from nothing (no sharing between cases)
  // When set, every step's mask is appended here as ceil(V/8) raw bytes (token t at bit t%8 of byte
  // t/8), walk after walk in corpus order (a refused grammar writes none): the masks behind the
  // hashes, for a bitwise comparison with another engine (bench/grammar_mask_diff.py).
  std::ostream* mask_out = nullptr;
};

struct GrammarWalk {
  std::string name;
  std::string kind;
  std::string error;  // refused: why
  double compile_seconds = 0;
  std::vector<double> mask_seconds;
  std::vector<int32_t> tokens;
  std::vector<uint64_t> mask_hashes;  // FNV-1a 64 of the mask's bytes (bit t in byte t/8, bit t%8)
  std::vector<int32_t> mask_counts;   // allowed tokens at each step
  std::string text;
  bool terminated = false;  // reached a stop token
};

std::vector<GrammarWalk> run_grammar_bench(const std::vector<GrammarCase>& corpus,
                                           std::shared_ptr<const grammar::TokenVocab> vocab,
                                           const GrammarBenchOptions& options, bool progress);

nlohmann::json grammar_bench_summary(const std::vector<GrammarWalk>& walks);
nlohmann::json grammar_walk_json(const GrammarWalk& walk);
void print_grammar_bench(const nlohmann::json& summary);
// {"tokens": [hex of each token's bytes, "" when a grammar never matches it], "stop": [ids]}
nlohmann::json vocab_json(const grammar::TokenVocab& vocab);

}  // namespace ridge::bench
