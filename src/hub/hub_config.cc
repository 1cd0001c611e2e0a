#include "hub/hub_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ridge::hub {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// huggingface_hub's truth test for flags: 1, ON, YES, TRUE in any case.
bool env_true(const char* name) {
  std::string v = env(name);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

std::string trimmed(std::string s) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  return s;
}

std::string hf_home() {
  if (std::string h = env("HF_HOME"); !h.empty()) return h;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) return x + "/huggingface";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.cache/huggingface";
  return ".cache/huggingface";
}

std::string token_from_file(const std::string& home) {
  std::string path = env("HF_TOKEN_PATH");
  if (path.empty()) path = home + "/token";
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return trimmed(text.str());
}

}  // namespace

HubConfig hub_config_from_env(const std::string& token_override) {
  HubConfig c;
  const std::string home = hf_home();
  if (std::string e = env("HF_ENDPOINT"); !e.empty()) c.endpoint = e;
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  c.token = !token_override.empty() ? token_override : env("HF_TOKEN");
  if (c.token.empty()) c.token = env("HUGGING_FACE_HUB_TOKEN");
  if (c.token.empty()) c.token = token_from_file(home);
  c.token = trimmed(c.token);
  c.offline = env_true("HF_HUB_OFFLINE");
  c.cache_dir = env("HF_HUB_CACHE");
  if (c.cache_dir.empty()) c.cache_dir = env("HUGGINGFACE_HUB_CACHE");
  if (c.cache_dir.empty()) c.cache_dir = home + "/hub";
  return c;
}

}  // namespace ridge::hub
