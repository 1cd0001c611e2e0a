#include "template/lexer.h"

#include <array>
#include <cctype>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace ridge::tmpl {
namespace {

// jinja2 reads sources with every newline made "\n" and drops one trailing newline.
std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's unicode-escape decoding of a string literal's body; unknown escapes stay as written.
std::string decode_escapes(std::string_view body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    switch (c) {
      case '\n': break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < digits; ++k) {
          const int h = i + 1 + k < body.size() ? hex_value(body[i + 1 + k]) : -1;
          if (h < 0) fail("template line {}: truncated \\{} escape in a string", line, c);
          cp = cp * 16 + uint32_t(h);
        }
        if (cp > 0x10FFFF) fail("template line {}: escape out of range in a string", line);
        utf8::append(out, cp);
        i += digits;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          uint32_t cp = 0;
          size_t k = 0;
          for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k)
            cp = cp * 8 + uint32_t(body[i + k] - '0');
          utf8::append(out, cp);
          i += k - 1;
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  std::vector<Token> run() {
    size_t pos = 0;
    while (pos < src_.size()) {
      const size_t open = find_open(pos);
      std::string text = src_.substr(pos, open - pos);
      if (open == src_.size()) {
        emit_text(std::move(text));
        break;
      }
      const char kind = src_[open + 1];  // '{', '%' or '#'
      const char modifier = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (modifier == '-') {
        while (!text.empty() && is_ws(text.back())) text.pop_back();
      } else if (kind != '{' && modifier != '+') {
        lstrip_line(text, pos);
      }
      emit_text(std::move(text));
      advance_lines(pos, open);
      pos = open + 2 + (modifier == '-' || (modifier == '+' && kind != '{') ? 1 : 0);
      if (kind == '#') {
        pos = skip_comment(pos);
      } else {
        pos = lex_tag(pos, kind == '{');
      }
    }
    tokens_.push_back({TokenKind::Eof, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t find_open(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  // lstrip_blocks: spaces and tabs between a line's start and a block or comment tag go.
  void lstrip_line(std::string& text, size_t text_start) const {
    const size_t nl = text.rfind('\n');
    const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
    const bool at_line_start = nl != std::string::npos || text_start == 0 || src_[text_start - 1] == '\n';
    if (!at_line_start) return;
    for (size_t i = line_start; i < text.size(); ++i)
      if (text[i] != ' ' && text[i] != '\t') return;
    text.resize(line_start);
  }

  void emit_text(std::string text) {
    if (!text.empty()) tokens_.push_back({TokenKind::Text, std::move(text), line_});
  }

  void advance_lines(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) line_ += src_[i] == '\n';
  }

  // After a block or comment: `-` eats all whitespace, else trim_blocks eats one newline.
  size_t after_close(size_t pos, bool strip, bool block_like, bool keep) {
    if (strip) {
      const size_t start = pos;
      while (pos < src_.size() && is_ws(src_[pos])) ++pos;
      advance_lines(start, pos);
    } else if (block_like && !keep && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
      ++line_;
    }
    return pos;
  }

  size_t skip_comment(size_t pos) {
    const size_t close = src_.find("#}", pos);
    if (close == std::string::npos) fail("template line {}: unclosed comment", line_);
    advance_lines(pos, close);
    const bool strip = close > pos && src_[close - 1] == '-';
    return after_close(close + 2, strip, true, false);
  }

  size_t lex_tag(size_t pos, bool variable) {
    const int start_line = line_;
    tokens_.push_back({variable ? TokenKind::VarBegin : TokenKind::BlockBegin, "", line_});
    int depth = 0;
    while (true) {
      while (pos < src_.size() && is_ws(src_[pos])) {
        line_ += src_[pos] == '\n';
        ++pos;
      }
      if (pos >= src_.size()) fail("template line {}: unclosed {} tag", start_line, variable ? "{{" : "{%");
      if (depth == 0) {
        const std::string_view rest(src_.data() + pos, src_.size() - pos);
        const std::string_view close = variable ? "}}" : "%}";
        const bool minus = rest.size() > 2 && (rest[0] == '-' || (!variable && rest[0] == '+')) &&
                           rest.substr(1, 2) == close;
        if (minus || rest.substr(0, 2) == close) {
          tokens_.push_back({variable ? TokenKind::VarEnd : TokenKind::BlockEnd, "", line_});
          const size_t end = pos + 2 + (minus ? 1 : 0);
          return after_close(end, minus && rest[0] == '-', !variable, minus && rest[0] == '+');
        }
      }
      pos = lex_token(pos, depth);
    }
  }

  size_t lex_token(size_t pos, int& depth) {
    const char c = src_[pos];
    if (std::isalpha(uint8_t(c)) || c == '_') {
      size_t end = pos;
      while (end < src_.size() && (std::isalnum(uint8_t(src_[end])) || src_[end] == '_')) ++end;
      tokens_.push_back({TokenKind::Name, src_.substr(pos, end - pos), line_});
      return end;
    }
    if (std::isdigit(uint8_t(c))) return lex_number(pos);
    if (c == '\'' || c == '"') return lex_string(pos);
    static const std::array<std::string_view, 25> kOps = {"**", "//", "==", "!=", ">=", "<=", "+", "-", "/",
                                                          "*",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                                          ">",  "<",  "=",  ".",  ":",  "|",  ","};
    for (auto op : kOps) {
      if (src_.compare(pos, op.size(), op) == 0) {
        if (op == "(" || op == "[" || op == "{") ++depth;
        if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
        tokens_.push_back({TokenKind::Op, std::string(op), line_});
        return pos + op.size();
      }
    }
    fail("template line {}: unexpected character '{}'", line_, c);
  }

  size_t lex_number(size_t pos) {
    size_t end = pos;
    auto digits = [&] {
      while (end < src_.size() && (std::isdigit(uint8_t(src_[end])) || src_[end] == '_')) ++end;
    };
    digits();
    bool is_float = false;
    if (end + 1 < src_.size() && src_[end] == '.' && std::isdigit(uint8_t(src_[end + 1]))) {
      is_float = true;
      ++end;
      digits();
    }
    if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t e = end + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && std::isdigit(uint8_t(src_[e]))) {
        is_float = true;
        end = e;
        digits();
      }
    }
    std::string text;
    for (size_t i = pos; i < end; ++i)
      if (src_[i] != '_') text += src_[i];
    tokens_.push_back({is_float ? TokenKind::Float : TokenKind::Int, text, line_});
    return end;
  }

  size_t lex_string(size_t pos) {
    const char quote = src_[pos];
    const int start_line = line_;
    size_t i = pos + 1;
    while (i < src_.size() && src_[i] != quote) {
      if (src_[i] == '\\') ++i;
      if (i < src_.size() && src_[i] == '\n') ++line_;
      ++i;
    }
    if (i >= src_.size()) fail("template line {}: unclosed string", start_line);
    tokens_.push_back(
        {TokenKind::String, decode_escapes(std::string_view(src_).substr(pos + 1, i - pos - 1), start_line),
         start_line});
    return i + 1;
  }

  std::string src_;
  std::vector<Token> tokens_;
  int line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize_newlines(source)).run(); }

}  // namespace ridge::tmpl
