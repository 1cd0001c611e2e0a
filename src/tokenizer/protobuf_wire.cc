#include "tokenizer/protobuf_wire.h"

#include <cstring>

#include "core/error.h"

namespace ridge::proto {

void WireReader::fail_at(std::string_view problem) const { fail("{}: {} at byte {}", what_, problem, pos_); }

uint64_t WireReader::read_varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= bytes_.size()) fail_at("a varint runs past the end");
    const uint8_t b = bytes_[pos_++];
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail_at("a varint is longer than ten bytes");
}

bool WireReader::next(Field& f) {
  if (pos_ >= bytes_.size()) return false;
  const uint64_t key = read_varint();
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) fail_at("a field number of 0 or past 2^29");
  f.number = uint32_t(key >> 3);
  f.varint = 0;
  f.bytes = {};
  size_t n = 0;
  switch (key & 7) {
    case 0:
      f.wire = Wire::Varint;
      f.varint = read_varint();
      return true;
    case 1: f.wire = Wire::Fixed64, n = 8; break;
    case 5: f.wire = Wire::Fixed32, n = 4; break;
    case 2: {
      f.wire = Wire::Bytes;
      const uint64_t len = read_varint();
      if (len > bytes_.size() - pos_) fail_at(fmt::format("field {} says {} bytes, past the end", f.number, len));
      n = size_t(len);
      break;
    }
    default: fail_at(fmt::format("field {} has wire type {}, which ridge does not read", f.number, key & 7));
  }
  if (n > bytes_.size() - pos_) fail_at(fmt::format("field {} runs past the end", f.number));
  f.bytes = bytes_.subspan(pos_, n);
  pos_ += n;
  return true;
}

void WireReader::expect(const Field& f, Wire wire, std::string_view type) const {
  if (f.wire != wire) fail("{}: field {} should be a {}, its wire type is {}", what_, f.number, type, int(f.wire));
}

float WireReader::as_float(const Field& f) const {
  expect(f, Wire::Fixed32, "float");
  float v;
  std::memcpy(&v, f.bytes.data(), 4);  // little-endian, as x86 and the format
  return v;
}

std::string_view WireReader::as_string(const Field& f) const {
  expect(f, Wire::Bytes, "string");
  return {reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size()};
}

bool WireReader::as_bool(const Field& f) const {
  expect(f, Wire::Varint, "bool");
  return f.varint != 0;
}

int32_t WireReader::as_int32(const Field& f) const {
  expect(f, Wire::Varint, "int32");
  const auto v = int64_t(f.varint);
  if (v < INT32_MIN || v > INT32_MAX) fail("{}: field {} = {} is outside int32", what_, f.number, v);
  return int32_t(v);
}

}  // namespace ridge::proto
