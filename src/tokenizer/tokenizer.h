#pragma once
// Text <-> token ids for a model, built from the vocabulary in its GGUF metadata. Encoding
// matches llama.cpp token for token: byte-level BPE with the pre-tokenizer named by
// `tokenizer.ggml.pre` (tokenizer.ggml.model = "gpt2"), or SentencePiece-style BPE
// (tokenizer.ggml.model = "llama").
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

namespace gguf {
class GgufFile;
}
struct Vocab;
namespace hf {
struct Pipeline;
}

class Tokenizer {
 public:
  // Error with a clear message for an unsupported tokenizer model or pre-tokenizer.
  static Tokenizer from_gguf(const gguf::GgufFile& file);
  explicit Tokenizer(std::shared_ptr<const Vocab> vocab);
  // A Hugging Face tokenizer directory: tokenizer.json (encoded as the `tokenizers` library does),
  // tokenizer_config.json (bos/eos tokens, add_bos/add_eos, chat_template, model_max_length) and
  // generation_config.json (eos_token_id: the ids that end generation). Error naming the file and
  // any model, normalizer, pre-tokenizer, post-processor or decoder ridge does not support.
  static Tokenizer from_hf_dir(const std::string& dir);

  // add_special: add BOS/EOS as the file's add_bos/add_eos flags say.
  // parse_special: text like "<|im_start|>" becomes its control token (user-defined tokens are
  // always recognised, as in llama.cpp).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes a token stands for (byte-level decoded, or SPM "▁" -> " "); special tokens render
  // as their text. May be a fragment of a UTF-8 character.
  std::string token_to_piece(int32_t id) const;
  // Concatenated pieces (no space clean-up); may contain invalid UTF-8 if the ids split a character.
  std::string decode(std::span<const int32_t> ids) const;

  int32_t n_vocab() const;
  int32_t bos_id() const;  // -1 if none
  int32_t eos_id() const;  // -1 if none
  bool add_bos() const;
  bool add_eos() const;
  bool is_end_of_generation(int32_t id) const;  // eos, eot, <|im_end|>, <|eot_id|>, ... as llama.cpp decides
  bool is_special(int32_t id) const;            // control or user-defined
  const std::string& token_text(int32_t id) const;  // raw vocabulary string
  int32_t find_token(std::string_view text) const;  // id of an exact vocabulary string, or -1

  const std::string& model_name() const;  // tokenizer.ggml.model
  const std::string& pre_name() const;    // tokenizer.ggml.pre
  const Vocab& vocab() const { return *vocab_; }
  // From tokenizer_config.json (from_hf_dir only): the chat template ("" when none) and the
  // longest input the model was made for (0 when it does not say).
  const std::string& chat_template() const { return chat_template_; }
  int64_t model_max_length() const { return model_max_length_; }

 private:
  void check_id(int32_t id) const;

  std::shared_ptr<const Vocab> vocab_;
  std::vector<std::string> pieces_;  // token_to_piece by id, computed once
  std::shared_ptr<const hf::Pipeline> hf_;  // set by from_hf_dir: encode and decode as tokenizer.json says
  std::string chat_template_;
  int64_t model_max_length_ = 0;
};

// Streaming decode: returns only complete UTF-8; holds back a partial sequence until the next
// token completes it; flush() emits what is left (invalid bytes as U+FFFD).
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::string push(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;  // bytes of an unfinished character
};

}  // namespace ridge
