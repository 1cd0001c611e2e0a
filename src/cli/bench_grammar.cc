// ridge bench grammar: compile and mask times of structured output over a grammar corpus, on a
// model's vocabulary (see bench/grammar_bench.h).
#include <cstdio>
#include <fstream>

#include "bench/grammar_bench.h"
#include "cli/commands.h"
#include "core/error.h"
#include "engine/grammar_vocab.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"
#include "tokenizer/tokenizer.h"

namespace ridge::cli {

namespace {

struct GrammarBenchArgs {
  std::string model = "default";
  std::string schemas, regex, gbnf;
  std::string whitespace = "compact";
  bool all_spellings = false;       // JsonSchemaOptions::all_escapes: every JSON spelling (validation)
  bool format_annotation = false;   // JsonSchemaOptions::assert_format = false
  std::string json_out, walks_out, vocab_out, masks_out;
  bench::GrammarBenchOptions options;
};

void run_grammar_bench(const GrammarBenchArgs& a) {
  const auto file = gguf::GgufFile::open(resolve_model_path(a.model));
  const Tokenizer tokenizer = Tokenizer::from_gguf(file);
  const auto vocab = grammar_vocab(tokenizer);
  if (!a.vocab_out.empty()) {
    std::ofstream(a.vocab_out) << bench::vocab_json(*vocab).dump();
    if (a.schemas.empty() && a.regex.empty() && a.gbnf.empty()) return;
  }
  const auto ws = grammar::whitespace_from_name(a.whitespace);
  if (!ws) fail("--whitespace must be compact, flexible or spaced");
  grammar::JsonSchemaOptions json_options;
  json_options.all_escapes = a.all_spellings;
  json_options.assert_format = !a.format_annotation;
  const auto corpus = bench::load_grammar_corpus(a.schemas, a.regex, a.gbnf, *ws, json_options);
  if (corpus.empty()) fail("no grammars: give --schemas DIR, --regex FILE or --gbnf DIR");
  bench::GrammarBenchOptions options = a.options;
  std::ofstream masks;
  if (!a.masks_out.empty()) {
    masks.open(a.masks_out, std::ios::binary);
    if (!masks) fail("cannot write {}", a.masks_out);
    options.mask_out = &masks;
  }
  const auto walks = bench::run_grammar_bench(corpus, vocab, options, /*progress=*/true);
  nlohmann::json summary = bench::grammar_bench_summary(walks);
  summary["n_vocab"] = vocab->n_vocab();
  summary["model"] = a.model;
  summary["whitespace"] = a.whitespace;
  summary["all_spellings"] = a.all_spellings;
  summary["format_annotation"] = a.format_annotation;
  bench::print_grammar_bench(summary);
  if (!a.json_out.empty()) std::ofstream(a.json_out) << summary.dump(2) << "\n";
  if (!a.walks_out.empty()) {
    std::ofstream out(a.walks_out);
    for (const auto& w : walks) {
      nlohmann::json j = bench::grammar_walk_json(w);
      // The JSON policy the walk was made in, so that a comparison can set another engine to match.
      j["whitespace"] = a.whitespace;
      j["all_spellings"] = a.all_spellings;
      j["format_annotation"] = a.format_annotation;
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  }
}

}  // namespace

void add_bench_grammar_command(CLI::App& bench) {
  auto a = std::make_shared<GrammarBenchArgs>();
  CLI::App* cmd = bench.add_subcommand("grammar", "Structured output: grammar compile and token-mask times over a corpus");
  cmd->add_option("-m,--model", a->model, "GGUF file or a model name (its vocabulary is used)")->capture_default_str();
  cmd->add_option("--schemas", a->schemas, "a folder of JSON schemas (*.json)");
  cmd->add_option("--regex", a->regex, "a file of regular expressions, one per line");
  cmd->add_option("--gbnf", a->gbnf, "a folder of GBNF grammars (*.gbnf)");
  cmd->add_option("--whitespace", a->whitespace, "JSON whitespace: compact, flexible or spaced")->capture_default_str();
  cmd->add_flag("--all-spellings", a->all_spellings,
                "JSON schemas take every JSON spelling of each value (\\u escapes, 5.0 for 5: validation), "
                "not one per value (generation)");
  cmd->add_flag("--format-annotation", a->format_annotation,
                "JSON schemas: 'format' is an annotation (asserts nothing), as JSON Schema 2020-12 says by default");
  cmd->add_option("--steps", a->options.max_steps, "tokens per random walk at most")->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "seed of the walks")->capture_default_str();
  cmd->add_option("--json", a->json_out, "write the summary as JSON to this file");
  cmd->add_option("--dump-walks", a->walks_out, "write each walk (tokens, mask hashes, times) as JSON lines");
  cmd->add_option("--dump-masks", a->masks_out,
                  "write every step's mask as raw bytes (ceil(V/8) a step, bit t%8 of byte t/8), walks in order");
  cmd->add_option("--dump-vocab", a->vocab_out, "write the vocabulary's token bytes (hex) as JSON");
  cmd->callback([a] { run_grammar_bench(*a); });
}

}  // namespace ridge::cli
