#pragma once
// Server-Sent Events framing as OpenAI streams use it: one "data: <json>" event per chunk, each
// ended by a blank line, and a final "data: [DONE]".
#include <string>

#include <nlohmann/json.hpp>

namespace ridge {

// The JSON is written on one line (a newline inside would start a new SSE field); invalid UTF-8 in
// generated text is replaced rather than thrown on.
std::string sse_event(const nlohmann::json& data);
std::string sse_done();

inline constexpr const char* kSseContentType = "text/event-stream";

}  // namespace ridge
