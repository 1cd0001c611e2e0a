#pragma once
// The vocabulary as loaded from GGUF metadata: token strings, scores, attributes, merge ranks,
// special ids and flags. Plain data shared by the BPE and SPM encoders and the decoder.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pre_tokenizer.h"

namespace ridge {

namespace gguf {
class GgufFile;
}

// Bit flags, as llama.cpp's token attributes (derived from tokenizer.ggml.token_type).
enum TokenAttr : uint32_t {
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 7,  // special token swallows whitespace on its left
  kAttrRstrip = 1u << 8,  // ... on its right
};

enum class VocabType { kBpe, kSpm };

// TokenAttr of a token type as GGUF's tokenizer.ggml.token_type and SentencePiece's pieces number
// them (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte); 0 for any other value.
uint32_t token_type_attr(int64_t type);

struct Vocab {
  VocabType type = VocabType::kBpe;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre_name;    // tokenizer.ggml.pre
  PreTokenizerConfig pre;

  std::vector<std::string> text;  // by id
  std::vector<float> score;       // by id (SPM merge priority)
  std::vector<uint32_t> attr;     // by id, TokenAttr bits
  std::unordered_map<std::string, int32_t> id_of;
  std::unordered_map<std::string, int32_t> merge_rank;  // by merge_key(left, right)

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1;
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  std::set<int32_t> end_of_generation;
  std::vector<int32_t> special_longest_first;  // control, user-defined and unknown tokens

  int32_t n_tokens() const { return static_cast<int32_t>(text.size()); }
  int32_t find(const std::string& s) const {
    auto it = id_of.find(s);
    return it == id_of.end() ? -1 : it->second;
  }
  int32_t rank(std::string_view left, std::string_view right) const;
  // For building a vocabulary by hand (tests): append a token; then index the special tokens.
  int32_t add_token(std::string token_text, float token_score = 0.0f, uint32_t token_attr = kAttrNormal);
  void index_special_tokens();

  // Byte fallback token for SPM: <0xXX>, else the byte itself as a token; -1 if neither.
  int32_t byte_token(uint8_t byte) const;
};

// Unambiguous key for a merge pair (token strings may contain spaces).
std::string merge_key(std::string_view left, std::string_view right);

// Error (naming the key) for a missing/ill-typed vocabulary or an unsupported model/pre type.
Vocab load_vocab(const gguf::GgufFile& file);

}  // namespace ridge
