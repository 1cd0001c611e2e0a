#pragma once
// A small tokenizer.json in all-MiniLM-L6-v2's shape over a hand-built WordPiece vocabulary, for the
// tokenizer's unit tests and the embedding files' fuzz target.
#include <string>
#include <vector>

namespace ridge::testing {

inline const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "want", "##ed",     // 0-9
    "run",   "##n",   "##ing", "##ning", ",",     ".",  "!",     "[",      "]",    "cafe",    // 10-19
    "中",    "文",    "hello", "world", "a",     "##a", "'",     "s",      "do",   "ß",       // 20-29
    "mytoken"};                                                                                // 30

inline std::string added(int id, const std::string& content, bool special, const std::string& extra = "") {
  return R"({"id": )" + std::to_string(id) + R"(, "content": ")" + content + R"(", "special": )" +
         (special ? "true" : "false") + R"(, "normalized": )" + (special ? "false" : "true") +
         R"(, "lstrip": false, "rstrip": false, "single_word": false)" + extra + "}";
}

// tokenizer.json as all-MiniLM-L6-v2 has it, over kVocab; `model_type` to test the errors.
inline std::string tokenizer_json(const std::string& model_type = "WordPiece") {
  std::string vocab;
  for (size_t i = 0; i < kVocab.size(); ++i) vocab += (i ? ", \"" : "\"") + kVocab[i] + "\": " + std::to_string(i);
  return R"({"version": "1.0", "truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0},
  "added_tokens": [)" + added(0, "[PAD]", true) + ", " + added(1, "[UNK]", true) + ", " +
         added(2, "[CLS]", true) + ", " + added(3, "[SEP]", true) + ", " +
         added(4, "[MASK]", true, R"(, "lstrip": true)") + ", " +
         added(31, "MyToken", false) + R"(],
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null,
                 "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                       "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {"type": ")" + model_type + R"(", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": {)" + vocab + "}}}";
}

}  // namespace ridge::testing
