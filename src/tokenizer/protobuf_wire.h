#pragma once
// Protocol Buffers' wire format, read by hand for the one protobuf ridge meets (SentencePiece's
// tokenizer.model): a message is fields in order, each a key (field number << 3 | wire type) and a
// value — a varint, 8 or 4 fixed bytes, or a length-prefixed byte run (strings, nested messages).
// Every length is checked against the bytes really there; errors name `what` and the offset.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ridge::proto {

enum class Wire : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  Wire wire = Wire::Varint;
  uint64_t varint = 0;             // Varint
  std::span<const uint8_t> bytes;  // Bytes, Fixed64 (8), Fixed32 (4)
};

class WireReader {
 public:
  // `what` names the message in errors ("tokenizer.model: piece 17").
  WireReader(std::span<const uint8_t> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  // The next field, false at the end. Error for a truncated key or value, a field number of 0, or
  // a wire type protobuf 3 does not write (groups, 6, 7).
  bool next(Field& f);

  // The field's value as a type, Error when its wire type is not that type's.
  float as_float(const Field& f) const;              // Fixed32
  std::string_view as_string(const Field& f) const;  // Bytes
  bool as_bool(const Field& f) const;                // Varint
  int32_t as_int32(const Field& f) const;            // Varint (negative int32 take ten bytes)

  const std::string& what() const { return what_; }

 private:
  uint64_t read_varint();
  [[noreturn]] void fail_at(std::string_view problem) const;
  void expect(const Field& f, Wire wire, std::string_view type) const;

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace ridge::proto
