#include "model/gguf/gguf_writer.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "model/gguf/gguf_file.h"

namespace ridge::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kVersion = 3;
constexpr size_t kFileBuffer = size_t(8) << 20;

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void append_string(std::vector<uint8_t>& out, const std::string& s) {
  append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

uint32_t type_id(ValueType t) { return static_cast<uint32_t>(t); }

}  // namespace

GgufWriter::GgufWriter(std::string path, uint64_t alignment)
    : path_(std::move(path)), part_path_(path_ + ".part"), alignment_(alignment) {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) fail("GGUF alignment {} is not a power of two", alignment_);
  if (alignment_ != 32) add_u32("general.alignment", uint32_t(alignment_));
}

GgufWriter::~GgufWriter() {
  if (file_) {
    std::fclose(file_);
    std::error_code ignored;
    std::filesystem::remove(part_path_, ignored);
  }
}

void GgufWriter::begin_kv(const std::string& key, uint32_t value_type) {
  if (header_written_) fail("GGUF writer: metadata '{}' added after the header", key);
  append_string(kv_, key);
  append<uint32_t>(kv_, value_type);
  ++n_kv_;
}

void GgufWriter::add_string(const std::string& key, const std::string& value) {
  begin_kv(key, type_id(ValueType::STRING));
  append_string(kv_, value);
}

void GgufWriter::add_u32(const std::string& key, uint32_t value) {
  begin_kv(key, type_id(ValueType::U32));
  append(kv_, value);
}

void GgufWriter::add_i32(const std::string& key, int32_t value) {
  begin_kv(key, type_id(ValueType::I32));
  append(kv_, value);
}

void GgufWriter::add_f32(const std::string& key, float value) {
  begin_kv(key, type_id(ValueType::F32));
  append(kv_, value);
}

void GgufWriter::add_bool(const std::string& key, bool value) {
  begin_kv(key, type_id(ValueType::BOOL));
  append<uint8_t>(kv_, value ? 1 : 0);
}

void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& values) {
  begin_kv(key, type_id(ValueType::ARRAY));
  append<uint32_t>(kv_, type_id(ValueType::STRING));
  append<uint64_t>(kv_, values.size());
  for (const auto& v : values) append_string(kv_, v);
}

void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& values) {
  begin_kv(key, type_id(ValueType::ARRAY));
  append<uint32_t>(kv_, type_id(ValueType::I32));
  append<uint64_t>(kv_, values.size());
  for (int32_t v : values) append(kv_, v);
}

void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& values) {
  begin_kv(key, type_id(ValueType::ARRAY));
  append<uint32_t>(kv_, type_id(ValueType::F32));
  append<uint64_t>(kv_, values.size());
  for (float v : values) append(kv_, v);
}

void GgufWriter::add_value(const std::string& key, const Value& value) {
  begin_kv(key, type_id(value.type));
  append_value_body(value);
}

void GgufWriter::append_value_body(const Value& value) {
  switch (value.type) {
    case ValueType::U8: append<uint8_t>(kv_, uint8_t(value.as_int())); break;
    case ValueType::I8: append<int8_t>(kv_, int8_t(value.as_int())); break;
    case ValueType::U16: append<uint16_t>(kv_, uint16_t(value.as_int())); break;
    case ValueType::I16: append<int16_t>(kv_, int16_t(value.as_int())); break;
    case ValueType::U32: append<uint32_t>(kv_, uint32_t(value.as_int())); break;
    case ValueType::I32: append<int32_t>(kv_, int32_t(value.as_int())); break;
    case ValueType::U64: append<uint64_t>(kv_, std::get<uint64_t>(value.data)); break;
    case ValueType::I64: append<int64_t>(kv_, value.as_int()); break;
    case ValueType::F32: append<float>(kv_, float(value.as_double())); break;
    case ValueType::F64: append<double>(kv_, value.as_double()); break;
    case ValueType::BOOL: append<uint8_t>(kv_, value.as_bool() ? 1 : 0); break;
    case ValueType::STRING: append_string(kv_, value.as_string()); break;
    case ValueType::ARRAY: {
      const auto& items = value.as_array();
      append<uint32_t>(kv_, type_id(value.array_type));
      append<uint64_t>(kv_, items.size());
      for (const Value& item : items) {
        if (item.type != value.array_type) fail("GGUF writer: array element of type {} in an array of {}",
                                                value_type_name(item.type), value_type_name(value.array_type));
        append_value_body(item);
      }
      break;
    }
  }
}

