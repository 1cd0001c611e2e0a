#include "model/safetensors/safetensors_file.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fp16.h"

namespace ridge {
namespace {

struct DtypeName {
  std::string_view name;
  DType type;
};

constexpr std::array kDtypes = {
    DtypeName{"F32", DType::F32}, DtypeName{"F16", DType::F16}, DtypeName{"BF16", DType::BF16},
    DtypeName{"F64", DType::F64}, DtypeName{"I8", DType::I8},   DtypeName{"I16", DType::I16},
    DtypeName{"I32", DType::I32}, DtypeName{"I64", DType::I64},
    // Bytes whose meaning depends on the tensor (SafetensorsTensor::dtype keeps the name): NVFP4's
    // packed codes (U8) and group scales (F8_E4M3).
    DtypeName{"U8", DType::I8},   DtypeName{"F8_E4M3", DType::I8},
};

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// One header entry -> a tensor, with its shape, dtype and byte range checked against each other.
SafetensorsTensor parse_tensor(const std::string& name, const nlohmann::json& entry, uint64_t data_size) {
  SafetensorsTensor t;
  t.name = name;
  if (!entry.is_object()) fail("tensor '{}': header entry is not an object", name);
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) fail("tensor '{}': missing string 'dtype'", name);
  const auto type = safetensors_dtype(dtype->get_ref<const std::string&>());
  if (!type) fail("tensor '{}': dtype '{}' is not supported", name, dtype->get_ref<const std::string&>());
  t.type = *type;
  t.dtype = dtype->get_ref<const std::string&>();

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) fail("tensor '{}': missing array 'shape'", name);
  if (shape->size() > 8) fail("tensor '{}': {} dimensions is too many", name, shape->size());
  uint64_t n = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned()) fail("tensor '{}': shape entries must be non-negative integers", name);
    const uint64_t d = dim.get<uint64_t>();
    if (d > (uint64_t(1) << 40) || (d != 0 && n > (uint64_t(1) << 40) / d))
      fail("tensor '{}': shape is absurdly large", name);
    n *= d;
    t.shape.push_back(int64_t(d));
  }
  t.n_elements = int64_t(n);

  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    fail("tensor '{}': 'data_offsets' must be two non-negative integers", name);
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  if (t.begin > t.end || t.end > data_size)
    fail("tensor '{}': data_offsets [{}, {}] outside the {} data bytes", name, t.begin, t.end, data_size);
  const uint64_t expected = n * uint64_t(dtype_info(t.type).block_bytes);
  if (t.end - t.begin != expected)
    fail("tensor '{}': {} bytes for {} {} elements, expected {}", name, t.end - t.begin, n, dtype_name(t.type), expected);
  return t;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::json& entry) {
  if (!entry.is_object()) fail("'__metadata__' is not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string()) fail("'__metadata__' value of '{}' is not a string", key);
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// The tensors must tile the data section exactly: no overlap (two tensors sharing bytes), no
// hole, nothing left over. Zero-size tensors sit anywhere.
void check_coverage(std::vector<const SafetensorsTensor*> by_offset, uint64_t data_size) {
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  for (const auto* t : by_offset) {
    if (t->begin == t->end) continue;
    if (t->begin < covered) fail("tensor '{}': bytes [{}, {}) overlap another tensor", t->name, t->begin, t->end);
    if (t->begin > covered) fail("tensor '{}': bytes [{}, {}) leave a hole at {}", t->name, t->begin, t->end, covered);
    covered = t->end;
  }
  if (covered != data_size) fail("tensors cover {} of the {} data bytes", covered, data_size);
}

}  // namespace

std::optional<DType> safetensors_dtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

SafetensorsFile SafetensorsFile::parse(std::span<const uint8_t> bytes, const std::string& origin) {
  SafetensorsFile file;
  file.origin_ = origin;
  try {
    if (bytes.size() < 8) fail("{} bytes is too short for a header length", bytes.size());
    const uint64_t header_size = read_u64_le(bytes.data());
    if (header_size > kMaxHeaderBytes) fail("header length {} is over the {} byte limit", header_size, kMaxHeaderBytes);
    if (header_size > bytes.size() - 8) fail("header length {} runs past the end of the {} byte file", header_size, bytes.size());
    const char* header = reinterpret_cast<const char*>(bytes.data() + 8);
    const auto json = nlohmann::json::parse(header, header + header_size, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) fail("header is not valid JSON");
    if (!json.is_object()) fail("header is not a JSON object");

    const uint8_t* data = bytes.data() + 8 + header_size;
    const uint64_t data_size = bytes.size() - 8 - header_size;
    for (const auto& [name, entry] : json.items()) {
      if (name == "__metadata__") {
        file.metadata_ = parse_metadata(entry);
        continue;
      }
      SafetensorsTensor t = parse_tensor(name, entry, data_size);
      t.data = data + t.begin;
      file.index_[t.name] = file.tensors_.size();
      file.tensors_.push_back(std::move(t));
    }
    std::vector<const SafetensorsTensor*> by_offset;
    for (const auto& t : file.tensors_) by_offset.push_back(&t);
    check_coverage(std::move(by_offset), data_size);
  } catch (const Error& e) {
    fail("{}: {}", origin, e.what());
  }
  return file;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto map = std::make_shared<MappedFile>(path);
  SafetensorsFile file = parse(map->bytes(), path);
  file.map_ = std::move(map);
  return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::vector<float> tensor_floats(const SafetensorsTensor& t) {
  std::vector<float> out(static_cast<size_t>(t.n_elements));
  for (int64_t i = 0; i < t.n_elements; ++i) {
    if (t.type == DType::F32) {
      std::memcpy(&out[size_t(i)], t.data + 4 * i, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, t.data + 2 * i, 2);
    if (t.type == DType::F16) out[size_t(i)] = f16_to_f32(bits);
    else if (t.type == DType::BF16) out[size_t(i)] = bf16_to_f32(bits);
    else fail("tensor '{}' has dtype {}; expected F32, BF16 or F16", t.name, t.dtype);
  }
  return out;
}

}  // namespace ridge
