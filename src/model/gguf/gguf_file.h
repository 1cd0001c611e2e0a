#pragma once
// GGUF (v2, v3) reader. The header, metadata and tensor table are parsed from a byte span
// with every length, count and offset checked against the bytes that are really there:
// a truncated or hostile file is rejected with an Error naming the problem, never read out of bounds.
// Tensor data is not copied: TensorInfo::data points into the memory map.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"

namespace ridge::gguf {

enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view value_type_name(ValueType type);

struct Value {
  ValueType type = ValueType::U8;
  ValueType array_type = ValueType::U8;  // element type when type == ARRAY
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<Value>> data;

  bool is_integer() const;
  bool is_number() const;
  // Typed accessors throw Error (naming `key`) on a type mismatch or out-of-range value.
  int64_t as_int(std::string_view key = "") const;
  double as_double(std::string_view key = "") const;
  bool as_bool(std::string_view key = "") const;
  const std::string& as_string(std::string_view key = "") const;
  const std::vector<Value>& as_array(std::string_view key = "") const;
  std::string to_display_string(size_t max_items = 8) const;
};

// One file of the tensor data: a plain GGUF has one, a split GGUF one per shard.
struct GgufShard {
  std::string path;                // empty for bytes given to parse()
  uint64_t file_size = 0;
  std::span<const uint8_t> data;   // the shard's tensor data section
};

struct TensorInfo {
  std::string name;
  DType type = DType::F32;
  std::vector<int64_t> shape;  // GGUF order: shape[0] is the contiguous (row) dimension
  uint64_t offset = 0;         // from the start of its shard's data section
  int64_t n_elements = 0;
  int64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the bytes of the file (shard) that holds it
};

class GgufFile {
 public:
  // Parse from bytes the caller keeps alive (tests, the fuzzer).
  static GgufFile parse(std::span<const uint8_t> bytes);
  // Memory-map and parse a file; the map lives as long as the GgufFile. A split file
  // (NAME-00001-of-00003.gguf ..., llama.cpp's gguf-split) opens as one: the first shard's
  // metadata and every shard's tensors, whichever shard `path` names (gguf_split.cc).
  static GgufFile open(const std::string& path);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // in the first shard
  uint64_t file_size() const;                             // all shards together
  const std::vector<GgufShard>& shards() const { return shards_; }

  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  const Value& get(std::string_view key) const;  // Error if missing
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_double(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

 private:
  static GgufFile open_one(const std::string& path);
  void add_split_shards(const std::string& first_path);  // gguf_split.cc

  std::vector<std::shared_ptr<MappedFile>> maps_;  // one per shard, alive as long as the tensors point into them
  std::vector<GgufShard> shards_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

// "blk.0.attn_q.weight" -> "blk.0.attn_q.scale": where a weight's per-matrix output factors live
// (NVFP4's global scale, as llama.cpp's converter writes it); empty for a name without ".weight".
inline std::string factor_name(const std::string& weight) {
  constexpr std::string_view kSuffix = ".weight";
  if (weight.size() <= kSuffix.size() || weight.compare(weight.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return {};
  return weight.substr(0, weight.size() - kSuffix.size()) + ".scale";
}

}  // namespace ridge::gguf
