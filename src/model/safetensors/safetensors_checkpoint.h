#pragma once
// A Hugging Face checkpoint directory: one model.safetensors, or shards listed by
// model.safetensors.index.json ({"weight_map": {"tensor name": "shard file name"}}).
// Tensors are found by name across the shards; every shard stays memory-mapped.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/safetensors/safetensors_file.h"

namespace ridge {

class SafetensorsCheckpoint {
 public:
  // Error when the directory holds neither file, the index is malformed or names a shard
  // outside the directory, or a listed tensor is missing from its shard.
  static SafetensorsCheckpoint open(const std::string& dir);

  // Moves keep the tensor pointers valid (they point into the files' own storage); copies would not.
  SafetensorsCheckpoint(SafetensorsCheckpoint&&) = default;
  SafetensorsCheckpoint& operator=(SafetensorsCheckpoint&&) = default;
  SafetensorsCheckpoint(const SafetensorsCheckpoint&) = delete;
  SafetensorsCheckpoint& operator=(const SafetensorsCheckpoint&) = delete;

  const SafetensorsTensor* find(std::string_view name) const;
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  SafetensorsCheckpoint() = default;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> tensors_;
};

// "[2, 3]", for errors.
std::string shape_text(const std::vector<int64_t>& shape);

// The tensor `name` with exactly `shape`, in a type ridge computes with (F32, F16, BF16); Error
// naming it when it is missing, of another shape or another type.
const SafetensorsTensor& checked_tensor(const SafetensorsCheckpoint& c, const std::string& name, const std::vector<int64_t>& shape);
// A [n] vector as an f32 weight view: in place when F32, else converted into a new copy in `copies`.
struct WeightRef;
WeightRef f32_vector(const SafetensorsTensor& t, std::vector<std::vector<float>>& copies);

}  // namespace ridge
