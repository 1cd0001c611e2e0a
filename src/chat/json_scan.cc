#include "chat/json_scan.h"

#include <cctype>

#include <nlohmann/json.hpp>

namespace ridge::chat {
namespace {

using Status = Scan::Status;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Scan scan_string(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      ++i;
    } else if (c == '"') {
      return {Status::kComplete, i + 1};
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return {Status::kInvalid, i};
    }
  }
  return {Status::kIncomplete, text.size()};
}

// Numbers and literals: the run of bytes that can belong to one; checked by parsing it.
Scan scan_scalar(std::string_view text, size_t pos) {
  size_t end = pos;
  while (end < text.size()) {
    const char c = text[end];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.')) break;
    ++end;
  }
  const std::string_view word = text.substr(pos, end - pos);
  if (end == text.size()) {  // a prefix of a literal or a number so far
    for (std::string_view literal : {"true", "false", "null"})
      if (literal.substr(0, word.size()) == word) return {Status::kIncomplete, end};
    if (!word.empty() && (word[0] == '-' || std::isdigit(static_cast<unsigned char>(word[0]))))
      return {Status::kIncomplete, end};
    return {Status::kInvalid, pos};
  }
  if (word.empty() || !nlohmann::json::accept(word)) return {Status::kInvalid, pos};
  return {Status::kComplete, end};
}

// Arrays and objects by bracket depth, strings skipped whole; validity is the members' business.
Scan scan_container(std::string_view text, size_t pos) {
  std::vector<char> closers;
  for (size_t i = pos; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const Scan s = scan_string(text, i);
      if (s.status != Status::kComplete) return s;
      i = s.end - 1;
    } else if (c == '{' || c == '[') {
      closers.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (closers.empty() || closers.back() != c) return {Status::kInvalid, i};
      closers.pop_back();
      if (closers.empty()) {
        const std::string_view whole = text.substr(pos, i + 1 - pos);
        if (!nlohmann::json::accept(whole)) return {Status::kInvalid, pos};
        return {Status::kComplete, i + 1};
      }
    }
  }
  return {Status::kIncomplete, text.size()};
}

}  // namespace

size_t skip_json_space(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

Scan scan_json_value(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {Status::kIncomplete, text.size()};
  const char c = text[pos];
  if (c == '"') return scan_string(text, pos);
  if (c == '{' || c == '[') return scan_container(text, pos);
  return scan_scalar(text, pos);
}

ObjectScan scan_json_object(std::string_view text, size_t pos) {
  ObjectScan out;
  out.status = Status::kIncomplete;
  out.end = text.size();
  if (pos >= text.size()) return out;
  if (text[pos] != '{') {
    out.status = Status::kInvalid;
    return out;
  }
  size_t at = skip_json_space(text, pos + 1);
  if (at < text.size() && text[at] == '}') return {Status::kComplete, at + 1, {}};
  while (true) {
    if (at >= text.size()) return out;
    if (text[at] != '"') return {Status::kInvalid, at, std::move(out.members)};
    const Scan key = scan_string(text, at);
    if (key.status != Status::kComplete) {
      out.status = key.status;
      return out;
    }
    ObjectMember member;
    member.key = decode_json_string(text.substr(at, key.end - at));
    at = skip_json_space(text, key.end);
    if (at >= text.size()) return out;
    if (text[at] != ':') return {Status::kInvalid, at, std::move(out.members)};
    at = skip_json_space(text, at + 1);
    if (at >= text.size()) return out;
    member.value_begin = at;
    member.value = scan_json_value(text, at);
    out.members.push_back(member);
    if (member.value.status != Status::kComplete) {
      out.status = member.value.status;
      return out;
    }
    at = skip_json_space(text, member.value.end);
    if (at >= text.size()) return out;
    if (text[at] == '}') {
      out.status = Status::kComplete;
      out.end = at + 1;
      return out;
    }
    if (text[at] != ',') return {Status::kInvalid, at, std::move(out.members)};
    at = skip_json_space(text, at + 1);
  }
}

std::string decode_json_string(std::string_view literal) {
  const auto value = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace ridge::chat
