#include "chat/tool_call_text.h"

#include <random>

#include "chat/python_json.h"

namespace ridge::chat {

CallObject read_call_object(std::string_view text, size_t pos, std::string_view args_key) {
  CallObject out;
  const ObjectScan object = scan_json_object(text, pos);
  out.status = object.status;
  out.end = object.end;
  for (const ObjectMember& m : object.members) {
    const bool complete = m.value.status == Scan::Status::kComplete;
    if (m.key == "name") {
      if (complete) {
        const std::string_view literal = text.substr(m.value_begin, m.value.end - m.value_begin);
        if (literal.empty() || literal[0] != '"') {
          out.status = Scan::Status::kInvalid;
          return out;
        }
        out.call.name = decode_json_string(literal);
        out.call.name_done = true;
      }
    } else if (m.key == args_key) {
      const size_t end = complete ? m.value.end : text.size();
      out.call.arguments = std::string(text.substr(m.value_begin, end - m.value_begin));
    }
  }
  if (out.status == Scan::Status::kComplete) {
    if (!out.call.name_done) out.status = Scan::Status::kInvalid;  // an object, but not a call
    out.call.done = true;
    if (out.call.arguments.empty()) out.call.arguments = "{}";
  }
  return out;
}

ParsedOutput parse_marked_calls(std::string_view text, bool final, std::string_view open, std::string_view close,
                                std::string_view args_key) {
  ParsedOutput out;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find(open, pos);
    if (at == std::string_view::npos) {
      std::string_view rest = text.substr(pos);
      if (!final) rest.remove_suffix(partial_marker(rest, open));
      append_content(out, rest);
      return out;
    }
    append_content(out, text.substr(pos, at - pos));
    const size_t object_at = skip_json_space(text, at + open.size());
    const CallObject object = read_call_object(text, object_at, args_key);
    if (object.status == Scan::Status::kInvalid) {  // not a call after all
      append_content(out, text.substr(at, open.size()));
      pos = at + open.size();
      continue;
    }
    out.calls.push_back(object.call);
    if (object.status == Scan::Status::kIncomplete) return out;
    const size_t after = skip_json_space(text, object.end);
    const std::string_view tail = text.substr(after);
    if (tail.starts_with(close)) {
      pos = after + close.size();
    } else if (close.starts_with(tail)) {
      return out;  // the close is still being written (or the text ends without it)
    } else {
      pos = after;  // no close: what follows is read on its own
    }
  }
}

size_t partial_marker(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  return 0;
}

grammar::GrammarTag call_tag(const Tool& tool, std::string_view before, std::string_view args_key,
                             std::string_view after) {
  grammar::GrammarTag tag;
  tag.begin = std::string(before) + "{\"name\": " + python_json(tool.name) + ", " + python_json(std::string(args_key)) + ": ";
  tag.schema = tool.parameters.dump();
  tag.end = "}" + std::string(after);
  return tag;
}

grammar::GrammarSpec calls_spec(std::vector<grammar::GrammarTag> tags, bool repeat, std::string separator,
                                std::string prefix, std::string suffix) {
  grammar::GrammarSpec spec;
  spec.kind = grammar::GrammarSpec::Kind::kTagged;
  spec.whitespace = grammar::Whitespace::kSpaced;
  spec.tags = std::move(tags);
  spec.repeat = repeat;
  spec.separator = std::move(separator);
  spec.prefix = std::move(prefix);
  spec.suffix = std::move(suffix);
  return spec;
}

std::string arguments_as_template_json(const std::string& arguments) {
  const auto parsed = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return python_json(parsed.is_discarded() ? Json(arguments) : parsed);
}

void append_content(ParsedOutput& out, std::string_view piece) {
  if (!out.calls.empty() && trim_space(piece).empty()) return;
  out.content += piece;
}

std::string trim_space(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  size_t begin = 0, end = text.size();
  while (begin < end && space(text[begin])) ++begin;
  while (end > begin && space(text[end - 1])) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string random_alnum(size_t n) {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kChars[rng() % kChars.size()];
  return out;
}

}  // namespace ridge::chat
