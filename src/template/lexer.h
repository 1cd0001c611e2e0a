#pragma once
// Splitting a Jinja template into tokens the way jinja2's lexer does with the settings Hugging Face's
// chat templates are rendered under (trim_blocks, lstrip_blocks, keep_trailing_newline off):
// text between tags, `{{ }}` / `{% %}` with their expression tokens, `{# #}` dropped, `-` and `+`
// whitespace control applied to the neighbouring text.
#include <string>
#include <string_view>
#include <vector>

namespace ridge::tmpl {

enum class TokenKind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, Int, Float, String, Op, Eof };

struct Token {
  TokenKind kind;
  std::string text;  // Text: the text; Name/Op: the spelling; String: the decoded value; numbers: digits
  int line = 1;
};

std::vector<Token> tokenize(std::string_view source);

}  // namespace ridge::tmpl
