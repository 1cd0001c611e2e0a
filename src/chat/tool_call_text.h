#pragma once
// Pieces the tool formats share: reading one call object ({"name": ..., "arguments": ...}) out of
// growing text, holding back a marker's first bytes, the grammar tag of one call, JSON for templates.
#include <cstddef>
#include <string>
#include <string_view>

#include "chat/json_scan.h"
#include "chat/tools.h"
#include "grammar/grammar_spec.h"

namespace ridge::chat {

struct CallObject {
  ParsedCall call;
  Scan::Status status = Scan::Status::kInvalid;
  size_t end = 0;  // kComplete: one past '}'
};
// The object at `pos`, whose name is under "name" and arguments under `args_key`. Invalid when it is
// not an object or its name is not a string.
CallObject read_call_object(std::string_view text, size_t pos, std::string_view args_key);

// Calls written as open + object + close (<tool_call>...</tool_call>), content around them. Text
// after `open` that is not a call object stays content.
ParsedOutput parse_marked_calls(std::string_view text, bool final, std::string_view open, std::string_view close,
                                std::string_view args_key);

// How many bytes at the end of `text` could be the start of `marker` (held back while streaming).
size_t partial_marker(std::string_view text, std::string_view marker);

// One call to `tool` as text: before + {"name": "NAME", "<args_key>": ARGS} + after.
grammar::GrammarTag call_tag(const Tool& tool, std::string_view before, std::string_view args_key,
                             std::string_view after);
// A kTagged spec over the tools' call tags.
grammar::GrammarSpec calls_spec(std::vector<grammar::GrammarTag> tags, bool repeat, std::string separator,
                                std::string prefix = {}, std::string suffix = {});

// A call's arguments as a template prints them with tojson: parsed and written as Python would
// (a text that is not JSON is printed as a JSON string, as tojson prints any string).
std::string arguments_as_template_json(const std::string& arguments);
// Appends `piece` to the content; after a call, whitespace-only pieces are dropped.
void append_content(ParsedOutput& out, std::string_view piece);

std::string trim_space(std::string_view text);  // Jinja's trim: leading and trailing whitespace
std::string random_alnum(size_t n);

}  // namespace ridge::chat
