#include "bench/machine_profile.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "model/model_store.h"

namespace ridge::bench {

std::string machine_profile_path() { return ridge_home() + "/machine.json"; }

std::optional<nlohmann::json> load_machine_profile() {
  std::ifstream in(machine_profile_path());
  if (!in) return std::nullopt;
  nlohmann::json profile = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (profile.is_discarded() || !profile.is_object()) return std::nullopt;
  return profile;
}

void save_machine_profile(const nlohmann::json& profile) {
  const std::filesystem::path path = machine_profile_path();
  std::filesystem::create_directories(path.parent_path());
  // Write beside and rename, so a reader never sees half a file.
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) fail("cannot write {}", tmp.string());
    out << profile.dump(2) << "\n";
  }
  std::filesystem::rename(tmp, path);
}

std::optional<double> profile_value_at_threads(const nlohmann::json& profile, const std::string& key, int threads) {
  const auto it = profile.find(key);
  if (it == profile.end() || !it->is_object()) return std::nullopt;
  std::optional<double> best;
  int best_threads = 0;
  for (const auto& [count_text, value] : it->items()) {
    const int count = std::atoi(count_text.c_str());
    if (!value.is_number() || count <= 0) continue;
    const bool closer = count <= threads ? (best_threads > threads || count > best_threads)
                                         : (!best || (best_threads > threads && count < best_threads));
    if (closer) {
      best = value.get<double>();
      best_threads = count;
    }
  }
  return best;
}

}  // namespace ridge::bench
