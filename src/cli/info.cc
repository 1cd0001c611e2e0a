// ridge info MODEL: what a model file holds.
#include <cstdio>

#include "cli/commands.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"

namespace ridge::cli {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print a model file's metadata and tensors");
  auto model = std::make_shared<std::string>("default");
  cmd->add_option("model", *model, "GGUF file, or 'default'");
  cmd->callback([model] {
    const auto file = gguf::GgufFile::open(resolve_model_path(*model));
    std::printf("GGUF v%u, %zu metadata keys, %zu tensors\n", file.version(), file.metadata().size(), file.tensors().size());
    for (const auto& [key, value] : file.metadata()) std::printf("  %-40s %s\n", key.c_str(), value.to_display_string().c_str());
    for (const auto& t : file.tensors()) std::printf("  %-32s %-5s %lld bytes\n", t.name.c_str(), dtype_name(t.type).data(), (long long)t.n_bytes);
  });
}

}  // namespace ridge::cli
