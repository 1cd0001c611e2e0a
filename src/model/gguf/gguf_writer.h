#pragma once
// GGUF (v3) writer that streams: metadata and the tensor table are declared first, then tensor data
// is written in order, in chunks of any size, so a many-gigabyte model never sits in memory.
// The file is written beside its final path and renamed into place by finish(), so a reader never
// sees half a file.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace ridge::gguf {

struct Value;

class GgufWriter {
 public:
  explicit GgufWriter(std::string path, uint64_t alignment = 32);
  ~GgufWriter();  // an unfinished file is removed
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Metadata, kept in the order added.
  void add_string(const std::string& key, const std::string& value);
  void add_u32(const std::string& key, uint32_t value);
  void add_i32(const std::string& key, int32_t value);
  void add_f32(const std::string& key, float value);
  void add_bool(const std::string& key, bool value);
  void add_string_array(const std::string& key, const std::vector<std::string>& values);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& values);
  void add_f32_array(const std::string& key, const std::vector<float>& values);
  // Any value a GgufFile read, arrays included, written back with its own types.
  void add_value(const std::string& key, const Value& value);

  // A tensor whose data follows in declaration order. `shape` is in GGUF order: shape[0] is the
  // contiguous row (a multiple of the type's block size).
  void add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape);

  // Writes the header, metadata and tensor table. Only tensor data may follow.
  void write_header();
  // Appends bytes of the current tensor; a chunk may not cross into the next tensor.
  void write_tensor_data(const void* data, size_t bytes);
  // Checks that every tensor got all its bytes, closes and renames the file into place.
  void finish();

  int64_t tensor_data_bytes() const { return data_bytes_; }  // all tensors, with padding

 private:
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> shape;
    uint64_t offset;  // from the start of the data section
    uint64_t bytes;
  };

  void write_bytes(const void* data, size_t bytes);
  void pad_to_alignment();
  void begin_kv(const std::string& key, uint32_t value_type);
  void append_value_body(const Value& value);

  std::string path_, part_path_;
  uint64_t alignment_;
  std::FILE* file_ = nullptr;
  std::vector<uint8_t> kv_;  // encoded metadata pairs
  uint64_t n_kv_ = 0;
  std::vector<Tensor> tensors_;
  int64_t data_bytes_ = 0;
  bool header_written_ = false;
  size_t current_ = 0;            // the tensor receiving data
  uint64_t current_written_ = 0;  // its bytes so far
  uint64_t file_offset_ = 0;
};

}  // namespace ridge::gguf
