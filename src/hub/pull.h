#pragma once
// A model from the Hub by reference: the files it needs fetched into the Hugging Face cache (or,
// offline, found there) and the local path to load. GGUF repositories give the chosen file (a split
// model's first shard); safetensors repositories give the snapshot folder.
#include <string>
#include <vector>

#include "hub/hub_config.h"
#include "hub/repo_ref.h"

namespace ridge::hub {

struct PulledModel {
  std::string path;                // what a loader opens
  std::string commit;              // the snapshot it lies in
  std::vector<std::string> files;  // repository paths of every file fetched or found
};

PulledModel pull_model(const RepoRef& ref, const HubConfig& config);

}  // namespace ridge::hub
