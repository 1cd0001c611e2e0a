// tokenizer.json decoders: each step maps the list of token strings to a new list, as tokenizers'
// decode_chain does; the decoded text is the final list joined.
#include "tokenizer/byte_encoding.h"
#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/spm.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {

namespace {

// "<0xXX>" -> the byte; -1 otherwise.
int byte_token_value(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Bytes of a byte-level token; a token with a character outside the byte alphabet stays as it is.
std::string byte_level_bytes(const std::string& token) {
  std::string out;
  for (size_t offset = 0; offset < token.size();) {
    const auto byte = byte_encoding::codepoint_to_byte(utf8::decode_lenient(token, offset));
    if (!byte) return token;
    out.push_back(static_cast<char>(*byte));
  }
  return out;
}

std::vector<std::string> byte_fallback(std::vector<std::string> tokens, bool raw) {
  std::vector<std::string> out;
  std::string bytes;
  size_t byte_count = 0;
  auto flush = [&] {
    if (byte_count == 0) return;
    if (raw || utf8::sanitize(bytes) == bytes) out.push_back(bytes);
    else for (size_t i = 0; i < byte_count; ++i) out.push_back("\xEF\xBF\xBD");
    bytes.clear();
    byte_count = 0;
  };
  for (std::string& token : tokens) {
    if (const int value = byte_token_value(token); value >= 0) {
      bytes.push_back(static_cast<char>(value));
      ++byte_count;
      continue;
    }
    flush();
    out.push_back(std::move(token));
  }
  flush();
  return out;
}

std::string strip(const std::string& token, const std::string& content, size_t start, size_t stop) {
  std::vector<uint32_t> cpts = utf8::decode_all_lenient(token);
  const std::vector<uint32_t> c = utf8::decode_all_lenient(content);
  if (c.size() != 1) return token;
  size_t begin = 0, end = cpts.size();
  while (begin < std::min(start, cpts.size()) && cpts[begin] == c[0]) ++begin;
  for (size_t i = 0; i < stop && end > begin && cpts[end - 1] == c[0]; ++i) --end;
  std::string out;
  for (size_t i = begin; i < end; ++i) utf8::append(out, cpts[i]);
  return out;
}

std::string wordpiece_cleanup(std::string s) {
  for (const auto& [from, to] : std::initializer_list<std::pair<const char*, const char*>>{
           {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"},
           {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}})
    s = replace_all(s, from, to);
  return s;
}

// stream: one token as it continues a text (no first-token rules, bytes left unfinished).
void decode_step(const DecoderStep& step, std::vector<std::string>& tokens, bool stream) {
  switch (step.kind) {
    case DecoderStep::kByteLevel: {
      std::string bytes;
      for (const std::string& t : tokens) bytes += byte_level_bytes(t);
      tokens = {stream ? bytes : utf8::sanitize(bytes)};
      break;
    }
    case DecoderStep::kMetaspace:
      for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = replace_all(tokens[i], step.from, i == 0 && step.prepend && !stream ? "" : " ");
      break;
    case DecoderStep::kByteFallback: tokens = byte_fallback(std::move(tokens), stream); break;
    case DecoderStep::kFuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens = {std::move(all)};
      break;
    }
    case DecoderStep::kStrip:
      if (stream) break;  // it trims the text's ends, which a token in a stream is not
      for (std::string& t : tokens) t = strip(t, step.content, step.start, step.stop);
      break;
    case DecoderStep::kReplace:
      for (std::string& t : tokens) t = replace_all(t, step.from, step.to);
      break;
    case DecoderStep::kWordPiece:
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (i != 0 || stream) {
          if (tokens[i].starts_with(step.prefix)) tokens[i].erase(0, step.prefix.size());
          else tokens[i] = " " + tokens[i];
        }
        if (step.cleanup) tokens[i] = wordpiece_cleanup(std::move(tokens[i]));
      }
      break;
  }
}

}  // namespace

std::vector<std::string> decode_chain(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens,
                                      bool stream) {
  for (const DecoderStep& step : steps) decode_step(step, tokens, stream);
  return tokens;
}

}  // namespace ridge::hf
