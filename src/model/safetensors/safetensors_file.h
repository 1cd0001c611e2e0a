#pragma once
// safetensors reader: an 8-byte little-endian header length, a JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
// Everything is checked against the bytes really there: a header length past the file or over a
// sane limit, an unknown dtype, a shape that does not match its byte range, and byte ranges that
// overlap, leave holes or run past the data are all rejected with an Error naming the tensor.
// Tensor data is not copied: SafetensorsTensor::data points into the memory map.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/mapped_file.h"

namespace ridge {

struct SafetensorsTensor {
  std::string name;
  DType type = DType::F32;
  std::string dtype;           // as the header names it ("BF16", "U8", "F8_E4M3")
  std::vector<int64_t> shape;  // PyTorch order: shape.back() is the contiguous dimension
  int64_t n_elements = 0;
  uint64_t begin = 0, end = 0;  // byte range within the data section
  const uint8_t* data = nullptr;
};

class SafetensorsFile {
 public:
  // Headers larger than this are refused before any allocation (the format's own limit is 100 MB).
  static constexpr uint64_t kMaxHeaderBytes = 100u << 20;

  // Parse from bytes the caller keeps alive (tests, a fuzzer); `origin` names them in errors.
  static SafetensorsFile parse(std::span<const uint8_t> bytes, const std::string& origin = "safetensors");
  // Memory-map and parse a file; the map lives as long as the SafetensorsFile.
  static SafetensorsFile open(const std::string& path);

  const std::string& origin() const { return origin_; }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }  // in file order
  const SafetensorsTensor* find(std::string_view name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }  // "__metadata__"

 private:
  std::shared_ptr<MappedFile> map_;
  std::string origin_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// A small F32 / F16 / BF16 tensor's values as f32 (norms, biases, scales); Error naming it otherwise.
std::vector<float> tensor_floats(const SafetensorsTensor& t);

// "F32" -> DType::F32, ...; nullopt for a dtype ridge does not read (U8, BOOL, F8_*, ...).
std::optional<DType> safetensors_dtype(std::string_view name);

}  // namespace ridge
