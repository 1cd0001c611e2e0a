#include "kv_transfer/pool_description.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "kv/kv_dtype.h"
#include "model/model_identity.h"

namespace ridge::kvx {

nlohmann::json describe_pool(const Model& model, const KvLayout& layout) {
  return {{"model", model_identity_hex(model)},
          {"n_layer", layout.n_layer},
          {"n_kv_heads", layout.n_kv_heads},
          {"head_dim", layout.head_dim},
          {"block_size", layout.block_size},
          {"dtype", std::string(kv_dtype_name(layout.dtype))},
          {"keys_only", layout.keys_only},
          {"n_blocks", layout.n_blocks}};
}

std::string incompatibility(const nlohmann::json& mine, const nlohmann::json& theirs) {
  if (!theirs.is_object()) return "the peer sent no pool description";
  for (const char* key : {"model", "n_layer", "n_kv_heads", "head_dim", "block_size", "dtype", "keys_only"}) {
    if (!theirs.contains(key)) return fmt::format("the peer's pool description lacks '{}'", key);
    if (theirs[key] != mine[key])
      return fmt::format("the peer's {} is {}, this instance's {}{}", key, theirs[key].dump(), mine[key].dump(),
                         std::string(key) == "model" ? " (another model or file)" : "");
  }
  if (!theirs.contains("n_blocks") || !theirs["n_blocks"].is_number_integer() || theirs["n_blocks"].get<int64_t>() <= 0)
    return "the peer's pool description has no block count";
  // Block ids travel as int32 (the prefill route reads the count as one).
  if (theirs["n_blocks"].get<int64_t>() > std::numeric_limits<int32_t>::max())
    return "the peer's pool description has more blocks than a block id can name";
  return "";
}

}  // namespace ridge::kvx
