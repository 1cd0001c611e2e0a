#pragma once
// Finding JSON values inside a model's output that may still be growing: where a value starting at
// some position ends, or that the text ends before it does, or that it is not JSON. Used to pull
// tool calls out of text while they stream.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::chat {

struct Scan {
  enum class Status { kComplete, kIncomplete, kInvalid };
  Status status = Status::kInvalid;
  size_t end = 0;  // kComplete: one past the value's last byte
};

size_t skip_json_space(std::string_view text, size_t pos);

// The JSON value that starts at `pos` (no leading whitespace). A number or literal at the very end of
// the text is incomplete: more digits may follow.
Scan scan_json_value(std::string_view text, size_t pos);

// An object's members as far as the text goes: keys decoded, values as spans of the text.
struct ObjectMember {
  std::string key;
  size_t value_begin = 0;
  Scan value;  // kIncomplete: the value runs to the end of the text
};
struct ObjectScan {
  Scan::Status status = Scan::Status::kInvalid;
  size_t end = 0;  // kComplete: one past '}'
  std::vector<ObjectMember> members;
};
ObjectScan scan_json_object(std::string_view text, size_t pos);

// The value of a complete JSON string literal, "" when it is not one.
std::string decode_json_string(std::string_view literal);

}  // namespace ridge::chat
