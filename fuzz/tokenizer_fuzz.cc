// libFuzzer target for the tokenizers (see fuzz/README.md): arbitrary bytes through BPE (each
// pre-tokenizer) and SentencePiece encoding, then back.
// Input: byte 0: bit 0: SPM (else byte-level BPE); bits 1-3: the BPE pre-tokenizer (% 5); bit 4:
// ignore_merges; bit 5: parse special tokens; the rest is the text. Every id must lie in the
// vocabulary; for valid UTF-8 the text must come back exactly (SPM: after its space prefix; with
// special tokens parsed, up to where that prefix went), and a
// StreamingDecoder fed the ids one by one must give the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tokenizer/tiny_vocabs.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

using ridge::fuzz::check;

const ridge::Tokenizer& tokenizer(bool spm, int pre, bool ignore_merges) {
  static std::vector<ridge::Tokenizer> all = [] {
    std::vector<ridge::Tokenizer> out;
    out.emplace_back(ridge::testing::tiny_spm_vocab());
    for (int p = 0; p < 5; ++p)
      for (bool ignore : {false, true}) {
        auto v = ridge::testing::tiny_bpe_vocab();
        v->pre.type = static_cast<ridge::PreTokenizerType>(p);
        v->pre.ignore_merges = ignore;
        out.emplace_back(v);
      }
    return out;
  }();
  return spm ? all[0] : all[size_t(1 + 2 * pre + (ignore_merges ? 1 : 0))];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const bool spm = flags & 1;
  const bool parse_special = flags & 32;
  const ridge::Tokenizer& tok = tokenizer(spm, (flags >> 1 & 7) % 5, flags & 16);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<int32_t> ids = tok.encode(text, false, parse_special);
  for (int32_t id : ids) check(id >= 0 && id < tok.n_vocab());
  const std::string back = tok.decode(ids);
  ridge::StreamingDecoder stream(tok);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.push(id);
  streamed += stream.flush();
  if (ridge::utf8::sanitize(text) != text) {  // invalid UTF-8: encoded leniently, no round trip promised
    ridge::fuzz::accepted("invalid UTF-8");
    return 0;
  }
  std::string original(text);
  if (spm) {  // SentencePiece writes spaces as U+2581 and decodes U+2581 as a space, the text's own too
    for (size_t at; (at = original.find("\xE2\x96\x81")) != std::string::npos;) original.replace(at, 3, " ");
  }
  if (spm && parse_special) {
    // The space prefix goes before the first piece of text, which may follow a special token
    // ("<s>hello" -> "<s> hello", as llama.cpp does): compare without spaces.
    auto spaceless = [](std::string_view s) {
      std::string out;
      for (char c : s)
        if (c != ' ') out += c;
      return out;
    };
    check(spaceless(back) == spaceless(original));
  } else {
    check(back == (spm && !text.empty() ? " " + original : original));
  }
  check(streamed == back);
  ridge::fuzz::accepted(spm ? "spm round trip" : "bpe round trip");
  return 0;
}
