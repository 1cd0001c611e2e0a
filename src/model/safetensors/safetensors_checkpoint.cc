#include "model/safetensors/safetensors_checkpoint.h"

#include "model/weights.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read '{}'", path.string());
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) fail("'{}' is not valid JSON", path.string());
  return json;
}

// A shard must be a plain file name: an index naming "../x" or "/etc/x" is refused.
void check_shard_name(const std::string& shard) {
  const fs::path p(shard);
  if (shard.empty() || p.has_parent_path() || p.is_absolute() || shard == "." || shard == "..")
    fail("index names shard '{}', which is not a file name inside the checkpoint directory", shard);
}

}  // namespace

SafetensorsCheckpoint SafetensorsCheckpoint::open(const std::string& dir) {
  SafetensorsCheckpoint checkpoint;
  const fs::path root(dir);
  const fs::path index_path = root / "model.safetensors.index.json";
  const fs::path single_path = root / "model.safetensors";

  if (fs::exists(index_path)) {
    const auto index = read_json(index_path);
    const auto weight_map = index.is_object() ? index.find("weight_map") : index.end();
    if (weight_map == index.end() || !weight_map->is_object() || weight_map->empty())
      fail("'{}' has no 'weight_map' object", index_path.string());
    std::map<std::string, size_t> shard_files;  // shard name -> files_ index
    for (const auto& [name, shard] : weight_map->items()) {
      if (!shard.is_string()) fail("'{}': shard of '{}' is not a string", index_path.string(), name);
      const std::string& shard_name = shard.get_ref<const std::string&>();
      check_shard_name(shard_name);
      if (!shard_files.count(shard_name)) {
        shard_files[shard_name] = checkpoint.files_.size();
        checkpoint.files_.push_back(SafetensorsFile::open((root / shard_name).string()));
      }
    }
    // Pointers into files_ are taken only now that it no longer grows.
    for (const auto& [name, shard] : weight_map->items()) {
      const SafetensorsFile& file = checkpoint.files_[shard_files.at(shard.get<std::string>())];
      const SafetensorsTensor* t = file.find(name);
      if (!t) fail("'{}' lists tensor '{}' in '{}', which does not hold it", index_path.string(), name, file.origin());
      checkpoint.tensors_[name] = t;
    }
  } else if (fs::exists(single_path)) {
    checkpoint.files_.push_back(SafetensorsFile::open(single_path.string()));
    for (const auto& t : checkpoint.files_.front().tensors()) checkpoint.tensors_[t.name] = &t;
  } else {
    fail("'{}' holds neither model.safetensors nor model.safetensors.index.json", dir);
  }
  return checkpoint;
}

const SafetensorsTensor* SafetensorsCheckpoint::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

const SafetensorsTensor& checked_tensor(const SafetensorsCheckpoint& c, const std::string& name, const std::vector<int64_t>& shape) {
  const SafetensorsTensor* t = c.find(name);
  if (!t) fail("missing tensor '{}'", name);
  if (t->shape != shape) fail("tensor '{}' has shape {}, expected {}", name, shape_text(t->shape), shape_text(shape));
  if (t->type != DType::F32 && t->type != DType::F16 && t->type != DType::BF16)
    fail("tensor '{}' has dtype {}; ridge computes with F32, F16 and BF16", name, t->dtype);
  return *t;
}

WeightRef f32_vector(const SafetensorsTensor& t, std::vector<std::vector<float>>& copies) {
  if (t.type == DType::F32) return WeightRef{DType::F32, t.data, 1, t.n_elements};
  const auto& copy = copies.emplace_back(tensor_floats(t));
  return WeightRef{DType::F32, copy.data(), 1, t.n_elements};
}

}  // namespace ridge
