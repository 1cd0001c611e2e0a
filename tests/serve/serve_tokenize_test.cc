// POST /tokenize and /detokenize over the scripted backend (prompt text is one token a byte, with a
// BOS of id 1 when special tokens are added (FakeConfig::bos); generated pieces are ids 1000+): vLLM's and llama.cpp's
// field names, chats rendered as the chat endpoint renders them, pieces, errors and the API key.
// (Against the real tokenizer and `ridge tokenize`: tests/conformance/test_openai_api.py.)
#include <gtest/gtest.h>

#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using namespace testing;  // FakeBackend, FakeConfig, TestServer, post_json, test_config

json ok_json(const httplib::Result& r) {
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, 200) << r->body;
  return json::parse(r->body);
}

TEST(ServeTokenize, TextBothSpellingsAndPieces) {
  FakeBackend backend(FakeConfig{.bos = true});
  TestServer server(backend);
  auto client = server.client();
  const json vllm = ok_json(post_json(client, "/tokenize", {{"prompt", "Hi!"}, {"return_token_strs", true}}));
  EXPECT_EQ(vllm["tokens"], json({1, 'H', 'i', '!'}));
  EXPECT_EQ(vllm["count"], 4);
  EXPECT_EQ(vllm["max_model_len"], backend.n_ctx());
  EXPECT_EQ(vllm["token_strs"][1], "H");
  const json llama = ok_json(post_json(client, "/tokenize", {{"content", "Hi!"}, {"add_special", false}}));
  EXPECT_EQ(llama["tokens"], json({'H', 'i', '!'}));
  EXPECT_FALSE(llama.contains("token_strs"));
  EXPECT_EQ(ok_json(post_json(client, "/tokenize", {{"prompt", "Hi"}, {"add_special_tokens", false}}))["count"], 2);
}

TEST(ServeTokenize, AChatIsRenderedAsTheChatEndpointRendersIt) {
  FakeBackend backend(FakeConfig{.bos = true});
  TestServer server(backend);
  auto client = server.client();
  const json messages = json::array({{{"role", "user"}, {"content", "yo"}}});
  const json r = ok_json(post_json(client, "/tokenize", {{"messages", messages}}));
  const std::string rendered = "<user>yo\n<assistant>";
  json want = json::array({1});
  for (char c : rendered) want.push_back(int(c));
  EXPECT_EQ(r["tokens"], want);
}

TEST(ServeTokenize, DetokenizeRoundTripsAndRefusesForeignIds) {
  FakeBackend backend(FakeConfig{.bos = true});
  TestServer server(backend);
  auto client = server.client();
  const json r = ok_json(post_json(client, "/detokenize", {{"tokens", {'o', 'k'}}}));
  EXPECT_EQ(r["prompt"], "ok");
  EXPECT_EQ(r["content"], "ok");
  for (const json& bad : {json{{"tokens", {-1}}}, json{{"tokens", {backend.n_vocab()}}}, json{{"tokens", "12"}},
                          json{{"tokens", {1.5}}}, json::object()}) {
    auto res = post_json(client, "/detokenize", bad);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad.dump();
    EXPECT_EQ(json::parse(res->body)["error"]["param"], "tokens") << res->body;
  }
  for (const json& bad : {json{{"prompt", 3}}, json::object(), json{{"prompt", "x"}, {"with_pieces", "yes"}}}) {
    auto res = post_json(client, "/tokenize", bad);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad.dump();
  }
  auto res = client.Post("/tokenize", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST(ServeTokenize, TheApiKeyGuardsThem) {
  FakeBackend backend(FakeConfig{.bos = true});
  ServerConfig config = testing::test_config();
  config.api_key = "sekrit";
  TestServer server(backend, config);
  auto client = server.client();
  for (const char* path : {"/tokenize", "/detokenize"}) {
    auto res = post_json(client, path, {{"prompt", "x"}, {"tokens", {1}}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401) << path;
    res = post_json(client, path, {{"prompt", "x"}, {"tokens", {1}}}, {{"Authorization", "Bearer sekrit"}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << path << " " << res->body;
  }
}

}  // namespace
}  // namespace ridge
