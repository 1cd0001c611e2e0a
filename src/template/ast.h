#pragma once
// The parsed form of a template: expressions and statements as jinja2's parser builds them.
// Nodes are plain structs tagged by kind; the interpreter switches on the kind.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "template/value.h"

namespace ridge::tmpl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
  Literal,      // value
  Name,         // name
  ListLit,      // items (tuple: a tuple literal)
  DictLit,      // items as key, value pairs
  GetAttr,      // object.name
  GetItem,      // object[index]
  Slice,        // object[start:stop:step] (missing parts are null)
  Call,         // callee(args, kwargs)
  Filter,       // object | name(args, kwargs)
  Test,         // object is [not] name(args)
  Unary,        // op in "not", "-", "+"
  Binary,       // left op right
  Conditional,  // then if cond else otherwise
};

struct Expr {
  ExprKind kind;
  int line = 0;
  Value value;                                 // Literal
  std::string name;                            // Name, GetAttr, Filter, Test; Unary/Binary: the operator
  ExprPtr object;                              // GetAttr, GetItem, Slice, Call callee, Filter, Test, Unary, Binary left
  ExprPtr right;                               // Binary right, GetItem index, Conditional cond
  ExprPtr start, stop, step;                   // Slice; Conditional: start = then, stop = otherwise
  std::vector<ExprPtr> items;                  // ListLit, DictLit (key, value, key, value...), call arguments
  std::vector<std::pair<std::string, ExprPtr>> named;  // keyword arguments
  bool tuple = false;                          // ListLit
  bool negated = false;                        // Test: `is not`
};

enum class StmtKind { Text, Output, If, For, Set, SetBlock, Macro, Break, Continue, FilterBlock, Generation };

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;                   // Text
  ExprPtr expr;                       // Output, Set value, For iterable, FilterBlock/SetBlock filter chain
  std::vector<std::pair<ExprPtr, Body>> branches;  // If: conditions and bodies
  Body body;                          // For, SetBlock, Macro, FilterBlock, Generation
  Body else_body;                     // If, For
  std::vector<std::string> targets;   // For loop variables, Set names (several: unpacking)
  std::string attribute;              // Set: `set ns.attribute = ...` (targets[0] is ns)
  ExprPtr condition;                  // For: `for x in xs if condition`
  bool recursive = false;             // For
  std::string name;                   // Macro
  std::vector<MacroParam> params;     // Macro
  bool uses_varargs = false;          // Macro: its body reads `varargs` / `kwargs`
  bool uses_kwargs = false;
};

struct ParsedTemplate {
  Body body;
};

}  // namespace ridge::tmpl
