#pragma once
// Writes GGUF bytes field by field, so tests can build valid files and every kind of broken one.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ridge::gguf::testing {

class GgufBuilder {
 public:
  std::vector<uint8_t> bytes;

  template <typename T>
  GgufBuilder& put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  GgufBuilder& str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  GgufBuilder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
  }
  GgufBuilder& kv_u32(const std::string& key, uint32_t v) { return str(key).put<uint32_t>(4).put<uint32_t>(v); }
  GgufBuilder& kv_str(const std::string& key, const std::string& v) { return str(key).put<uint32_t>(8).str(v); }
  GgufBuilder& tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).put<uint32_t>(uint32_t(dims.size()));
    for (uint64_t d : dims) put<uint64_t>(d);
    return put<uint32_t>(type).put<uint64_t>(offset);
  }
  GgufBuilder& pad(size_t alignment = 32) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  GgufBuilder& fill(size_t n, uint8_t value = 0) {
    bytes.insert(bytes.end(), n, value);
    return *this;
  }
};

// A small valid v3 file: two metadata keys, an F32 [4, 2] tensor and a Q8_0 [32] tensor
// whose data ends exactly at the end of the file (so every shorter prefix is truncated).
inline std::vector<uint8_t> small_valid_file() {
  GgufBuilder b;
  b.header(2, 2).kv_str("general.architecture", "llama").kv_u32("llama.block_count", 1);
  b.tensor("a", {4, 2}, 0, 0).tensor("b", {32}, 8, 32);
  b.pad();
  for (int i = 0; i < 8; ++i) b.put<float>(float(i) * 0.5f);
  b.fill(0);  // tensor "a" is 32 bytes: "b" starts right after at offset 32
  b.put<uint16_t>(0x3c00);  // Q8_0 scale 1.0
  for (int i = 0; i < 32; ++i) b.put<int8_t>(int8_t(i - 16));
  return b.bytes;
}

}  // namespace ridge::gguf::testing
