#pragma once
// Where the Hub is and where its files go, read from the environment as huggingface_hub reads it:
// HF_ENDPOINT, HF_TOKEN (or the token file), HF_HUB_OFFLINE, HF_HOME and HF_HUB_CACHE.
#include <string>

namespace ridge::hub {

struct HubConfig {
  std::string endpoint = "https://huggingface.co";  // no trailing '/'
  std::string token;                                // "" = anonymous
  bool offline = false;                             // resolve from the cache only
  std::string cache_dir;                            // the "hub" folder holding models--ORG--REPO
  bool progress = true;                             // a progress bar on stderr per download
};

// From the environment; `token_override` (a --hf-token flag) wins over HF_TOKEN and the token file.
HubConfig hub_config_from_env(const std::string& token_override = "");

}  // namespace ridge::hub
