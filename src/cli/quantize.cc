// ridge quantize IN OUT --type T: a GGUF (any type ridge reads) requantized to a GGUF file type,
// with llama.cpp's per-tensor mix rules, on all threads, with a progress bar and a summary table
// (or --json for machines).
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/quality_gate.h"
#include "core/error.h"
#include "model/model_store.h"
#include "quant/file_type.h"
#include "quant/importance_matrix.h"
#include "quant/quantize_model.h"

namespace ridge::cli {
namespace {

struct QuantizeArgs {
  std::string input, output, type = "Q4_K_M";
  std::string output_tensor_type, token_embedding_type, imatrix;
  std::string gate;  // quality gate spec (cli/quality_gate.h); empty: none
  std::vector<std::string> tensor_types;  // PATTERN=TYPE
  bool pure = false, json = false, dry_run = false, quiet = false, awq = false;
  std::string awq_rounding = "weighted";
  int threads = 0;
};

DType parse_dtype(const std::string& name, const char* flag) {
  const auto t = dtype_from_name(name);
  if (!t) fail("{}: unknown tensor type '{}'", flag, name);
  return *t;
}

std::string type_list() {
  std::string s;
  for (const auto& f : quant::file_types()) s += fmt::format("\n  {:<8} {}", f.name, f.about);
  return s;
}

nlohmann::json report_json(const quant::QuantizeReport& r, const QuantizeArgs& args) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : r.tensors)
    tensors.push_back({{"name", t.name}, {"from", dtype_name(t.from)}, {"to", dtype_name(t.to)}, {"bytes_in", t.bytes_in},
                       {"bytes_out", t.bytes_out}, {"quantized", t.quantized}, {"fell_back", t.fell_back},
                       {"imatrix", t.used_imatrix}});
  nlohmann::json awq = nlohmann::json::array();
  for (const auto& g : r.awq_groups)
    awq.push_back({{"group", g.name}, {"alpha", g.alpha}, {"error_plain", g.error_plain}, {"error_scaled", g.error_scaled}});
  nlohmann::json types = nlohmann::json::object();
  for (const auto& [type, n] : r.type_counts) types[std::string(dtype_name(type))] = n;
  return {{"input", args.input}, {"output", args.dry_run ? "" : args.output}, {"file_type", args.type},
          {"n_params", r.n_params}, {"bytes_in", r.bytes_in}, {"bytes_out", r.bytes_out},
          {"bits_per_weight", r.n_params ? 8.0 * double(r.bytes_out) / double(r.n_params) : 0.0},
          {"seconds", r.seconds}, {"tensor_types", types}, {"tensors", tensors}, {"awq", awq}};
}

void print_summary(const quant::QuantizeReport& r, const QuantizeArgs& args) {
  std::printf("%-8s %8s\n", "type", "tensors");
  for (const auto& [type, n] : r.type_counts) std::printf("%-8s %8d\n", std::string(dtype_name(type)).c_str(), n);
  int fell_back = 0;
  for (const auto& t : r.tensors) fell_back += t.fell_back;
  if (fell_back) std::printf("%d tensors have rows that do not fit 256-element blocks and got a 32-block type\n", fell_back);
  if (!r.awq_groups.empty()) {
    int scaled = 0;
    double plain = 0, awq = 0, alpha = 0;
    for (const auto& g : r.awq_groups) scaled += g.alpha > 0, plain += g.error_plain, awq += g.error_scaled, alpha += g.alpha;
    std::printf("awq: %d of %zu groups scaled (mean alpha %.2f); expected output error %.3g -> %.3g (%.1f%% less)\n", scaled,
                r.awq_groups.size(), alpha / double(r.awq_groups.size()), plain, awq, plain > 0 ? 100 * (1 - awq / plain) : 0.0);
  }
  std::printf("%s: %.1f MiB -> %.1f MiB (%.2f bits per weight)%s\n", args.type.c_str(), double(r.bytes_in) / 1048576,
              double(r.bytes_out) / 1048576, r.n_params ? 8.0 * double(r.bytes_out) / double(r.n_params) : 0.0,
              args.dry_run ? ", dry run: nothing written" : fmt::format(" in {:.1f} s -> {}", r.seconds, args.output).c_str());
}

