// The state of the parser of Jinja2 templates (parser.h), shared by its two
// halves as jinja2/parser.py is organised: statements and tags (parser.cc)
// and expressions (parse_expressions.cc). The token, issue, nesting and
// arena helpers both call are defined here, inline. Internal to the parser:
// nothing outside those two files includes it.
#ifndef GGUFGUARD_TEMPLATE_PARSER_STATE_H_
#define GGUFGUARD_TEMPLATE_PARSER_STATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufguard/template/ast.h"
#include "ggufguard/template/lexer.h"
#include "ggufguard/template/parser.h"

namespace ggufguard::jinja::parsing {

class Parser {
 public:
  Parser(std::string_view source, const ParseOptions& options, ParseResult* out);

  void Run() &&;

 private:
  struct Frame {
    NodeId stmt;
    std::string_view opener;
    bool in_else = false;
    size_t first = 0;  // where its statements start in open_bodies_
  };

  // --- tokens ---

  void Advance() {
    prev_end_ = cur_.offset + cur_.text.size();
    cur_ = std::move(next_);
    next_ = lexer_.Next();
  }
  bool IsOp(std::string_view op) const { return cur_.kind == Tok::kOperator && cur_.text == op; }
  bool IsName(std::string_view n) const { return cur_.kind == Tok::kName && cur_.text == n; }
  bool NextIsOp(std::string_view op) const { return next_.kind == Tok::kOperator && next_.text == op; }
  bool NextIsName(std::string_view n) const { return next_.kind == Tok::kName && next_.text == n; }
  bool AtTagEnd() const { return cur_.kind == Tok::kBlockEnd || cur_.kind == Tok::kVarEnd || cur_.kind == Tok::kEof; }
  bool SkipOp(std::string_view op) {
    if (!IsOp(op)) return false;
    Advance();
    return true;
  }
  bool SkipName(std::string_view n) {
    if (!IsName(n)) return false;
    Advance();
    return true;
  }
  void ExpectOp(std::string_view op) {
    if (!SkipOp(op)) Fail("expected '" + std::string(op) + "'");
  }
  std::string_view ExpectName() {
    if (cur_.kind != Tok::kName) {
      Fail("expected a name");
      return {};
    }
    std::string_view n = cur_.text;
    Advance();
    return n;
  }

  // --- issues ---

  void Issue(ParseIssue::Kind kind, size_t offset, std::string detail) {
    if (out_.issues.size() < opts_.max_issues) out_.issues.push_back({kind, offset, std::move(detail)});
  }
  // A syntax error: the rest of the tag is skipped by the tag's caller.
  void Fail(std::string what) {
    if (failed_) return;
    failed_ = true;
    if (cur_.kind == Tok::kError) return;  // the lexer's error is reported instead
    std::string got = cur_.kind == Tok::kEof ? "end of template"
                      : AtTagEnd()           ? "end of tag"
                                             : "'" + std::string(cur_.text.substr(0, 40)) + "'";
    Issue(ParseIssue::kSyntax, cur_.offset, what + ", got " + got);
  }
  void ReportLexError();

  // --- nesting ---

  // The tag's outermost expression is not a level of its own: `{{ x }}` at
  // the top is depth 0, `{{ (x) }}` depth 1.
  uint32_t Depth() const {
    return static_cast<uint32_t>(frames_.size()) + overflow_ + (expr_depth_ > 0 ? expr_depth_ - 1 : 0);
  }
  void CheckNesting(size_t offset) { CheckNestingAt(Depth(), offset); }
  void CheckNestingAt(uint32_t d, size_t offset) {
    if (d <= opts_.crash_nesting) over_crash_ = false;
    if (d <= opts_.max_nesting) {
      over_limit_ = false;
      return;
    }
    if (!over_limit_) {
      over_limit_ = true;
      Issue(ParseIssue::kExcessiveNesting, offset,
            "depth " + std::to_string(d) + " > " + std::to_string(opts_.max_nesting));
    }
    if (d > opts_.crash_nesting && !over_crash_) {
      over_crash_ = true;
      Issue(ParseIssue::kDeepNesting, offset,
            "depth " + std::to_string(d) + " > " + std::to_string(opts_.crash_nesting));
    }
  }
  // Guards one level of expression recursion; past crash_nesting the tag fails.
  struct DepthGuard {
    Parser* p;
    bool ok;
    explicit DepthGuard(Parser* parser) : p(parser) {
      ++p->expr_depth_;
      p->CheckNesting(p->cur_.offset);
      ok = p->Depth() <= p->opts_.crash_nesting;
      if (!ok) p->failed_ = true;  // reported as deep nesting, not as syntax
    }
    ~DepthGuard() { --p->expr_depth_; }
  };

  // --- arena ---

