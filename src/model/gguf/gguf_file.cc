#include "model/gguf/gguf_file.h"

#include <cstring>
#include <limits>

#include "core/error.h"

namespace ridge::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr int kMaxDims = 4;
constexpr int kMaxArrayDepth = 4;
constexpr uint64_t kMaxStringBytes = uint64_t(1) << 30;
// Each array item becomes a Value of ~48 bytes; the largest real arrays (vocabularies, merges)
// hold well under a million items, so this only stops a file from costing gigabytes of memory.
constexpr uint64_t kMaxArrayItems = uint64_t(1) << 24;
constexpr uint64_t kMaxAlignment = uint64_t(1) << 20;

// Reads little-endian values from a span; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  T read(const char* what) {
    if (remaining() < sizeof(T))
      fail("truncated file: {} needs {} bytes at offset {}, only {} left", what, sizeof(T), pos_, remaining());
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  std::string read_string(const char* what) {
    const uint64_t length = read<uint64_t>(what);
    if (length > kMaxStringBytes) fail("corrupt file: {} at offset {} claims {} bytes (limit {})", what, pos_, length, kMaxStringBytes);
    if (length > remaining())
      fail("truncated or corrupt file: {} at offset {} claims {} bytes, only {} left", what, pos_, length, remaining());
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
    pos_ += length;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

// Smallest encoded size of one value of a type: bounds element counts before allocating.
uint64_t min_encoded_size(ValueType type) {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::BOOL: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: case ValueType::STRING: return 8;
    case ValueType::ARRAY: return 12;
  }
  return 1;
}

ValueType read_value_type(Reader& in, const std::string& key) {
  const uint32_t raw = in.read<uint32_t>("metadata value type");
  if (raw > static_cast<uint32_t>(ValueType::F64)) fail("corrupt file: metadata '{}' has unknown value type {}", key, raw);
  return static_cast<ValueType>(raw);
}

Value read_value(Reader& in, ValueType type, const std::string& key, int depth) {
  Value v;
  v.type = type;
  switch (type) {
    case ValueType::U8: v.data = uint64_t(in.read<uint8_t>("u8")); break;
    case ValueType::I8: v.data = int64_t(in.read<int8_t>("i8")); break;
    case ValueType::U16: v.data = uint64_t(in.read<uint16_t>("u16")); break;
    case ValueType::I16: v.data = int64_t(in.read<int16_t>("i16")); break;
    case ValueType::U32: v.data = uint64_t(in.read<uint32_t>("u32")); break;
    case ValueType::I32: v.data = int64_t(in.read<int32_t>("i32")); break;
    case ValueType::U64: v.data = in.read<uint64_t>("u64"); break;
    case ValueType::I64: v.data = in.read<int64_t>("i64"); break;
    case ValueType::F32: v.data = double(in.read<float>("f32")); break;
    case ValueType::F64: v.data = in.read<double>("f64"); break;
    case ValueType::BOOL: {
      const uint8_t b = in.read<uint8_t>("bool");
      if (b > 1) fail("corrupt file: metadata '{}' has bool value {}", key, b);
      v.data = b != 0;
      break;
    }
    case ValueType::STRING: v.data = in.read_string("metadata string"); break;
    case ValueType::ARRAY: {
      if (depth >= kMaxArrayDepth) fail("corrupt file: metadata '{}' nests arrays deeper than {}", key, kMaxArrayDepth);
      v.array_type = read_value_type(in, key);
      const uint64_t count = in.read<uint64_t>("array length");
      if (count > kMaxArrayItems) fail("corrupt file: metadata '{}' claims {} array items (limit {})", key, count, kMaxArrayItems);
      if (count > in.remaining() / min_encoded_size(v.array_type))
        fail("truncated or corrupt file: metadata '{}' claims {} array items, more than the {} bytes left can hold", key, count,
             in.remaining());
      std::vector<Value> items;
      items.reserve(count);
      for (uint64_t i = 0; i < count; ++i) items.push_back(read_value(in, v.array_type, key, depth + 1));
      v.data = std::move(items);
      break;
    }
  }
  return v;
}

int64_t checked_mul(int64_t a, int64_t b, const std::string& tensor) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) fail("corrupt file: tensor '{}' size overflows 64 bits", tensor);
  return a * b;
}

}  // namespace

