#pragma once
// Each subcommand lives in its own file and registers itself on the top-level app.
#include <CLI/CLI.hpp>

namespace ridge::cli {

// Thrown by a command that ends with an exit status of its own (a failed quality gate: 3).
struct ExitStatus {
  int code;
};

void add_info_command(CLI::App& app);
void add_dequant_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_chat_template_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_lint_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_batch_command(CLI::App& app);
void add_grammar_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_imatrix_command(CLI::App& app);
void add_embed_command(CLI::App& app);
void add_lora_command(CLI::App& app);  // `ridge lora merge`
void add_pull_command(CLI::App& app);  // `ridge pull ORG/REPO[:QUANT]` from the Hub
void add_bench_serve_command(CLI::App& bench);  // `ridge bench serve`, under `ridge bench`
void add_bench_grammar_command(CLI::App& bench);  // `ridge bench grammar`
void add_bench_kv_transfer_command(CLI::App& bench);  // `ridge bench kv-transfer`

}  // namespace ridge::cli
