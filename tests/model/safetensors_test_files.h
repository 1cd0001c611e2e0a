#pragma once
// Small safetensors files and checkpoint directories written by the model tests: tensors of
// given values in F32 / F16 / BF16, raw headers for hostile cases, a temporary directory.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"

namespace ridge::st_test {

namespace fs = std::filesystem;
using nlohmann::json;

struct TestTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16"
  std::vector<int64_t> shape;
  std::vector<float> values;  // encoded in `dtype`
};

inline std::vector<uint8_t> encode(const TestTensor& t) {
  std::vector<uint8_t> bytes;
  for (float v : t.values) {
    if (t.dtype == "F32") {
      const uint32_t bits = f32_to_bits(v);
      for (int i = 0; i < 4; ++i) bytes.push_back(uint8_t(bits >> (8 * i)));
    } else {
      const uint16_t bits = t.dtype == "F16" ? f32_to_f16(v) : f32_to_bf16(v);
      bytes.push_back(uint8_t(bits));
      bytes.push_back(uint8_t(bits >> 8));
    }
  }
  return bytes;
}

// A file from a raw header text and data bytes (hostile cases write their own header).
inline std::vector<uint8_t> raw_file(const std::string& header, const std::vector<uint8_t>& data, uint64_t length_field) {
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(length_field >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
inline std::vector<uint8_t> raw_file(const std::string& header, const std::vector<uint8_t>& data = {}) {
  return raw_file(header, data, header.size());
}

// A well-formed file, header padded with spaces to 8 bytes as the reference writer does.
inline std::vector<uint8_t> safetensors_bytes(const std::vector<TestTensor>& tensors, const json& metadata = nullptr) {
  json header = json::object();
  std::vector<uint8_t> data;
  for (const auto& t : tensors) {
    const auto bytes = encode(t);
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data.insert(data.end(), bytes.begin(), bytes.end());
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return raw_file(text, data);
}

inline std::vector<float> iota(size_t n, float start, float step = 0.25f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("ridge_st_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  void write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream(path_ / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path_ / name) << text; }

 private:
  fs::path path_;
};

inline void expect_error(const std::function<void()>& body, const std::string& needle) {
  try {
    body();
    ADD_FAILURE() << "expected an Error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace ridge::st_test
