// ridge serve: the OpenAI-compatible server (being built).
#include "cli/commands.h"
#include "core/error.h"

namespace ridge::cli {
void add_serve_command(CLI::App& app) {
  app.add_subcommand("serve", "OpenAI-compatible HTTP server")->callback([] { fail("ridge serve is not built yet"); });
}
}  // namespace ridge::cli
