// libFuzzer target for what an embedding model's directory holds (see fuzz/README.md). Byte 0 (% 4):
//   0: a tokenizer.json (the rest, written to a temporary file; WordPieceTokenizer::from_tokenizer_json);
//      when it loads, a fixed text is encoded: every id must lie in the vocabulary, truncation to 4
//      tokens must hold, decode must not fail;
//   1: text through a small fixed WordPiece tokenizer (tests/tokenizer/tiny_wordpiece.h): every id in the vocabulary, encode with
//      max_tokens n gives at most n ids, a pair truncated to 8 gives at most 8 ids and as many type ids;
//   2: a sentence-transformers pipeline (the rest as modules.json, 1_Pooling/config.json and
//      config_sentence_transformers.json: three JSON texts split at NUL bytes; read_embedding_pipeline);
//   3: a SentencePiece tokenizer.model (protobuf; parse_sentencepiece_model): when it parses, a
//      Tokenizer over it encodes a fixed text with every id in the vocabulary.
// ridge::Error is the expected failure; anything else escaping aborts.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "embed/st_pipeline.h"
#include "fuzz_common.h"
#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/tiny_wordpiece.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"
#include "tokenizer/wordpiece.h"

namespace {

using ridge::fuzz::check;
namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ridge-embed-fuzz-" + std::to_string(getpid()));
    fs::create_directories(d / "1_Pooling");
    return d;
  }();
  return dir;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  check(bool(out));
}

void check_ids(const ridge::WordPieceTokenizer& t, const std::vector<int32_t>& ids) {
  for (int32_t id : ids) check(id >= 0 && id < t.n_vocab());
}

void exercise(const ridge::WordPieceTokenizer& t, std::string_view text) {
  const std::vector<int32_t> ids = t.encode(text, true);
  check_ids(t, ids);
  for (int64_t n : {4, 7}) {
    const std::vector<int32_t> cut = t.encode(text, true, n);
    check(int64_t(cut.size()) <= n);
    check_ids(t, cut);
  }
  std::vector<int32_t> pair, types;
  t.encode_pair(text, text.substr(text.size() / 2), 8, pair, types);
  check(pair.size() <= 8 && pair.size() == types.size());
  check_ids(t, pair);
  (void)t.decode(ids);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        write_file(scratch() / "tokenizer.json", rest);
        const auto t = ridge::WordPieceTokenizer::from_tokenizer_json((scratch() / "tokenizer.json").string());
        exercise(t, "The quick brown fox, naïve café [SEP] 中文.");
        ridge::fuzz::accepted("tokenizer.json");
        break;
      }
      case 1: {
        static const ridge::WordPieceTokenizer tiny = [] {
          write_file(scratch() / "tiny.json", ridge::testing::tokenizer_json());
          return ridge::WordPieceTokenizer::from_tokenizer_json((scratch() / "tiny.json").string());
        }();
        exercise(tiny, rest);
        ridge::fuzz::accepted("text");
        break;
      }
      case 3: {
        auto vocab = std::make_shared<ridge::Vocab>(ridge::parse_sentencepiece_model(
            {reinterpret_cast<const uint8_t*>(rest.data()), rest.size()}, "fuzz"));
        const ridge::Tokenizer t(vocab);
        for (int32_t id : t.encode("Hello world, naïve 中文 <bos>", true, true)) check(id >= 0 && id < t.n_vocab());
        ridge::fuzz::accepted("tokenizer.model");
        break;
      }
      default: {
        std::vector<std::string_view> parts{rest};
        for (int i = 0; i < 2; ++i) {
          const size_t nul = parts.back().find('\0');
          if (nul == std::string_view::npos) break;
          const std::string_view tail = parts.back().substr(nul + 1);
          parts.back() = parts.back().substr(0, nul);
          parts.push_back(tail);
        }
        parts.resize(3);
        write_file(scratch() / "modules.json", parts[0]);
        write_file(scratch() / "1_Pooling" / "config.json", parts[1]);
        write_file(scratch() / "config_sentence_transformers.json", parts[2]);
        const ridge::EmbeddingPipeline p = ridge::read_embedding_pipeline(scratch().string(), 16);
        check(p.output_dim(16) > 0);
        ridge::fuzz::accepted("pipeline");
        break;
      }
    }
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  return 0;
}