std::string_view value_type_name(ValueType type) {
  static constexpr std::string_view kNames[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                                "bool", "string", "array", "u64", "i64", "f64"};
  const auto index = static_cast<uint32_t>(type);
  return index < std::size(kNames) ? kNames[index] : "?";
}

bool Value::is_integer() const { return std::holds_alternative<uint64_t>(data) || std::holds_alternative<int64_t>(data); }
bool Value::is_number() const { return is_integer() || std::holds_alternative<double>(data); }

int64_t Value::as_int(std::string_view key) const {
  if (const auto* u = std::get_if<uint64_t>(&data)) {
    if (*u > uint64_t(std::numeric_limits<int64_t>::max())) fail("metadata '{}' value {} is out of range", key, *u);
    return int64_t(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  fail("metadata '{}' is {}, expected an integer", key, value_type_name(type));
}

double Value::as_double(std::string_view key) const {
  if (const auto* d = std::get_if<double>(&data)) return *d;
  if (is_integer()) return double(as_int(key));
  fail("metadata '{}' is {}, expected a number", key, value_type_name(type));
}

bool Value::as_bool(std::string_view key) const {
  if (const auto* b = std::get_if<bool>(&data)) return *b;
  if (is_integer()) return as_int(key) != 0;
  fail("metadata '{}' is {}, expected a bool", key, value_type_name(type));
}

const std::string& Value::as_string(std::string_view key) const {
  if (const auto* s = std::get_if<std::string>(&data)) return *s;
  fail("metadata '{}' is {}, expected a string", key, value_type_name(type));
}

const std::vector<Value>& Value::as_array(std::string_view key) const {
  if (const auto* a = std::get_if<std::vector<Value>>(&data)) return *a;
  fail("metadata '{}' is {}, expected an array", key, value_type_name(type));
}

std::string Value::to_display_string(size_t max_items) const {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          std::string s = x.size() > 80 ? x.substr(0, 77) + "..." : x;
          for (auto& c : s)
            if (c == '\n') c = ' ';
          return "\"" + s + "\"";
        } else if constexpr (std::is_same_v<T, std::vector<Value>>) {
          std::string s = fmt::format("[{} x {}]", x.size(), value_type_name(array_type));
          for (size_t i = 0; i < x.size() && i < max_items; ++i) s += (i ? ", " : " ") + x[i].to_display_string(0);
          if (x.size() > max_items && max_items > 0) s += ", ...";
          return s;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return type == ValueType::F32 ? fmt::format("{}", float(x)) : fmt::format("{}", x);  // shortest form of its own width
        } else {
          return fmt::format("{}", x);
        }
      },
      data);
}

