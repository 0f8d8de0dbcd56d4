// The syntax tree of a Jinja2 template, as jinja2/parser.py builds it, held
// in two arenas (expressions, statements) addressed by index. Names and
// source spans are views into the template.
#ifndef GGUFGUARD_TEMPLATE_AST_H_
#define GGUFGUARD_TEMPLATE_AST_H_

#include <cstddef>
#include <cstdint>
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

struct Expr {
  ExprKind kind;
  size_t begin = 0, end = 0;  // source span, for findings
  size_t name_at = 0;         // kGetAttr: where the attribute name is
  std::string_view name;
  NodeId a = kNoNode, b = kNoNode, c = kNoNode, d = kNoNode;
  uint32_t args_begin = 0, args_count = 0;  // into Program::args
  bool negated = false;
  uint32_t depth = 1;  // height of the subtree: what a recursive renderer recurses on
  double number = 0;
  std::string text;  // kString: decoded (adjacent literals joined)
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
  std::vector<NodeId> body;
  std::vector<NodeId> orelse;
  bool recursive = false;
};

struct Program {
  std::vector<Expr> exprs;
  std::vector<Stmt> stmts;
  std::vector<Arg> args;
  std::vector<NodeId> top;  // statements at the top level

  const Expr& expr(NodeId id) const { return exprs[static_cast<size_t>(id)]; }
  const Stmt& stmt(NodeId id) const { return stmts[static_cast<size_t>(id)]; }
  const Arg* args_of(const Expr& e) const { return args.data() + e.args_begin; }
};

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_AST_H_