void run_quantize(const QuantizeArgs& args) {
  const auto file_type = quant::file_type_from_name(args.type);
  if (!file_type) fail("--type: unknown file type '{}'; one of:{}", args.type, type_list());
  quant::QuantizeOptions options;
  options.input = resolve_model_path(args.input);
  options.output = args.output;
  if (options.output.empty() && !args.dry_run) fail("give OUT, the GGUF file to write (or --dry-run)");
  options.rules.file_type = *file_type;
  options.rules.pure = args.pure;
  if (!args.output_tensor_type.empty()) options.rules.output_type = parse_dtype(args.output_tensor_type, "--output-tensor-type");
  for (const std::string& spec : args.tensor_types) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) fail("--tensor-type: '{}' is not PATTERN=TYPE", spec);
    options.rules.tensor_types.emplace_back(spec.substr(0, eq), parse_dtype(spec.substr(eq + 1), "--tensor-type"));
  }
  if (!args.token_embedding_type.empty())
    options.rules.token_embedding_type = parse_dtype(args.token_embedding_type, "--token-embedding-type");
  quant::ImportanceMatrix imatrix;
  if (!args.imatrix.empty()) {
    imatrix = quant::ImportanceMatrix::load(args.imatrix);
    options.imatrix = &imatrix;
    options.imatrix_file = args.imatrix;
    options.rules.has_imatrix = true;
  }
  options.awq = args.awq;
  if (args.awq_rounding != "weighted" && args.awq_rounding != "plain") fail("--awq-rounding: weighted or plain, not '{}'", args.awq_rounding);
  options.awq_weighted_rounding = args.awq_rounding == "weighted";
  options.threads = args.threads;
  options.progress = !args.quiet && !args.json;
  options.dry_run = args.dry_run;
  std::optional<GateSpec> gate;
  if (!args.gate.empty()) {  // parsed first: a typo fails before the work, not after it
    if (args.dry_run) fail("--gate needs a file to judge; drop --dry-run");
    gate = parse_gate(args.gate, options.input);
  }
  const quant::QuantizeReport report = quant::quantize_gguf(options);
  nlohmann::json json = report_json(report, args);
  if (!args.json) print_summary(report, args);
  if (!gate) {
    if (args.json) std::printf("%s\n", json.dump(2).c_str());
    return;
  }
  // The file stays either way; its report beside it says whether it may be used.
  const GateResult verdict = run_gate(*gate, options.output, args.threads);
  json["gate"] = verdict.report;
  const std::string report_path = options.output + ".gate.json";
  std::FILE* f = std::fopen(report_path.c_str(), "w");
  if (!f || std::fprintf(f, "%s\n", verdict.report.dump(2).c_str()) < 0 || std::fclose(f) != 0)
    fail("cannot write the gate report '{}'", report_path);
  if (args.json) std::printf("%s\n", json.dump(2).c_str());
  std::fprintf(stderr, "gate: %s -> %s\n", verdict.passed ? "passed" : "FAILED (the file is kept, marked failed in its report)",
               report_path.c_str());
  if (!verdict.passed) throw ExitStatus{3};
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "Requantize a GGUF model to a file type (Q4_K_M, Q8_0, ...)");
  auto args = std::make_shared<QuantizeArgs>();
  cmd->add_option("input", args->input, "GGUF model: a path or a model name")->required();
  cmd->add_option("output", args->output, "GGUF file to write (written whole or not at all)");
  cmd->add_option("--type", args->type, "file type:" + type_list())->capture_default_str();
  cmd->add_option("--output-tensor-type", args->output_tensor_type, "type of output.weight (overrides the mix)");
  cmd->add_option("--token-embedding-type", args->token_embedding_type, "type of token_embd.weight (overrides the mix)");
  cmd->add_option("--imatrix", args->imatrix, "importance matrix (ridge imatrix or llama-imatrix GGUF)");
  cmd->add_option("--tensor-type", args->tensor_types,
                  "PATTERN=TYPE: tensors whose name matches the regex get TYPE (repeatable; e.g. 'blk\\..*=mxfp4')");
  cmd->add_flag("--awq", args->awq,
                 "activation-aware scaling (AWQ): salient input channels scaled up before rounding, the inputs scaled "
                 "down in the norms / ffn_up rows; needs --imatrix; the file stays a plain GGUF");
  cmd->add_option("--awq-rounding", args->awq_rounding,
                  "with --awq: 'weighted' rounds with the imatrix's column weights too, 'plain' rounds as AWQ does")
      ->capture_default_str();
  cmd->add_flag("--pure", args->pure, "the file type's block type for every tensor, no mix rules");
  cmd->add_option("-t,--threads", args->threads, "threads (default: one per core)");
  cmd->add_flag("--dry-run", args->dry_run, "print the types and sizes, write nothing");
  cmd->add_option("--gate", args->gate,
                  "judge the artifact, exit 3 when it fails: base=FILE (default: IN), max-kl=X (mean next-token KL), "
                  "max-pass-drop=Y (HumanEval pass@1 points), text=FILE, chunks=N, ctx=N, limit=N");
  cmd->add_flag("--json", args->json, "print a JSON report instead of the table");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress bar");
  cmd->callback([args] { run_quantize(*args); });
}

}  // namespace ridge::cli