  NodeId NewExpr(ExprKind kind, size_t begin) {
    Expr e;
    e.kind = kind;
    e.begin = e.end = begin;
    out_.program.exprs.push_back(std::move(e));
    return static_cast<NodeId>(out_.program.exprs.size() - 1);
  }
  Expr& E(NodeId id) { return out_.program.exprs[static_cast<size_t>(id)]; }
  // Closes a node: its span, and its height, which is nesting too (a chain
  // of 300 `+` is 300 levels to a recursive renderer).
  NodeId Finish(NodeId id) {
    Expr& e = E(id);
    e.end = prev_end_;
    uint32_t depth = 0;
    for (NodeId child : {e.a, e.b, e.c, e.d}) {
      if (child != kNoNode) depth = std::max(depth, E(child).depth);
    }
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const NodeId child = out_.program.args[e.args_begin + i].value;
      if (child != kNoNode) depth = std::max(depth, E(child).depth);
    }
    E(id).depth = depth + 1;
    if (static_cast<uint32_t>(frames_.size()) + overflow_ + depth > opts_.crash_nesting) {
      CheckNestingAt(static_cast<uint32_t>(frames_.size()) + overflow_ + depth, E(id).begin);
      failed_ = true;
    }
    return id;
  }
  NodeId NewStmt(StmtKind kind, size_t begin) {
    Stmt s;
    s.kind = kind;
    s.begin = s.end = begin;
    out_.program.stmts.push_back(std::move(s));
    return static_cast<NodeId>(out_.program.stmts.size() - 1);
  }
  void Append(NodeId stmt);
  void SetRange(NodeId stmt, bool orelse, size_t first);
  void CloseBody(const Frame& f) { SetRange(f.stmt, f.in_else, f.first); }
  uint32_t PushArgs(std::vector<Arg>&& args, uint32_t* count) {
    const uint32_t begin = static_cast<uint32_t>(out_.program.args.size());
    *count = static_cast<uint32_t>(args.size());
    for (Arg& a : args) out_.program.args.push_back(a);
    return begin;
  }

  // --- tags and statements (parser.cc) ---

  void BeginTag();
  // Skips what is left of the tag after an error, then its closer.
  void EndTag();
  void ParseOutputTag();
  void Push(NodeId stmt, std::string_view opener);
  // Closes the frames from the innermost down to `keep` (left open).
  void CloseFrames(size_t keep);
  void Pop(std::string_view closer);
  void ParseBlockTag();
  // (a, b=default, ...) of a macro or a call block; defaults are expressions.
  void ParseSignature(NodeId stmt);
  // name, ns.attr (with_namespace), or a tuple of names, as parse_assign_target.
  NodeId ParseAssignTarget(bool with_namespace);
  static bool LooksDunder(std::string_view s) {
    return s.size() >= 3 && s.starts_with("__") && s.find_first_not_of('_') != std::string_view::npos;
  }

  // --- expressions (parse_expressions.cc) ---

  // parse_tuple: a single expression, or a tuple when commas follow.
  NodeId ParseTuple(bool with_condexpr, bool explicit_parens, std::string_view extra_end = {});
  NodeId ParseExpression(bool with_condexpr);
  NodeId ParseCondExpr();
  NodeId Binary(std::string_view op, NodeId left, NodeId right, size_t begin);
  NodeId ParseOr();
  NodeId ParseAnd();
  NodeId ParseNot();
  NodeId ParseCompare();
  NodeId ParseMath1();
  NodeId ParseConcat();
  NodeId ParseMath2();
  NodeId ParsePow();
  NodeId ParseUnary(bool with_filter);
  NodeId ParsePrimary();
  NodeId ParseListOrDict(ExprKind kind, std::string_view close);
  NodeId ParsePostfix(NodeId node);
  NodeId ParseFilterExpr(NodeId node);
  NodeId ParseSubscript(NodeId node);
  // One subscript: an expression or a slice a:b:c (a kSlice without its object).
  NodeId ParseSubscribed(bool* bare_slice);
  std::vector<Arg> ParseCallArgs();
  NodeId ParseCall(NodeId node);
  // Dotted filter or test name: `a.b` is one name in Jinja2.
  std::string_view DottedName();
  NodeId ParseFilter(NodeId node, bool start_inline);
  NodeId ParseTest(NodeId node);

  std::string_view src_;
  const ParseOptions& opts_;
  Lexer lexer_;
  Token cur_, next_;
  size_t prev_end_ = 0;
  ParseResult& out_;
  std::vector<Frame> frames_;
  std::vector<NodeId> open_bodies_;  // statements of the open blocks (Append)
  uint32_t overflow_ = 0;
  uint32_t expr_depth_ = 0;
  bool over_limit_ = false, over_crash_ = false;
  bool failed_ = false;
  bool stopped_ = false;   // the lexer stopped early (unterminated tag, comment, raw, string)
  size_t tag_issues_ = 0;  // issues before the current tag
  size_t tag_open_ = 0;
  bool tag_is_block_ = false;
};

}  // namespace ggufguard::jinja::parsing

#endif  // GGUFGUARD_TEMPLATE_PARSER_STATE_H_
