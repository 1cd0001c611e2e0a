#include "template/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "template/builtins.h"
#include "template/lexer.h"

namespace ridge::tmpl {
namespace {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ParseLimits& limits) : tokens_(std::move(tokens)), limits_(limits) {}

  ParsedTemplate run() {
    ParsedTemplate out;
    std::string end;
    out.body = subparse({}, end);
    return out;
  }

 private:
  // Guards recursion: templates nested past the limit are refused instead of exhausting the stack.
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > p.limits_.max_depth)
        fail("template line {}: nested deeper than {} levels", p.cur().line, p.limits_.max_depth);
    }
    ~DepthGuard() { --p.depth_; }
  };

  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(size_t n = 1) const { return tokens_[std::min(pos_ + n, tokens_.size() - 1)]; }
  void next() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool is_op(std::string_view op) const { return cur().kind == TokenKind::Op && cur().text == op; }
  bool is_name(std::string_view name) const { return cur().kind == TokenKind::Name && cur().text == name; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void unexpected(std::string_view wanted) const {
    const Token& t = cur();
    const std::string got = t.kind == TokenKind::Eof        ? "end of template"
                            : t.kind == TokenKind::BlockEnd ? "end of statement block"
                            : t.kind == TokenKind::VarEnd   ? "end of print statement"
                                                            : "'" + t.text + "'";
    fail("template line {}: expected {}, got {}", t.line, wanted, got);
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) unexpected(fmt::format("'{}'", op));
  }
  std::string expect_name() {
    if (cur().kind != TokenKind::Name) unexpected("a name");
    std::string name = cur().text;
    next();
    return name;
  }
  void expect_block_end() {
    if (cur().kind != TokenKind::BlockEnd) unexpected("end of statement block");
    next();
  }

  ExprPtr node(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // Statements up to one of `ends` (a block tag name); `found` is the end tag met (its name is consumed).
  Body subparse(const std::vector<std::string_view>& ends, std::string& found) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.kind == TokenKind::Eof) {
        if (!ends.empty()) fail("template: unexpected end of template, expected '{}'", ends.front());
        return body;
      }
      if (t.kind == TokenKind::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Text;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.kind == TokenKind::VarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Output;
        s->line = t.line;
        s->expr = parse_tuple(true);
        if (cur().kind != TokenKind::VarEnd) unexpected("end of print statement");
        next();
        body.push_back(std::move(s));
      } else if (t.kind == TokenKind::BlockBegin) {
        next();
        if (cur().kind != TokenKind::Name) unexpected("a statement name");
        const std::string tag = cur().text;
        if (std::find(ends.begin(), ends.end(), tag) != ends.end()) {
          next();
          found = tag;
          return body;
        }
        body.push_back(parse_statement());
      } else {
        unexpected("text or a tag");
      }
    }
  }

  StmtPtr parse_statement() {
    const int line = cur().line;
    const std::string tag = cur().text;
    next();
    auto s = std::make_unique<Stmt>();
    s->line = line;
    std::string end;
    if (tag == "if") {
      s->kind = StmtKind::If;
      while (true) {
        ExprPtr cond = parse_tuple(false);
        expect_block_end();
        Body branch = subparse({"elif", "else", "endif"}, end);
        s->branches.emplace_back(std::move(cond), std::move(branch));
        if (end == "elif") continue;
        if (end == "else") {
          expect_block_end();
          s->else_body = subparse({"endif"}, end);
        }
        break;
      }
    } else if (tag == "for") {
      s->kind = StmtKind::For;
      s->targets = parse_targets();
      if (!skip_name("in")) unexpected("'in'");
      s->expr = parse_tuple(false);
      if (skip_name("if")) s->condition = parse_expression(true);
      s->recursive = skip_name("recursive");
      if (s->recursive) fail("template line {}: recursive loops are not supported", line);
      expect_block_end();
      ++loop_depth_;
      s->body = subparse({"endfor", "else"}, end);
      --loop_depth_;
      if (end == "else") {
        expect_block_end();
        s->else_body = subparse({"endfor"}, end);
      }
    } else if (tag == "set") {
      parse_set(*s);
      return s;
    } else if (tag == "macro") {
      parse_macro(*s);
      return s;
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail("template line {}: '{}' outside a loop", line, tag);
      s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
    } else if (tag == "filter") {
      s->kind = StmtKind::FilterBlock;
      s->expr = parse_filter_chain(line);
      expect_block_end();
      s->body = subparse({"endfilter"}, end);
    } else if (tag == "generation") {
      s->kind = StmtKind::Generation;
      expect_block_end();
      s->body = subparse({"endgeneration"}, end);
    } else {
      static const std::set<std::string> kKnown = {"extends", "include", "import", "from", "block", "call",
                                                   "with", "raw", "do", "autoescape", "trans"};
      if (kKnown.count(tag)) fail("template line {}: '{{% {} %}}' is not supported", line, tag);
      fail("template line {}: unknown tag '{}'", line, tag);
    }
    expect_block_end();
    return s;
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      if (cur().kind == TokenKind::Name && (is_name("in") || is_name("recursive"))) break;
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    if (names.empty()) unexpected("a loop variable");
    return names;
  }

  void parse_set(Stmt& s) {
    std::string first = expect_name();
    if (skip_op(".")) {
      s.attribute = expect_name();
      s.targets = {first};
    } else {
      s.targets = {first};
      while (skip_op(",")) {
        if (cur().kind != TokenKind::Name) break;
        s.targets.push_back(expect_name());
      }
    }
    if (skip_op("=")) {
      s.kind = StmtKind::Set;
      s.expr = parse_tuple(true);
      expect_block_end();
      return;
    }
    if (!s.attribute.empty() || s.targets.size() != 1) unexpected("'='");
    s.kind = StmtKind::SetBlock;
    if (is_op("|")) s.expr = parse_filter_chain(s.line, true);
    expect_block_end();
    std::string end;
    s.body = subparse({"endset"}, end);
    expect_block_end();
  }

  // `{% filter a|b(x) %}` / `{% set x | a %}`: filters applied to the body, held as a chain over the
  // name "caller" that the interpreter binds to the rendered body.
  ExprPtr parse_filter_chain(int line, bool leading_pipe = false) {
    ExprPtr chain = node(ExprKind::Name, line);
    chain->name = "caller";
    if (!leading_pipe) chain = parse_filter(std::move(chain));
    while (is_op("|")) {
      next();
      chain = parse_filter(std::move(chain));
    }
    return chain;
  }

  void parse_macro(Stmt& s) {
    s.kind = StmtKind::Macro;
    s.name = expect_name();
    expect_op("(");
    while (!is_op(")")) {
      MacroParam p;
      p.name = expect_name();
      if (skip_op("=")) p.default_value = parse_expression(true);
      s.params.push_back(std::move(p));
      if (!skip_op(",")) break;
    }
    expect_op(")");
    expect_block_end();
    macro_flags_.push_back({false, false});
    std::string end;
    s.body = subparse({"endmacro"}, end);
    s.uses_varargs = macro_flags_.back().first;
    s.uses_kwargs = macro_flags_.back().second;
    macro_flags_.pop_back();
    expect_block_end();
  }

  // An expression, or several separated by commas (a tuple, as in `{% set a, b = 1, 2 %}`).
  ExprPtr parse_tuple(bool with_condexpr, bool explicit_parens = false) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool comma = false;
    while (true) {
      if (!items.empty()) {
        if (!skip_op(",")) break;
        comma = true;
      }
      if (is_tuple_end()) break;
      items.push_back(parse_expression(with_condexpr));
    }
    if (!comma && items.size() == 1) return std::move(items[0]);
    if (items.empty() && !explicit_parens) unexpected("an expression");
    auto e = node(ExprKind::ListLit, line);
    e->items = std::move(items);
    e->tuple = true;
    return e;
  }

  bool is_tuple_end() const {
    return cur().kind == TokenKind::VarEnd || cur().kind == TokenKind::BlockEnd || cur().kind == TokenKind::Eof ||
           is_op(")") || is_name("in") || is_name("if") || is_name("recursive");
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard guard(*this);
    if (!with_condexpr) return parse_or();
    ExprPtr expr = parse_or();
    while (is_name("if")) {
      const int line = cur().line;
      next();
      auto c = node(ExprKind::Conditional, line);
      c->right = parse_or();
      c->start = std::move(expr);
      if (skip_name("else")) c->stop = parse_expression(true);
      expr = std::move(c);
    }
    return expr;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    auto e = node(ExprKind::Binary, line);
    e->name = std::move(op);
    e->object = std::move(left);
    e->right = std::move(right);
    return e;
  }

  // One level of left-associative operators: `ops` are operator tokens, or keywords when `keywords`.
  using Level = ExprPtr (Parser::*)();
  ExprPtr parse_level(std::initializer_list<std::string_view> ops, bool keywords, Level operand) {
    ExprPtr left = (this->*operand)();
    while (true) {
      const auto it = std::find_if(ops.begin(), ops.end(),
                                   [&](std::string_view op) { return keywords ? is_name(op) : is_op(op); });
      if (it == ops.end()) return left;
      const int line = cur().line;
      next();
      left = binary(std::string(*it), std::move(left), (this->*operand)(), line);
    }
  }

  ExprPtr parse_or() { return parse_level({"or"}, true, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_level({"and"}, true, &Parser::parse_not); }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      auto e = node(ExprKind::Unary, cur().line);
      next();
      e->name = "not";
      e->object = parse_not();
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr left = parse_math1();
    while (true) {
      const int line = cur().line;
      std::string op;
      if (cur().kind == TokenKind::Op &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">="))) {
        op = cur().text;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && peek().kind == TokenKind::Name && peek().text == "in") {
        op = "not in";
        next();
        next();
      } else {
        return left;
      }
      left = binary(op, std::move(left), parse_math1(), line);
    }
  }

  // jinja2's precedence: `~` binds tighter than + and -, looser than * / // %.
  ExprPtr parse_math1() { return parse_level({"+", "-"}, false, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_level({"~"}, false, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_level({"*", "//", "/", "%"}, false, &Parser::parse_pow); }

  ExprPtr parse_pow() { return parse_level({"**"}, false, &Parser::parse_operand); }
  ExprPtr parse_operand() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      e = node(ExprKind::Unary, cur().line);
      e->name = cur().text;
      next();
      e->object = parse_unary(false);
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    const int line = t.line;
    if (t.kind == TokenKind::Name) {
      auto e = node(ExprKind::Literal, line);
      const std::string& n = t.text;
      if (n == "true" || n == "True") {
        e->value = Value(true);
      } else if (n == "false" || n == "False") {
        e->value = Value(false);
      } else if (n == "none" || n == "None") {
        e->value = Value(None{});
      } else {
        e->kind = ExprKind::Name;
        e->name = n;
        if (!macro_flags_.empty() && n == "varargs") macro_flags_.back().first = true;
        if (!macro_flags_.empty() && n == "kwargs") macro_flags_.back().second = true;
      }
      next();
      return e;
    }
    if (t.kind == TokenKind::String) {
      std::string s;
      while (cur().kind == TokenKind::String) {  // adjacent literals join, as in Python
        s += cur().text;
        next();
      }
      auto e = node(ExprKind::Literal, line);
      e->value = Value(std::move(s));
      return e;
    }
    if (t.kind == TokenKind::Int) {
      int64_t v = 0;
      const auto res = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (res.ec != std::errc()) fail("template line {}: integer literal {} is too large", line, t.text);
      auto e = node(ExprKind::Literal, line);
      e->value = Value(v);
      next();
      return e;
    }
    if (t.kind == TokenKind::Float) {
      auto e = node(ExprKind::Literal, line);
      e->value = Value(std::strtod(t.text.c_str(), nullptr));  // out of range: inf, as Python reads it
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      ExprPtr e = parse_tuple(true, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      next();
      auto e = node(ExprKind::ListLit, line);
      while (!is_op("]")) {
        e->items.push_back(parse_expression(true));
        if (!skip_op(",")) break;
      }
      expect_op("]");
      return e;
    }
    if (is_op("{")) {
      next();
      auto e = node(ExprKind::DictLit, line);
      while (!is_op("}")) {
        e->items.push_back(parse_expression(true));
        expect_op(":");
        e->items.push_back(parse_expression(true));
        if (!skip_op(",")) break;
      }
      expect_op("}");
      return e;
    }
    unexpected("an expression");
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        next();
        e = parse_filter(std::move(e));
      } else if (is_name("is")) {
        e = parse_test(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    const int line = cur().line;
    if (skip_op(".")) {
      if (cur().kind == TokenKind::Int) {
        auto e = node(ExprKind::GetItem, line);
        e->object = std::move(object);
        e->right = parse_primary();
        return e;
      }
      auto e = node(ExprKind::GetAttr, line);
      e->object = std::move(object);
      e->name = expect_name();
      return e;
    }
    expect_op("[");
    ExprPtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (skip_op(":")) {
        if (++colons > 2) unexpected("']'");
        continue;
      }
      if (parts[colons]) unexpected("']'");
      parts[colons] = parse_expression(true);
    }
    expect_op("]");
    if (colons == 0) {
      if (!parts[0]) unexpected("an index");
      auto e = node(ExprKind::GetItem, line);
      e->object = std::move(object);
      e->right = std::move(parts[0]);
      return e;
    }
    auto e = node(ExprKind::Slice, line);
    e->object = std::move(object);
    e->start = std::move(parts[0]);
    e->stop = std::move(parts[1]);
    e->step = std::move(parts[2]);
    return e;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) fail("template line {}: '*' and '**' arguments are not supported", cur().line);
      if (cur().kind == TokenKind::Name && peek().kind == TokenKind::Op && peek().text == "=") {
        std::string key = cur().text;
        next();
        next();
        e.named.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e.named.empty()) fail("template line {}: positional argument after a keyword argument", cur().line);
        e.items.push_back(parse_expression(true));
      }
      if (!skip_op(",")) break;
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = node(ExprKind::Call, cur().line);
    e->object = std::move(callee);
    parse_call_args(*e);
    return e;
  }

  ExprPtr parse_filter(ExprPtr object) {
    auto e = node(ExprKind::Filter, cur().line);
    e->name = expect_name();
    if (!has_filter(e->name)) fail("template line {}: no filter named '{}'", e->line, e->name);
    e->object = std::move(object);
    if (is_op("(")) parse_call_args(*e);
    return e;
  }

  ExprPtr parse_test(ExprPtr object) {
    auto e = node(ExprKind::Test, cur().line);
    next();  // "is"
    e->negated = skip_name("not");
    e->name = expect_name();
    if (!has_test(e->name)) fail("template line {}: no test named '{}'", e->line, e->name);
    e->object = std::move(object);
    if (is_op("(")) {
      parse_call_args(*e);
    } else if ((cur().kind == TokenKind::Name || cur().kind == TokenKind::String || cur().kind == TokenKind::Int ||
                cur().kind == TokenKind::Float || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("template line {}: tests cannot be chained with 'is'", cur().line);
      e->items.push_back(parse_postfix(parse_primary()));
    }
    return e;
  }

  std::vector<Token> tokens_;
  ParseLimits limits_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<std::pair<bool, bool>> macro_flags_;
};

}  // namespace

ParsedTemplate parse_template(std::string_view source, const ParseLimits& limits) {
  return Parser(tokenize(source), limits).run();
}

}  // namespace ridge::tmpl
