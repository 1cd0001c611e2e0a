// ridge: an LLM inference engine. One executable, one subcommand per job.
#include <cstdio>

#include "cli/commands.h"
#include "core/error.h"
#include "dist/world.h"

int main(int argc, char** argv) {
  // Under mpirun, MPI starts before any thread does.
  try {
    ridge::dist::init_world(&argc, &argv);
  } catch (const ridge::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  CLI::App app{"ridge: LLM inference engine (GGUF/safetensors models, llama.cpp-exact tokenizer, SIMD CPU kernels, roofline planner)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ridge 0.1.0");
  ridge::cli::add_run_command(app);
  ridge::cli::add_info_command(app);
  ridge::cli::add_dequant_command(app);
  ridge::cli::add_chat_template_command(app);
  ridge::cli::add_logits_command(app);
  ridge::cli::add_tokenize_command(app);
  ridge::cli::add_probe_command(app);
  ridge::cli::add_synth_command(app);
  ridge::cli::add_bench_command(app);
  ridge::cli::add_plan_command(app);
  ridge::cli::add_lint_command(app);
  ridge::cli::add_serve_command(app);
  ridge::cli::add_batch_command(app);
  ridge::cli::add_grammar_command(app);
  ridge::cli::add_quantize_command(app);
  ridge::cli::add_lora_command(app);
  ridge::cli::add_eval_command(app);
  ridge::cli::add_imatrix_command(app);
  ridge::cli::add_embed_command(app);
  ridge::cli::add_pull_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ridge::cli::ExitStatus& e) {
    ridge::dist::finalize_world();
    return e.code;
  } catch (const ridge::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 2;
  }
  ridge::dist::finalize_world();
  return 0;
}
