// ridge batch: offline requests through the continuous-batching engine (being built).
#include "cli/commands.h"
#include "core/error.h"

namespace ridge::cli {
void add_batch_command(CLI::App& app) {
  app.add_subcommand("batch", "Run a JSONL file of requests through the engine")->callback([] { fail("ridge batch is not built yet"); });
}
}  // namespace ridge::cli
