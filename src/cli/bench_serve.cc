// ridge bench serve: load generator for OpenAI-compatible servers (being built).
#include "cli/commands.h"
#include "core/error.h"

namespace ridge::cli {
void add_bench_serve_command(CLI::App& bench) {
  bench.add_subcommand("serve", "Load-test an OpenAI-compatible server")->callback([] { fail("ridge bench serve is not built yet"); });
}
}  // namespace ridge::cli
