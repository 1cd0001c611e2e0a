#include "model/model_loader.h"

#include <filesystem>

#include "model/load_gguf.h"
#include "model/safetensors/load_safetensors.h"

namespace ridge {

namespace {

struct ShardedStorage {
  std::unique_ptr<HugePageBuffer> weights;
};

}  // namespace

Model load_model(const std::string& path, const ShardRequest* shard) {
  if (!std::filesystem::is_directory(path)) return load_gguf_model(path, shard);
  Model model = load_safetensors_model(path);
  if (!shard) return model;
  auto plan = std::make_shared<const ModelShard>(plan_shard(model.spec, model.weights, *shard));
  auto storage = std::make_shared<ShardedStorage>();
  storage->weights = shard_weights(model.weights, model.spec, *plan);
  model.storage = storage;  // the slices are copies: the maps can go
  model.shard = plan;
  return model;
}

}  // namespace ridge
