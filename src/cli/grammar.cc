// ridge grammar: compile a JSON Schema to a grammar and print it (--print), check texts against it
// (--check: a JSON array of texts on stdin, a JSON array of booleans out), or run many schemas
// through one process (--batch: JSON lines in and out, for the JSON-Schema-Test-Suite harness).
// A refused schema prints {"error": "..."} and exits 2.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "grammar/grammar_spec.h"
#include "grammar/json_schema.h"
#include "grammar/pda.h"

namespace ridge::cli {

namespace {

struct GrammarOptions {
  std::string json_schema;
  std::string whitespace = "compact";
  int max_whitespace = 20;
  bool format_annotation = false;
  bool all_spellings = false;
  bool check = false;
  bool print = false;
  bool batch = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '{}'", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

grammar::JsonSchemaOptions schema_options(const std::string& whitespace, int max_whitespace, bool format_annotation,
                                          bool all_spellings) {
  grammar::JsonSchemaOptions o;
  const auto policy = grammar::whitespace_from_name(whitespace);
  if (!policy) fail("grammar: --whitespace is 'compact', 'flexible' or 'spaced', not '{}'", whitespace);
  o.whitespace = *policy;
  o.max_whitespace = max_whitespace;
  o.assert_format = !format_annotation;
  o.all_escapes = all_spellings;
  return o;
}

// One matcher for all the texts: its states and transitions are memoised, so texts sharing prefixes
// (the harness's compact and flexible spellings, a corpus of instances) cost less each.
nlohmann::ordered_json check_texts(const grammar::Grammar& g, const nlohmann::ordered_json& texts) {
  if (!texts.is_array()) fail("grammar: the texts to check must be a JSON array of strings");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (texts.empty()) return out;
  grammar::Pda pda(std::make_shared<const grammar::FlatGrammar>(grammar::FlatGrammar::from(g)));
  for (const auto& t : texts) {
    if (!t.is_string()) fail("grammar: the texts to check must be a JSON array of strings");
    const std::string& text = t.get_ref<const std::string&>();
    const auto s = pda.step(pda.initial(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
    out.push_back(s >= 0 && pda.accepting(s));
  }
  return out;
}

// One JSON line per schema: {"schema": ..., "texts": [...], "whitespace": "compact"|"flexible",
// "format_annotation": bool, "all_spellings": bool} -> {"accepted": [...]} or {"error": "..."}.
void run_batch(const GrammarOptions& opt) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    nlohmann::ordered_json out;
    try {
      const auto in = nlohmann::ordered_json::parse(line);
      const auto options =
          schema_options(in.value("whitespace", opt.whitespace), in.value("max_whitespace", opt.max_whitespace),
                         in.value("format_annotation", opt.format_annotation),
                         in.value("all_spellings", opt.all_spellings));
      const grammar::Grammar g = grammar::json_schema_grammar(in.at("schema"), options);
      out["accepted"] = check_texts(g, in.value("texts", nlohmann::ordered_json::array()));
    } catch (const grammar::GrammarError& e) {
      out["error"] = e.what();
    } catch (const nlohmann::json::exception& e) {
      out["error"] = std::string("bad input line: ") + e.what();
    }
    std::printf("%s\n", dump(out).c_str());
    std::fflush(stdout);
  }
}

int run_one(const GrammarOptions& opt) {
  if (opt.json_schema.empty()) fail("grammar: give --json-schema FILE (or --batch)");
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(read_text(opt.json_schema));
  } catch (const nlohmann::json::exception& e) {
    fail("grammar: '{}' is not valid JSON: {}", opt.json_schema, e.what());
  }
  grammar::Grammar g;
  try {
    g = grammar::json_schema_grammar(schema, schema_options(opt.whitespace, opt.max_whitespace, opt.format_annotation,
                                                                  opt.all_spellings));
  } catch (const grammar::GrammarError& e) {
    std::printf("%s\n", dump({{"error", e.what()}}).c_str());
    return 2;
  }
  if (opt.print) std::printf("%s", g.to_string().c_str());
  if (opt.check) {
    nlohmann::ordered_json texts;
    try {
      texts = nlohmann::ordered_json::parse(std::string(std::istreambuf_iterator<char>(std::cin), {}));
    } catch (const nlohmann::json::exception& e) {
      fail("grammar: stdin is not a JSON array of texts: {}", e.what());
    }
    std::printf("%s\n", dump(check_texts(g, texts)).c_str());
  }
  return 0;
}

}  // namespace

void add_grammar_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("grammar", "Compile a JSON Schema to a grammar: print it, or check texts against it");
  auto opt = std::make_shared<GrammarOptions>();
  cmd->add_option("--json-schema", opt->json_schema, "JSON Schema file (draft 2020-12)");
  cmd->add_option("--whitespace", opt->whitespace, "Whitespace outside strings: compact (none) or flexible");
  cmd->add_option("--max-whitespace", opt->max_whitespace, "flexible: at most this many whitespace bytes in a row");
  cmd->add_flag("--format-annotation", opt->format_annotation,
                "Treat 'format' as an annotation (JSON Schema's default) instead of constraining strings");
  cmd->add_flag("--all-spellings", opt->all_spellings,
                "Accept every JSON spelling of a value (\\u0061, 5.0), as a validator does; default: the one spelling generation uses");
  cmd->add_flag("--print", opt->print, "Print the grammar");
  cmd->add_flag("--check", opt->check, "Read a JSON array of texts on stdin, print a JSON array of booleans");
  cmd->add_flag(
      "--batch", opt->batch,
      "JSON lines on stdin {\"schema\", \"texts\", \"whitespace\"}, one {\"accepted\"|\"error\"} line out each");
  cmd->callback([opt] {
    if (opt->batch) {
      run_batch(*opt);
      return;
    }
    if (!opt->print && !opt->check) fail("grammar: give --print and/or --check");
    const int rc = run_one(*opt);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace ridge::cli
