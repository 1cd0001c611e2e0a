// ridge pull ORG/REPO[:QUANT|:FILE]: fetch a model from the Hub into the Hugging Face cache (shared
// with huggingface_hub) and print the local path to load: the GGUF file (a split model's first
// shard) or a safetensors repository's snapshot folder.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "hub/pull.h"

namespace ridge::cli {
namespace {

struct PullArgs {
  std::string model;
  std::string revision;
  std::string token;
  bool quiet = false;
};

}  // namespace

void add_pull_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("pull", "Fetch a model from the Hugging Face Hub into its cache and print its local path");
  auto args = std::make_shared<PullArgs>();
  cmd->add_option("model", args->model, "ORG/REPO[:QUANT|:FILE] or hf://ORG/REPO[@REVISION][:QUANT]")->required();
  cmd->add_option("--revision", args->revision, "branch, tag or commit (default main)");
  cmd->add_option("--hf-token", args->token, "access token for gated or private repositories (default $HF_TOKEN)");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->callback([args] {
    hub::RepoRef ref = hub::parse_repo_ref(args->model);
    if (!args->revision.empty()) {
      if (!hub::is_valid_revision(args->revision)) fail("--revision '{}' is not a valid revision", args->revision);
      ref.revision = args->revision;
    }
    hub::HubConfig config = hub::hub_config_from_env(args->token);
    config.progress = !args->quiet;
    const hub::PulledModel pulled = hub::pull_model(ref, config);
    std::printf("%s\n", pulled.path.c_str());
  });
}

}  // namespace ridge::cli