GgufFile GgufFile::open_one(const std::string& path) {
  auto map = std::make_shared<MappedFile>(path);
  GgufFile file;
  try {
    file = parse(map->bytes());
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
  file.shards_[0].path = path;
  file.maps_.push_back(std::move(map));
  return file;
}

uint64_t GgufFile::file_size() const {
  uint64_t total = 0;
  for (const auto& shard : shards_) total += shard.file_size;
  return total;
}

GgufFile GgufFile::parse(std::span<const uint8_t> bytes) {
  GgufFile file;
  Reader in(bytes);

  const uint32_t magic = in.read<uint32_t>("magic");
  if (magic != kMagic) fail("not a GGUF file: bad magic 0x{:08x} (expected \"GGUF\")", magic);
  file.version_ = in.read<uint32_t>("version");
  if (file.version_ == 1) fail("GGUF version 1 is not supported (convert the file to v3)");
  if (file.version_ == 0x02000000 || file.version_ == 0x03000000)
    fail("unsupported GGUF file: big-endian (version bytes {:08x}); ridge reads little-endian files", file.version_);
  if (file.version_ != 2 && file.version_ != 3) fail("unsupported GGUF version {} (ridge reads 2 and 3)", file.version_);

  const uint64_t n_tensors = in.read<uint64_t>("tensor count");
  const uint64_t n_kv = in.read<uint64_t>("metadata count");
  // A key-value pair takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor entry at least 8 + 4 + 4 + 8.
  if (n_kv > in.remaining() / 13)
    fail("truncated or corrupt file: metadata count {} is larger than the {} bytes left can hold", n_kv, in.remaining());
  if (n_tensors > in.remaining() / 24)
    fail("truncated or corrupt file: tensor count {} is larger than the {} bytes left can hold", n_tensors, in.remaining());

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = in.read_string("metadata key");
    const ValueType type = read_value_type(in, key);
    Value value = read_value(in, type, key, 0);
    if (file.metadata_index_.count(key)) fail("corrupt file: duplicate metadata key '{}'", key);
    file.metadata_index_.emplace(key, file.metadata_.size());
    file.metadata_.emplace_back(std::move(key), std::move(value));
  }

  if (const Value* a = file.find("general.alignment")) {
    if (!a->is_integer()) fail("corrupt file: general.alignment is {}, expected an integer", value_type_name(a->type));
    const auto* as_signed = std::get_if<int64_t>(&a->data);
    const uint64_t alignment = as_signed ? uint64_t(*as_signed) : std::get<uint64_t>(a->data);
    if ((as_signed && *as_signed <= 0) || alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
      fail("corrupt file: general.alignment {} is not a power of two up to {}", a->to_display_string(), kMaxAlignment);
    file.alignment_ = alignment;
  }

  file.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    t.name = in.read_string("tensor name");
    const uint32_t n_dims = in.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) fail("corrupt file: tensor '{}' has {} dimensions (1..{} allowed)", t.name, n_dims, kMaxDims);
    t.n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t extent = in.read<uint64_t>("tensor dimension");
      if (extent == 0 || extent > uint64_t(std::numeric_limits<int64_t>::max()))
        fail("corrupt file: tensor '{}' dimension {} is {} (must be at least 1)", t.name, d, int64_t(extent));
      t.shape.push_back(int64_t(extent));
      t.n_elements = checked_mul(t.n_elements, int64_t(extent), t.name);
    }
    const uint32_t raw_type = in.read<uint32_t>("tensor type");
    const auto info = raw_type < kFirstInternalType ? dtype_info(raw_type) : std::nullopt;
    if (!info) fail("unsupported or corrupt file: tensor '{}' has unknown type id {}", t.name, raw_type);
    t.type = info->type;
    if (t.shape[0] % info->block_size != 0)
      fail("corrupt file: tensor '{}' row of {} elements is not a multiple of the {} block size {}", t.name, t.shape[0], info->name, info->block_size);
    t.n_bytes = checked_mul(t.n_elements / info->block_size, info->block_bytes, t.name);
    t.offset = in.read<uint64_t>("tensor offset");
    if (t.offset % file.alignment_ != 0)
      fail("corrupt file: tensor '{}' offset {} is not aligned to {}", t.name, t.offset, file.alignment_);
    if (file.tensor_index_.count(t.name)) fail("corrupt file: duplicate tensor name '{}'", t.name);
    file.tensor_index_.emplace(t.name, file.tensors_.size());
    file.tensors_.push_back(std::move(t));
  }

  const uint64_t header_end = in.position();
  file.data_offset_ = (header_end + file.alignment_ - 1) / file.alignment_ * file.alignment_;
  if (!file.tensors_.empty() && file.data_offset_ > bytes.size())
    fail("truncated file: tensor data would start at {}, file has {} bytes", file.data_offset_, bytes.size());
  const uint64_t data_size = bytes.size() > file.data_offset_ ? bytes.size() - file.data_offset_ : 0;
  file.shards_.push_back({"", bytes.size(), bytes.subspan(bytes.size() - data_size)});
  for (auto& t : file.tensors_) {
    if (t.offset > data_size || uint64_t(t.n_bytes) > data_size - t.offset)
      fail("truncated or corrupt file: tensor '{}' needs {} bytes at offset {} of the data section, which has {} bytes", t.name,
           t.n_bytes, t.offset, data_size);
    t.data = bytes.data() + file.data_offset_ + t.offset;
  }
  return file;
}

const Value* GgufFile::find(std::string_view key) const {
  const auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const Value& GgufFile::get(std::string_view key) const {
  if (const Value* v = find(key)) return *v;
  fail("missing metadata key '{}'", key);
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional<int64_t>(v->as_int(key)) : std::nullopt;
}

std::optional<double> GgufFile::get_double(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional<double>(v->as_double(key)) : std::nullopt;
}

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional<std::string>(v->as_string(key)) : std::nullopt;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const Value* v = find(key);
  return v ? std::optional<bool>(v->as_bool(key)) : std::nullopt;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace ridge::gguf
