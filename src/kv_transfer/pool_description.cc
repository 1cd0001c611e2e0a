#include "kv_transfer/pool_description.h"

#include <algorithm>

#include <fmt/format.h>

#include "kv/kv_dtype.h"
#include "model/weights.h"

namespace ridge::kvx {
namespace {

// FNV-1a over the model's shapes and the first and last bytes of its embedding and output matrices.
uint64_t model_identity(const Model& model) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= static_cast<const uint8_t*>(p)[i];
      h *= 1099511628211ULL;
    }
  };
  const ModelSpec& s = model.spec;
  for (int64_t v : {s.n_layer, s.n_embd, s.n_head, s.n_head_kv, s.head_dim, s.n_vocab, s.n_ff}) mix(&v, sizeof v);
  for (const WeightRef* w : {&model.weights.token_embd, &model.weights.output}) {
    if (!w->present()) continue;
    const auto bytes = size_t(w->rows * w->row_bytes());
    const size_t n = std::min<size_t>(bytes, 4096);
    mix(w->data, n);
    mix(static_cast<const uint8_t*>(w->data) + bytes - n, n);
  }
  return h;
}

}  // namespace

nlohmann::json describe_pool(const Model& model, const KvLayout& layout) {
  return {{"model", fmt::format("{:016x}", model_identity(model))},
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
  return "";
}

}  // namespace ridge::kvx
