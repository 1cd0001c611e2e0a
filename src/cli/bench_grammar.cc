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
  std::string json_out, walks_out, vocab_out;
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
  if (a.whitespace != "compact" && a.whitespace != "flexible") fail("--whitespace must be compact or flexible");
  const auto ws = a.whitespace == "flexible" ? grammar::Whitespace::kFlexible : grammar::Whitespace::kCompact;
  const auto corpus = bench::load_grammar_corpus(a.schemas, a.regex, a.gbnf, ws);
  if (corpus.empty()) fail("no grammars: give --schemas DIR, --regex FILE or --gbnf DIR");
  const auto walks = bench::run_grammar_bench(corpus, vocab, a.options, /*progress=*/true);
  nlohmann::json summary = bench::grammar_bench_summary(walks);
  summary["n_vocab"] = vocab->n_vocab();
  summary["model"] = a.model;
  bench::print_grammar_bench(summary);
  if (!a.json_out.empty()) std::ofstream(a.json_out) << summary.dump(2) << "\n";
  if (!a.walks_out.empty()) {
    std::ofstream out(a.walks_out);
    for (const auto& w : walks) out << bench::grammar_walk_json(w).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
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
  cmd->add_option("--whitespace", a->whitespace, "JSON whitespace: compact or flexible")->capture_default_str();
  cmd->add_option("--steps", a->options.max_steps, "tokens per random walk at most")->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "seed of the walks")->capture_default_str();
  cmd->add_option("--json", a->json_out, "write the summary as JSON to this file");
  cmd->add_option("--dump-walks", a->walks_out, "write each walk (tokens, mask hashes, times) as JSON lines");
  cmd->add_option("--dump-vocab", a->vocab_out, "write the vocabulary's token bytes (hex) as JSON");
  cmd->callback([a] { run_grammar_bench(*a); });
}

}  // namespace ridge::cli
