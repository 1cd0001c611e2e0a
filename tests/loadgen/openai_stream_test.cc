// The wire format without a network: SSE framing cut at every byte, chunk contents, request bodies.
#include <gtest/gtest.h>

#include "core/error.h"
#include "loadgen/openai_api.h"
#include "loadgen/sse_parser.h"

namespace ridge::loadgen {
namespace {

using nlohmann::json;

std::vector<SseEvent> parse_in_pieces(const std::string& stream, size_t piece) {
  std::vector<SseEvent> events;
  SseParser parser([&](const SseEvent& e) { events.push_back(e); });
  for (size_t i = 0; i < stream.size(); i += piece) parser.feed(std::string_view(stream).substr(i, piece));
  parser.finish();
  return events;
}

TEST(LoadgenSse, SplitsEventsHoweverTheBytesArrive) {
  const std::string stream =
      ": keep-alive comment\n\n"
      "data: {\"a\":1}\n\n"
      "data:{\"b\":2}\r\n\r\n"
      "event: ping\ndata: line one\ndata: line two\n\n"
      "error: {\"error\":{\"message\":\"boom\"}}\n\n"
      "data: [DONE]";  // no blank line at the end of the stream
  for (size_t piece : {size_t(1), size_t(2), size_t(7), stream.size()}) {
    const auto events = parse_in_pieces(stream, piece);
    ASSERT_EQ(events.size(), 5u) << "piece " << piece;
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].data, "{\"b\":2}");
    EXPECT_EQ(events[2].type, "ping");
    EXPECT_EQ(events[2].data, "line one\nline two");
    EXPECT_EQ(events[3].type, "error");
    EXPECT_EQ(events[4].data, "[DONE]");
  }
}

TEST(LoadgenOpenAi, ReadsCompletionChatUsageAndErrorChunks) {
  const auto text = parse_stream_chunk(json::parse(R"({"choices":[{"index":0,"text":" Paris"}]})"), ApiKind::Completions);
  EXPECT_EQ(text.content, " Paris");
  EXPECT_FALSE(text.completion_tokens);
  const auto role =
      parse_stream_chunk(json::parse(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})"), ApiKind::Chat);
  EXPECT_EQ(role.content, "");
  const auto delta = parse_stream_chunk(json::parse(R"({"choices":[{"delta":{"content":"Hi"}}]})"), ApiKind::Chat);
  EXPECT_EQ(delta.content, "Hi");
  const auto usage = parse_stream_chunk(
      json::parse(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})"), ApiKind::Chat);
  EXPECT_EQ(usage.content, "");
  EXPECT_EQ(usage.prompt_tokens, 12);
  EXPECT_EQ(usage.completion_tokens, 34);
  const auto error = parse_stream_chunk(json::parse(R"({"error":{"message":"context too long","code":400}})"), ApiKind::Chat);
  EXPECT_EQ(error.error, "context too long");
  EXPECT_EQ(error_message_of(R"({"error":{"message":"model not found"}})"), "model not found");
  EXPECT_EQ(error_message_of("Internal Server Error"), "Internal Server Error");
}

TEST(LoadgenOpenAi, BuildsStreamingBodiesForBothEndpoints) {
  Endpoint e;
  e.model = "m";
  const RequestSpec r{"system words", "user words", 4, 16};
  const json completion = request_body(e, r);
  EXPECT_EQ(completion["prompt"], "system words user words");
  EXPECT_EQ(completion["max_tokens"], 16);
  EXPECT_EQ(completion["stream"], true);
  EXPECT_EQ(completion["stream_options"]["include_usage"], true);
  EXPECT_EQ(completion["ignore_eos"], true);
  EXPECT_EQ(completion["model"], "m");
  EXPECT_EQ(completion["temperature"], 0.0);
  EXPECT_FALSE(completion.contains("top_p"));
  e.temperature = 0.8;
  e.top_p = 0.9;
  EXPECT_EQ(request_body(e, r)["temperature"], 0.8);
  EXPECT_EQ(request_body(e, r)["top_p"], 0.9);
  e.api = ApiKind::Chat;
  e.ignore_eos = false;
  const json chat = request_body(e, r);
  EXPECT_FALSE(chat.contains("ignore_eos"));
  ASSERT_EQ(chat["messages"].size(), 2u);
  EXPECT_EQ(chat["messages"][0]["role"], "system");
  EXPECT_EQ(chat["messages"][1]["content"], "user words");
  EXPECT_EQ(request_body(e, RequestSpec{"", "only", 1, 1})["messages"].size(), 1u);
}

TEST(LoadgenOpenAi, ParsesEndpointsAndBaseUrls) {
  EXPECT_EQ(parse_api_kind("chat"), ApiKind::Chat);
  EXPECT_EQ(parse_api_kind("/v1/completions"), ApiKind::Completions);
  EXPECT_EQ(api_path(ApiKind::Chat), "/v1/chat/completions");
  EXPECT_THROW(parse_api_kind("embeddings"), Error);
  const BaseUrl plain = parse_base_url("http://127.0.0.1:8080");
  EXPECT_EQ(plain.scheme_host_port, "http://127.0.0.1:8080");
  EXPECT_EQ(plain.path_prefix, "");
  const BaseUrl prefixed = parse_base_url("https://example.org/llm/");
  EXPECT_EQ(prefixed.scheme_host_port, "https://example.org");
  EXPECT_EQ(prefixed.path_prefix, "/llm");
  EXPECT_THROW(parse_base_url("localhost:8080"), Error);
  EXPECT_THROW(parse_base_url("http:///v1"), Error);
}

}  // namespace
}  // namespace ridge::loadgen
