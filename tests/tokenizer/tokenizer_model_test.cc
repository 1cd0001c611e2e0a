// The tokenizer of the default model (SmolLM2, byte-level BPE, "smollm" pre-tokenizer), and
// error messages for files it cannot handle.
#include <gtest/gtest.h>

#include <filesystem>

#include "../model/gguf_test_builder.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

namespace {

const Tokenizer* default_tokenizer() {
  static const std::unique_ptr<Tokenizer> tok = [] {
    const std::string path = models_dir() + "/" + kDefaultModelFile;
    if (!std::filesystem::exists(path)) return std::unique_ptr<Tokenizer>();
    const auto file = gguf::GgufFile::open(path);
    return std::make_unique<Tokenizer>(Tokenizer::from_gguf(file));
  }();
  return tok.get();
}

}  // namespace

TEST(DefaultModelTokenizer, KnownIds) {
  const Tokenizer* tok = default_tokenizer();
  if (!tok) GTEST_SKIP() << "default model not downloaded";
  EXPECT_EQ(tok->n_vocab(), 49152);
  EXPECT_EQ(tok->encode("Hello world", true, true), (std::vector<int32_t>{19556, 905}));
  EXPECT_EQ(tok->encode("<|im_start|>user", true, true), (std::vector<int32_t>{1, 4093}));
  EXPECT_NE(tok->encode("<|im_start|>user", true, false)[0], 1);
  EXPECT_FALSE(tok->add_bos());
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
}

TEST(DefaultModelTokenizer, EndOfGeneration) {
  const Tokenizer* tok = default_tokenizer();
  if (!tok) GTEST_SKIP() << "default model not downloaded";
  EXPECT_TRUE(tok->is_end_of_generation(tok->find_token("<|im_end|>")));
  EXPECT_TRUE(tok->is_end_of_generation(tok->find_token("<|endoftext|>")));
  EXPECT_FALSE(tok->is_end_of_generation(tok->find_token("<|im_start|>")));
  EXPECT_TRUE(tok->is_special(tok->find_token("<|im_start|>")));
}

TEST(DefaultModelTokenizer, PiecesAndRoundTrip) {
  const Tokenizer* tok = default_tokenizer();
  if (!tok) GTEST_SKIP() << "default model not downloaded";
  EXPECT_EQ(tok->token_to_piece(905), " world");
  EXPECT_EQ(tok->token_to_piece(1), "<|im_start|>");
  const std::string text = "Grüße aus 東京 🙂\n\tint x = 42;";
  EXPECT_EQ(tok->decode(tok->encode(text, false, false)), text);
}

namespace {

gguf::GgufFile vocab_file(gguf::testing::GgufBuilder& b, const std::string& model, const std::string& pre) {
  b.header(0, 3).kv_str("tokenizer.ggml.model", model).kv_str("tokenizer.ggml.pre", pre);
  // tokenizer.ggml.tokens: array of 1 string
  b.str("tokenizer.ggml.tokens").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(1).str("a");
  return gguf::GgufFile::parse(b.bytes);
}

std::string error_of(const gguf::GgufFile& file) {
  try {
    Tokenizer::from_gguf(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TokenizerErrors, NameTheUnsupportedModelOrPre) {
  gguf::testing::GgufBuilder a, b;
  EXPECT_NE(error_of(vocab_file(a, "gpt2", "no-such-pre")).find("pre-tokenizer 'no-such-pre'"), std::string::npos);
  EXPECT_NE(error_of(vocab_file(b, "bert", "")).find("tokenizer model 'bert'"), std::string::npos);
}

}  // namespace ridge
