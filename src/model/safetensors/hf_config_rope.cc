// rope_scaling as config.json writes it: null, {"rope_type"|"type": "linear", "factor"}, Llama 3's
// frequency bands, or DeepSeek's YaRN (beta_fast, beta_slow, mscale_all_dim).
#include "core/error.h"
#include "model/safetensors/hf_config_families.h"
#include "model/safetensors/hf_json.h"

namespace ridge::hf {

RopeScaling rope_scaling(const nlohmann::json& config, const std::string& arch, bool yarn_allowed) {
  RopeScaling scaling;
  const nlohmann::json* rs = field(config, "rope_scaling");
  if (!rs) return scaling;
  if (!rs->is_object()) fail("config.json: 'rope_scaling' must be an object");
  const std::string type = string_field(*rs, "rope_type", string_field(*rs, "type", "default"));
  if (type == "default") return scaling;
  scaling.factor = float(number_field(*rs, "factor", 1.0));
  if (type == "linear") {
    scaling.type = RopeScaling::Type::Linear;
  } else if (type == "llama3") {
    scaling.type = RopeScaling::Type::Llama3;
    scaling.low_freq_factor = float(number_field(*rs, "low_freq_factor", 1.0));
    scaling.high_freq_factor = float(number_field(*rs, "high_freq_factor", 4.0));
    scaling.original_context = int_field(*rs, "original_max_position_embeddings", 8192);
  } else if (type == "yarn" && yarn_allowed) {
    scaling.type = RopeScaling::Type::Yarn;
    scaling.original_context = int_field(*rs, "original_max_position_embeddings", 4096);
    scaling.yarn_beta_fast = float(number_field(*rs, "beta_fast", 32.0));
    scaling.yarn_beta_slow = float(number_field(*rs, "beta_slow", 1.0));
    // DeepSeek's cos/sin factor is mscale(factor, mscale) / mscale(factor, mscale_all_dim), 1 when
    // the two agree (every released checkpoint); ridge's YaRN runs that case.
    const double all_dim = number_field(*rs, "mscale_all_dim", 0.0);
    if (number_field(*rs, "mscale", all_dim) != all_dim)
      fail("config.json: rope_scaling 'mscale' differs from 'mscale_all_dim', which ridge does not run");
    scaling.yarn_log_multiplier = float(all_dim);
  } else {
    fail("config.json: rope_scaling type '{}' is not supported for {} (ridge runs linear and llama3{})", type, arch,
         yarn_allowed ? ", yarn" : "");
  }
  if (!(scaling.factor > 0.0f)) fail("config.json: rope_scaling factor must be positive");
  return scaling;
}

}  // namespace ridge::hf
