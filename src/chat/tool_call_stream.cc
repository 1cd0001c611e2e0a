#include "chat/tool_call_stream.h"

#include <algorithm>

#include "chat/tool_call_text.h"

namespace ridge::chat {

ParsedOutput ToolCallStream::parse() {
  ParsedOutput out = format_.parse(text_, final_);
  const std::string_view key = format_.bare_call_key();
  if (key.empty() || bare_ == Bare::kNo || !out.calls.empty()) return out;
  const size_t start = skip_json_space(text_, 0);
  const std::string_view rest = std::string_view(text_).substr(start);
  constexpr std::string_view kOpen = "{\"name\"";
  const CallObject object = rest.starts_with(kOpen) ? read_call_object(text_, start, key) : CallObject{};
  if (bare_ == Bare::kUndecided) {
    if (!final_ && kOpen.starts_with(rest)) return {};                                        // too early to tell
    if (!final_ && object.status != Scan::Status::kInvalid && !object.call.name_done) return {};  // the name is coming
    const bool named = object.status != Scan::Status::kInvalid && object.call.name_done &&
                       std::find(tool_names_.begin(), tool_names_.end(), object.call.name) != tool_names_.end();
    bare_ = named ? Bare::kCall : Bare::kNo;
    if (!named) return out;
  }
  if (object.status == Scan::Status::kInvalid) return out;  // became invalid: what was sent stands
  ParsedOutput bare;
  bare.calls.push_back(object.call);
  if (object.status == Scan::Status::kComplete) append_content(bare, std::string_view(text_).substr(object.end));
  return bare;
}

StreamDelta ToolCallStream::push(std::string_view text, bool final) {
  text_ += text;
  final_ = final;
  parsed_ = parse();
  StreamDelta delta;
  // Content only grows; a parser that took bytes back (a call that turned out not to be one) has
  // its earlier bytes stand, and only what extends them is sent.
  if (parsed_.content.size() > content_sent_ && parsed_.content.compare(0, content_sent_, parsed_.content, 0, content_sent_) == 0) {
    delta.content = parsed_.content.substr(content_sent_);
    content_sent_ = parsed_.content.size();
  }
  if (sent_.size() < parsed_.calls.size()) sent_.resize(parsed_.calls.size());
  for (size_t i = 0; i < parsed_.calls.size(); ++i) {
    const ParsedCall& call = parsed_.calls[i];
    Sent& sent = sent_[i];
    if (!sent.opened && !call.name_done) break;  // calls open in order
    CallDelta d;
    d.index = i;
    if (!sent.opened) {
      sent.opened = true;
      sent.id = format_.new_call_id();
      d.opens = true;
      d.id = sent.id;
      d.name = call.name;
    }
    if (call.arguments.size() > sent.arguments) {
      d.arguments = call.arguments.substr(sent.arguments);
      sent.arguments = call.arguments.size();
    }
    if (d.opens || !d.arguments.empty()) delta.calls.push_back(std::move(d));
  }
  return delta;
}

std::vector<FinishedCall> ToolCallStream::calls() const {
  std::vector<FinishedCall> out;
  for (size_t i = 0; i < parsed_.calls.size() && i < sent_.size(); ++i)
    if (sent_[i].opened) out.push_back({sent_[i].id, parsed_.calls[i].name, parsed_.calls[i].arguments});
  return out;
}

}  // namespace ridge::chat
