// Randomly damaged tokenizer.json texts (a fixed seed, so failures replay): reading one either fails
// with ridge::Error or gives a pipeline whose ids all lie in its vocabulary and whose decode works.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "tokenizer/hf/hf_pipeline.h"

namespace ridge {
namespace {

// One file per model type, each with the components real files use.
const char* const kSeeds[] = {
    R"({"normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"}]},
"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},
{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}]},
"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"\u0120":3,"<x>":4},"merges":["a b"],"unk_token":null},
"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<x>"}},{"Sequence":{"id":"A"}}],
"special_tokens":{"<x>":{"ids":[4]}}},"decoder":{"type":"ByteLevel"},
"added_tokens":[{"id":4,"content":"<x>","special":true,"lstrip":true}]})",
    R"({"normalizer":{"type":"Replace","pattern":{"String":" "},"content":"\u2581"},
"pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"MergedWithPrevious"},
"model":{"type":"BPE","vocab":{"<unk>":0,"<0x41>":1,"\u2581":2,"a":3,"\u2581a":4},"merges":[["\u2581","a"]],
"unk_token":"<unk>","byte_fallback":true,"fuse_unk":true},
"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"\u2581"},"content":" "},
{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}})",
    R"({"pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"first","split":true},
"model":{"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":[["<unk>",0],["\u2581",-1],["a",-2],["\u2581a",-1.5],["<0x62>",-9]]},
"decoder":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"first"}})",
    R"({"normalizer":{"type":"BertNormalizer"},"pre_tokenizer":{"type":"BertPreTokenizer"},
"model":{"type":"WordPiece","unk_token":"[UNK]","max_input_chars_per_word":5,"vocab":{"[UNK]":0,"[CLS]":1,"a":2,"##b":3}},
"post_processor":{"type":"BertProcessing","cls":["[CLS]",1],"sep":["[CLS]",1]},"decoder":{"type":"WordPiece"}})",
};

std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string kPieces[] = {"{", "}", "[", "]", ",", ":", "\"", "null", "-1", "1e9", "\"type\"", "\\u0000", "\xFF"};
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0: s[at] = char(rng()); break;                                       // flip a byte
      case 1: s.erase(at, 1 + rng() % 8); break;                                // cut
      case 2: s.insert(at, kPieces[rng() % std::size(kPieces)]); break;         // structure
      case 3: s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 16)); break;  // duplicate a stretch
    }
  }
  return s;
}

TEST(HfMutation, DamagedFilesFailCleanlyOrWork) {
  std::mt19937 rng(45);
  int loaded = 0, refused = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = mutate(kSeeds[i % std::size(kSeeds)], rng);
    try {
      const hf::Pipeline t = hf::parse_pipeline(text, "mutated");
      for (const char* input : {"ab a b", "<x> ab", "A\xC3\xA9 12", ""}) {
        const std::vector<int32_t> ids = t.encode(input, true, true);
        for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t.n_tokens()) << text;
        t.decode(ids);
        for (int32_t id : ids) t.piece(id);
      }
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(loaded, 50);   // the damage leaves many files loadable: the checks above ran
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace ridge