void GgufWriter::add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape) {
  if (header_written_) fail("GGUF writer: tensor '{}' added after the header", name);
  if (shape.empty() || shape.size() > 4) fail("GGUF writer: tensor '{}' needs 1 to 4 dimensions", name);
  if (uint32_t(type) >= kFirstInternalType) fail("GGUF writer: tensor '{}': {} has no GGUF type", name, dtype_name(type));
  int64_t rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
  const uint64_t bytes = uint64_t(dtype_row_bytes(type, shape[0]) * rows);
  tensors_.push_back({name, type, shape, uint64_t(data_bytes_), bytes});
  data_bytes_ += int64_t((bytes + alignment_ - 1) / alignment_ * alignment_);
}

void GgufWriter::write_bytes(const void* data, size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) fail("cannot write {}: {}", part_path_, std::strerror(errno));
  file_offset_ += bytes;
}

void GgufWriter::pad_to_alignment() {
  static const uint8_t zeros[256] = {};
  while (file_offset_ % alignment_ != 0) {
    const size_t n = size_t(std::min<uint64_t>(sizeof zeros, alignment_ - file_offset_ % alignment_));
    write_bytes(zeros, n);
  }
}

void GgufWriter::write_header() {
  if (header_written_) fail("GGUF writer: header written twice");
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  file_ = std::fopen(part_path_.c_str(), "wb");
  if (!file_) fail("cannot create {}: {}", part_path_, std::strerror(errno));
  std::setvbuf(file_, nullptr, _IOFBF, kFileBuffer);
  header_written_ = true;

  std::vector<uint8_t> head;
  append(head, kMagic);
  append(head, kVersion);
  append<uint64_t>(head, tensors_.size());
  append<uint64_t>(head, n_kv_);
  head.insert(head.end(), kv_.begin(), kv_.end());
  for (const Tensor& t : tensors_) {
    append_string(head, t.name);
    append<uint32_t>(head, uint32_t(t.shape.size()));
    for (int64_t d : t.shape) append<uint64_t>(head, uint64_t(d));
    append<uint32_t>(head, static_cast<uint32_t>(t.type));
    append<uint64_t>(head, t.offset);
  }
  write_bytes(head.data(), head.size());
  pad_to_alignment();
  kv_.clear();
  kv_.shrink_to_fit();
}

void GgufWriter::write_tensor_data(const void* data, size_t bytes) {
  if (!header_written_) fail("GGUF writer: tensor data before the header");
  if (current_ >= tensors_.size()) fail("GGUF writer: more tensor data than the tensors declared");
  const Tensor& t = tensors_[current_];
  if (current_written_ + bytes > t.bytes) fail("GGUF writer: too many bytes for tensor '{}'", t.name);
  write_bytes(data, bytes);
  current_written_ += bytes;
  if (current_written_ == t.bytes) {
    pad_to_alignment();
    ++current_;
    current_written_ = 0;
  }
}

void GgufWriter::finish() {
  if (!header_written_) write_header();
  if (current_ != tensors_.size())
    fail("GGUF writer: tensor '{}' is missing data", tensors_[current_].name);
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    fail("cannot write {}: {}", part_path_, std::strerror(errno));
  }
  file_ = nullptr;
  std::filesystem::rename(part_path_, path_);
}

}  // namespace ridge::gguf
