// ridge imatrix -m MODEL -f TEXT -o FILE: an importance matrix from a calibration text, in
// llama.cpp's imatrix GGUF format (for `ridge quantize --imatrix` or llama-quantize).
#include <cstdio>

#include "cli/commands.h"
#include "quant/imatrix_collector.h"

namespace ridge::cli {
namespace {

struct ImatrixArgs {
  quant::ImatrixOptions options;
  std::string output = "imatrix.gguf";
};

void run_imatrix(const ImatrixArgs& a) {
  quant::ImatrixReport report;
  const quant::ImportanceMatrix m = quant::collect_imatrix(a.options, report);
  m.save(a.output);
  std::printf("%zu tensors over %lld chunks of %lld tokens (perplexity %.4f) in %.1f s -> %s\n", m.size(),
              (long long)report.n_chunks, (long long)a.options.n_ctx, report.perplexity, report.seconds, a.output.c_str());
}

}  // namespace

void add_imatrix_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("imatrix", "Compute an importance matrix from a calibration text (for quantize --imatrix)");
  auto a = std::make_shared<ImatrixArgs>();
  cmd->add_option("-m,--model", a->options.model, "GGUF model: a path or a model name")->required();
  cmd->add_option("-f,--file", a->options.text_file, "calibration text")->required();
  cmd->add_option("-o,--output", a->output, "imatrix GGUF to write")->capture_default_str();
  cmd->add_option("-c,--ctx-size", a->options.n_ctx, "tokens per chunk")->capture_default_str();
  cmd->add_option("--chunks", a->options.max_chunks, "at most this many chunks (0: the whole text)");
  cmd->add_flag("--process-output", a->options.process_output, "collect output.weight too");
  cmd->add_option("-t,--threads", a->options.threads, "threads (default: one per core)");
  cmd->callback([a] { run_imatrix(*a); });
}

}  // namespace ridge::cli
