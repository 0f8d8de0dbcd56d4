// The syntax tree of a Jinja2 template, as jinja2/parser.py builds it, held
// in two arenas (expressions, statements) addressed by index. Names and
// source spans are views into the template.
#ifndef GGUFGUARD_TEMPLATE_AST_H_
#define GGUFGUARD_TEMPLATE_AST_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard::jinja {

using NodeId = int32_t;
constexpr NodeId kNoNode = -1;

enum class ExprKind : uint8_t {
  kName,      // name
  kString,    // text
  kNumber,    // number
  kConst,     // true / false / none (name holds the spelling)
  kList,      // args: elements
  kTuple,     // args: elements
  kDict,      // args: key, value, key, value...
  kGetAttr,   // a.name (name: the attribute as written; `a.0` too)
  kGetItem,   // a[b]
  kSlice,     // a[b:c:d]: a, b, c, d (each may be kNoNode)
  kCall,      // a(args)
  kFilter,    // a | name(args)   (a may be kNoNode: {% filter %} blocks)
  kTest,      // a is [not] name(args)   (negated: `not` was written)
  kConcat,    // args: a ~ b ~ c (n-ary, as Jinja2's Concat)
  kBinary,    // a op b  (name: + - * / // % ** and or in notin == != < <= > >=)
  kUnary,     // op a    (name: - + not)
  kCondExpr,  // a if b else c
};

// An argument of a call, filter or test: positional (name empty), keyword
// (name=value), *args or **kwargs.
struct Arg {
  std::string_view name;
  NodeId value = kNoNode;
  uint8_t star = 0;  // 1: *args, 2: **kwargs
};

// 88 bytes and trivially copyable (issue 31): a 1 MiB template makes
// ~175,000 of them, and the arena's size decides whether malloc hands the
// same pages back from one analysis to the next or maps fresh ones. What a
// few nodes need (a string literal's decoded text) lives beside the arena.
struct Expr {
  ExprKind kind;
  bool negated = false;
  uint32_t text_at = 0;       // kString: its decoded text, text_size bytes at text_at in Program::text_pool
  size_t begin = 0, end = 0;  // source span, for findings
  size_t name_at = 0;         // kGetAttr: where the attribute name is
  std::string_view name;
  NodeId a = kNoNode, b = kNoNode, c = kNoNode, d = kNoNode;
  uint32_t args_begin = 0, args_count = 0;  // into Program::args
  uint32_t depth = 1;  // height of the subtree: what a recursive renderer recurses on
  uint32_t text_size = 0;
  double number = 0;
};

enum class StmtKind : uint8_t {
  kData,        // text (span only)
  kOutput,      // {{ a }}
  kIf,          // a: condition; body; orelse (an elif is a kIf in orelse)
  kFor,         // a: target, b: iterable, c: filter condition; body; orelse; recursive
  kMacro,       // name, params (Arg: name=default); body
  kCallBlock,   // a: the call; params (caller's); body
  kFilterBlock, // a: the filter chain (kFilter with a == kNoNode at its base); body
  kSet,         // a: target, b: value
  kSetBlock,    // a: target, c: optional filter; body
  kWith,        // params (Arg: target name... as targets/values); body
  kInclude,     // a: template name (also extends, import, from: `name` says which)
  kBlock,       // name; body
  kDo,          // a
  kLoopControl, // break / continue
  kScope,       // autoescape, generation and other bodies that only nest
};

struct Stmt {
  StmtKind kind;
  size_t begin = 0;  // offset of the tag or text
  size_t end = 0;
  std::string_view name;
  NodeId a = kNoNode, b = kNoNode, c = kNoNode;
  uint32_t params_begin = 0, params_count = 0;  // into Program::args
  // Targets of {% with %} and {% set a, b = %} live in params as names with
  // value = kNoNode for plain targets.
  // The statements of the body and of the else branch: ranges of
  // Program::bodies (Program::body(), orelse()), not a vector each, so that
  // a template of 30,000 blocks is not 30,000 allocations.
  uint32_t body_begin = 0, body_count = 0;
  uint32_t orelse_begin = 0, orelse_count = 0;
  bool recursive = false;
};

struct Program {
  std::vector<Expr> exprs;
  std::vector<Stmt> stmts;
  std::vector<Arg> args;
  std::vector<NodeId> top;     // statements at the top level
  std::vector<NodeId> bodies;  // every block's statements, by Stmt::body_begin and orelse_begin
  // Decoded string literals (adjacent literals joined), one after the
  // other. Decoding never lengthens a literal, so this is at most the
  // template's size.
  std::string text_pool;

  const Expr& expr(NodeId id) const { return exprs[static_cast<size_t>(id)]; }
  const Stmt& stmt(NodeId id) const { return stmts[static_cast<size_t>(id)]; }
  const Arg* args_of(const Expr& e) const { return args.data() + e.args_begin; }
  std::span<const NodeId> body(const Stmt& s) const { return {bodies.data() + s.body_begin, s.body_count}; }
  std::span<const NodeId> orelse(const Stmt& s) const { return {bodies.data() + s.orelse_begin, s.orelse_count}; }
  std::string_view text(const Expr& e) const { return std::string_view(text_pool).substr(e.text_at, e.text_size); }

  // Empties the program and keeps its arenas' capacity for the next parse.
  void Clear() {
    exprs.clear();
    stmts.clear();
    args.clear();
    top.clear();
    bodies.clear();
    text_pool.clear();
  }
};

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_AST_H_
