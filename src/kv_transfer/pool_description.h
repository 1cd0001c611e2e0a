#pragma once
// What two instances must agree on before one writes K/V into the other's pool: the model (an
// identity over its shapes and a sample of its weights), the KV layout and element type. The
// pool's block count may differ (it is the destination's layer stride, carried with each request).
#include <string>

#include <nlohmann/json.hpp>

#include "kv/kv_store.h"

namespace ridge {
struct Model;
}

namespace ridge::kvx {

nlohmann::json describe_pool(const Model& model, const KvLayout& layout);
// "" when a sender with pool `mine` may write into a pool described as `theirs`; else why not.
std::string incompatibility(const nlohmann::json& mine, const nlohmann::json& theirs);

}  // namespace ridge::kvx
