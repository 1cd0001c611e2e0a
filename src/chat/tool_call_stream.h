#pragma once
// A choice's output read as content and tool calls while it streams: each push re-reads the whole
// text with the format's parser and returns only what is new -- content bytes, a call's opening
// (its id and name, once the name is complete), and the next bytes of its arguments -- so the
// concatenated deltas are exactly the final content and arguments (OpenAI's streaming shape).
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "chat/tool_format.h"

namespace ridge::chat {

struct CallDelta {
  size_t index = 0;
  bool opens = false;  // the first delta of this call: id and name are set
  std::string id, name;
  std::string arguments;
};

struct StreamDelta {
  std::string content;
  std::vector<CallDelta> calls;
  bool empty() const { return content.empty() && calls.empty(); }
};

// A call as the response reports it.
struct FinishedCall {
  std::string id, name, arguments;
};

class ToolCallStream {
 public:
  // `tool_names`: the tools offered; a bare call object (see ToolFormat::bare_call_key) counts only
  // when it names one of them.
  ToolCallStream(const ToolFormat& format, std::vector<std::string> tool_names)
      : format_(format), tool_names_(std::move(tool_names)) {}
  // `text` continues the output; `final`: nothing more will come (held-back text is released).
  StreamDelta push(std::string_view text, bool final);
  // After the final push: the content and the calls whose names were complete.
  const std::string& content() const { return parsed_.content; }
  std::vector<FinishedCall> calls() const;

 private:
  struct Sent {
    std::string id;
    bool opened = false;
    size_t arguments = 0;
  };
  enum class Bare { kUndecided, kNo, kCall };
  // Whether the text is a bare call object: decided once the name is complete, never revisited.
  ParsedOutput parse();

  const ToolFormat& format_;
  std::vector<std::string> tool_names_;
  Bare bare_ = Bare::kUndecided;
  bool final_ = false;
  std::string text_;
  ParsedOutput parsed_;
  size_t content_sent_ = 0;
  std::vector<Sent> sent_;
};

}  // namespace ridge::chat
