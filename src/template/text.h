#pragma once
// Text as Python sees it: strings are sequences of code points, so lengths, indexes and slices of
// UTF-8 text count characters, not bytes. Also the whitespace and case rules of str's methods.
#include <string>
#include <string_view>
#include <vector>

namespace ridge::tmpl {

// Each code point's bytes (an invalid byte stands alone).
std::vector<std::string> utf8_chars(std::string_view s);
size_t utf8_length(std::string_view s);
// Python's str.isspace for one character (ASCII whitespace and the Unicode spaces).
bool is_space_char(std::string_view ch);
// Python's str.strip / lstrip / rstrip; `chars` null: whitespace.
std::string strip(std::string_view s, const std::string* chars, bool left, bool right);
// ASCII case mapping (other characters are kept).
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
// Python's str.split(sep, maxsplit); sep null: runs of whitespace.
std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit);
std::string replace_all(std::string_view s, std::string_view from, std::string_view to, long count);

}  // namespace ridge::tmpl
