// Recursive descent over the lexer's tokens, mirroring jinja2/parser.py
// function for function (parse_condexpr, parse_or, ..., parse_unary,
// parse_primary, parse_postfix, parse_filter_expr). See parser.h.
#include "ggufguard/template/parser.h"

#include <algorithm>
#include <utility>

#include "ggufguard/template/lexer.h"

namespace ggufguard::jinja {
namespace {

constexpr std::string_view kBlockOpeners[] = {"if", "for", "macro", "call", "filter", "set", "block", "with",
                                              "autoescape", "generation"};

bool IsOpener(std::string_view s) {
  for (std::string_view o : kBlockOpeners) {
    if (o == s) return true;
  }
  return false;
}

class Parser {
 public:
  Parser(std::string_view source, const ParseOptions& options, ParseResult* out)
      : src_(source), opts_(options), lexer_(source), out_(*out) {
    out_.program.Clear();
    out_.issues.clear();
    // Real templates make about one node per 6 bytes; reserving saves the
    // copies of growing (bounded: the arenas grow past this if they must).
    const size_t guess = std::min<size_t>(source.size() / 6, size_t{1} << 18);
    out_.program.exprs.reserve(guess);
    out_.program.args.reserve(guess / 2);
    out_.program.stmts.reserve(guess / 4);
    out_.program.text_pool.reserve(std::min<size_t>(source.size(), size_t{1} << 20));
    cur_ = lexer_.Next();
    next_ = lexer_.Next();
  }

  void Run() && {
    while (cur_.kind != Tok::kEof) {
      switch (cur_.kind) {
        case Tok::kData: {
          const NodeId s = NewStmt(StmtKind::kData, cur_.offset);
          out_.program.stmts[s].end = cur_.offset + cur_.text.size();
          Append(s);
          Advance();
          break;
        }
        case Tok::kVarBegin: ParseOutputTag(); break;
        case Tok::kBlockBegin: ParseBlockTag(); break;
        case Tok::kError: ReportLexError(); Advance(); break;
        default: Advance(); break;  // cannot happen outside a tag
      }
    }
    if (!frames_.empty() && !stopped_) {
      const Frame& f = frames_.back();
      Issue(ParseIssue::kUnterminated, out_.program.stmts[f.stmt].begin,
            "{% " + std::string(f.opener) + " %} not closed");
    }
    CloseFrames(0);
  }

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
  void ReportLexError() {
    if (cur_.error != LexError::kBadChar) stopped_ = true;
    switch (cur_.error) {
      case LexError::kBadChar:
        // Control bytes have their own finding (the byte pass).
        if (static_cast<unsigned char>(cur_.text[0]) >= 0x20 && cur_.text[0] != 0x7f) {
          Issue(ParseIssue::kSyntax, cur_.offset, "unexpected character");
        }
        break;
      case LexError::kUnterminatedString: Issue(ParseIssue::kUnterminated, cur_.offset, "string literal not closed"); break;
      case LexError::kUnterminatedTag: {
        // What went wrong inside a tag that never ends is that it never ends.
        auto& v = out_.issues;
        v.erase(std::remove_if(v.begin() + static_cast<ptrdiff_t>(std::min(tag_issues_, v.size())), v.end(),
                               [](const ParseIssue& i) { return i.kind == ParseIssue::kSyntax; }),
                v.end());
        Issue(ParseIssue::kUnterminated, tag_open_, tag_is_block_ ? "{% not closed" : "{{ not closed");
        break;
      }
      case LexError::kUnterminatedComment: Issue(ParseIssue::kUnterminated, cur_.offset, "{# not closed"); break;
      case LexError::kUnterminatedRaw: Issue(ParseIssue::kUnterminated, cur_.offset, "{% raw %} not closed"); break;
      case LexError::kNone: break;
    }
  }

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
  // The statements of open blocks wait on one stack (open_bodies_), each
  // frame's from its `first` on; a block's are moved to Program::bodies in
  // one piece when it closes (or reaches its else), innermost first.
  void Append(NodeId stmt) {
    if (frames_.empty()) {
      out_.program.top.push_back(stmt);
    } else {
      open_bodies_.push_back(stmt);
    }
  }
  void SetRange(NodeId stmt, bool orelse, size_t first) {
    std::vector<NodeId>& bodies = out_.program.bodies;
    Stmt& s = out_.program.stmts[static_cast<size_t>(stmt)];
    const auto begin = static_cast<uint32_t>(bodies.size());
    const auto count = static_cast<uint32_t>(open_bodies_.size() - first);
    bodies.insert(bodies.end(), open_bodies_.begin() + static_cast<ptrdiff_t>(first), open_bodies_.end());
    open_bodies_.resize(first);
    (orelse ? s.orelse_begin : s.body_begin) = begin;
    (orelse ? s.orelse_count : s.body_count) = count;
  }
  void CloseBody(const Frame& f) { SetRange(f.stmt, f.in_else, f.first); }
  uint32_t PushArgs(std::vector<Arg>&& args, uint32_t* count) {
    const uint32_t begin = static_cast<uint32_t>(out_.program.args.size());
    *count = static_cast<uint32_t>(args.size());
    for (Arg& a : args) out_.program.args.push_back(a);
    return begin;
  }

  // --- tags ---

  void BeginTag() {
    failed_ = false;
    tag_issues_ = out_.issues.size();
    tag_open_ = cur_.offset;
    tag_is_block_ = cur_.kind == Tok::kBlockBegin;
    Advance();
  }
  // Skips what is left of the tag after an error, then its closer.
  void EndTag() {
    if (!AtTagEnd() && !failed_) Fail("expected the end of the tag");
    while (!AtTagEnd()) {
      if (cur_.kind == Tok::kError) ReportLexError();
      // Another engine may parse what Jinja2 rejects: dunder names in the
      // skipped rest of the tag are still reported.
      if ((cur_.kind == Tok::kName && LooksDunder(cur_.text)) || (cur_.kind == Tok::kString && LooksDunder(cur_.value))) {
        Issue(ParseIssue::kDunderToken, cur_.offset, std::string(cur_.text.substr(0, 60)));
      }
      Advance();
    }
    if (cur_.kind != Tok::kEof) Advance();
  }
  static bool LooksDunder(std::string_view s) {
    return s.size() >= 3 && s.starts_with("__") && s.find_first_not_of('_') != std::string_view::npos;
  }

  void ParseOutputTag() {
    BeginTag();
    const NodeId s = NewStmt(StmtKind::kOutput, tag_open_);
    out_.program.stmts[s].a = ParseTuple(/*with_condexpr=*/true, /*explicit_parens=*/false);
    Append(s);
    EndTag();
  }

  void Push(NodeId stmt, std::string_view opener) {
    if (frames_.size() < opts_.crash_nesting) {
      frames_.push_back({stmt, opener, false, open_bodies_.size()});
    } else {
      ++overflow_;  // reported as deep nesting; its body joins the enclosing one
    }
    CheckNesting(out_.program.stmts[stmt].begin);
  }

  // Closes the frames from the innermost down to `keep` (left open).
  void CloseFrames(size_t keep) {
    while (frames_.size() > keep) {
      CloseBody(frames_.back());
      frames_.pop_back();
    }
  }

  void Pop(std::string_view closer) {
    if (overflow_ > 0) {
      --overflow_;
      return;
    }
    for (size_t i = frames_.size(); i-- > 0;) {
      if (frames_[i].opener != closer) continue;
      if (i + 1 != frames_.size()) {
        Issue(ParseIssue::kUnterminated, out_.program.stmts[frames_.back().stmt].begin,
              "{% " + std::string(frames_.back().opener) + " %} not closed before {% end" + std::string(closer) + " %}");
      }
      CloseFrames(i);
      return;
    }
    Issue(ParseIssue::kSyntax, cur_.offset, "{% end" + std::string(closer) + " %} without {% " + std::string(closer) + " %}");
  }

  void ParseBlockTag() {
    BeginTag();
    if (cur_.kind != Tok::kName) {
      Fail("expected a statement name");
      EndTag();
      return;
    }
    const std::string_view kw = cur_.text;
    const size_t at = tag_open_;
    Advance();
    if (kw == "for") {
      const NodeId s = NewStmt(StmtKind::kFor, at);
      const NodeId target = ParseAssignTarget(false);
      if (!SkipName("in")) Fail("expected 'in'");
      const NodeId iter = ParseTuple(false, false, "recursive");
      NodeId cond = kNoNode;
      if (SkipName("if")) cond = ParseExpression(true);
      const bool recursive = SkipName("recursive");
      Stmt& st = out_.program.stmts[s];
      st.a = target, st.b = iter, st.c = cond, st.recursive = recursive;
      Append(s);
      Push(s, "for");
    } else if (kw == "if") {
      const NodeId s = NewStmt(StmtKind::kIf, at);
      out_.program.stmts[s].a = ParseTuple(false, false);
      Append(s);
      Push(s, "if");
    } else if (kw == "elif") {
      if (!frames_.empty() && frames_.back().opener == "if" && overflow_ == 0 && !frames_.back().in_else) {
        const NodeId s = NewStmt(StmtKind::kIf, at);
        out_.program.stmts[s].a = ParseTuple(false, false);
        // The if's body ends here, and its else is this elif alone.
        Frame& f = frames_.back();
        CloseBody(f);
        open_bodies_.push_back(s);
        SetRange(f.stmt, /*orelse=*/true, f.first);
        f.stmt = s;
      } else if (overflow_ == 0) {
        Issue(ParseIssue::kSyntax, at, "{% elif %} outside {% if %}");
        ParseTuple(false, false);
      }
    } else if (kw == "else") {
      if (!frames_.empty() && overflow_ == 0 && (frames_.back().opener == "if" || frames_.back().opener == "for")) {
        // A second else goes on adding to the first one's statements.
        if (!frames_.back().in_else) CloseBody(frames_.back());
        frames_.back().in_else = true;
      } else if (overflow_ == 0) {
        Issue(ParseIssue::kSyntax, at, "{% else %} outside {% if %} or {% for %}");
      }
    } else if (kw.starts_with("end") && IsOpener(kw.substr(3))) {
      if (kw == "endblock" && cur_.kind == Tok::kName) Advance();
      Pop(kw.substr(3));
    } else if (kw == "macro") {
      const NodeId s = NewStmt(StmtKind::kMacro, at);
      out_.program.stmts[s].name = ExpectName();
      ParseSignature(s);
      Append(s);
      Push(s, "macro");
    } else if (kw == "call") {
      const NodeId s = NewStmt(StmtKind::kCallBlock, at);
      if (IsOp("(")) ParseSignature(s);
      out_.program.stmts[s].a = ParseExpression(true);
      Append(s);
      Push(s, "call");
    } else if (kw == "filter") {
      const NodeId s = NewStmt(StmtKind::kFilterBlock, at);
      out_.program.stmts[s].a = ParseFilter(kNoNode, /*start_inline=*/true);
      Append(s);
      Push(s, "filter");
    } else if (kw == "set") {
      const NodeId target = ParseAssignTarget(true);
      if (SkipOp("=")) {
        const NodeId s = NewStmt(StmtKind::kSet, at);
        const NodeId value = ParseTuple(true, false);
        out_.program.stmts[s].a = target;
        out_.program.stmts[s].b = value;
        Append(s);
      } else {
        const NodeId s = NewStmt(StmtKind::kSetBlock, at);
        out_.program.stmts[s].a = target;
        if (IsOp("|")) out_.program.stmts[s].c = ParseFilter(kNoNode, false);
        Append(s);
        Push(s, "set");
      }
    } else if (kw == "with") {
      const NodeId s = NewStmt(StmtKind::kWith, at);
      std::vector<Arg> targets;
      while (!AtTagEnd() && !failed_) {
        if (!targets.empty()) ExpectOp(",");
        const NodeId target = ParseAssignTarget(false);
        ExpectOp("=");
        const NodeId value = ParseExpression(true);
        if (failed_) break;
        const Expr& t = E(target);
        targets.push_back({t.kind == ExprKind::kName ? t.name : std::string_view(), value, 0});
      }
      Stmt& st = out_.program.stmts[s];
      st.params_begin = PushArgs(std::move(targets), &out_.program.stmts[s].params_count);
      Append(s);
      Push(s, "with");
    } else if (kw == "include" || kw == "extends" || kw == "import" || kw == "from") {
      const NodeId s = NewStmt(StmtKind::kInclude, at);
      out_.program.stmts[s].name = kw;
      out_.program.stmts[s].a = ParseExpression(true);
      // The rest (ignore missing, as x, import a as b, with context) names
      // nothing the analyser needs; it is skipped as a well-formed tail.
      while (!AtTagEnd()) Advance();
      Append(s);
    } else if (kw == "block") {
      const NodeId s = NewStmt(StmtKind::kBlock, at);
      out_.program.stmts[s].name = ExpectName();
      while (SkipName("scoped") || SkipName("required")) {
      }
      Append(s);
      Push(s, "block");
    } else if (kw == "do") {
      const NodeId s = NewStmt(StmtKind::kDo, at);
      out_.program.stmts[s].a = ParseTuple(true, false);
      Append(s);
    } else if (kw == "break" || kw == "continue") {
      const NodeId s = NewStmt(StmtKind::kLoopControl, at);
      out_.program.stmts[s].name = kw;
      Append(s);
    } else if (kw == "autoescape" || kw == "generation") {
      const NodeId s = NewStmt(StmtKind::kScope, at);
      out_.program.stmts[s].name = kw;
      if (kw == "autoescape") out_.program.stmts[s].a = ParseExpression(true);
      Append(s);
      Push(s, kw);
    } else {
      Issue(ParseIssue::kSyntax, at, "unknown tag '" + std::string(kw.substr(0, 40)) + "'");
      failed_ = true;
    }
    EndTag();
  }

  // (a, b=default, ...) of a macro or a call block; defaults are expressions.
  void ParseSignature(NodeId stmt) {
    std::vector<Arg> params;
    ExpectOp("(");
    while (!failed_ && !IsOp(")")) {
      if (!params.empty()) ExpectOp(",");
      if (IsOp(")")) break;
      Arg a;
      a.name = ExpectName();
      if (SkipOp("=")) a.value = ParseExpression(true);
      if (failed_) break;
      params.push_back(a);
    }
    ExpectOp(")");
    Stmt& st = out_.program.stmts[stmt];
    st.params_begin = PushArgs(std::move(params), &out_.program.stmts[stmt].params_count);
  }

  // name, ns.attr (with_namespace), or a tuple of names, as parse_assign_target.
  NodeId ParseAssignTarget(bool with_namespace) {
    if (with_namespace && cur_.kind == Tok::kName && NextIsOp(".")) {
      const NodeId ns = NewExpr(ExprKind::kName, cur_.offset);
      E(ns).name = cur_.text;
      Advance();
      Advance();  // '.'
      const NodeId g = NewExpr(ExprKind::kGetAttr, E(ns).begin);
      E(g).a = ns;
      E(g).name = ExpectName();
      return Finish(g);
    }
    const size_t begin = cur_.offset;
    std::vector<Arg> names;
    bool tuple = false;
    const bool paren = SkipOp("(");
    for (;;) {
      if (cur_.kind != Tok::kName) {
        Fail("expected a name to assign");
        return kNoNode;
      }
      const NodeId n = NewExpr(ExprKind::kName, cur_.offset);
      E(n).name = cur_.text;
      E(n).end = cur_.offset + cur_.text.size();
      Advance();
      names.push_back({{}, n, 0});
      if (!SkipOp(",")) break;
      tuple = true;
      if (cur_.kind != Tok::kName) break;  // trailing comma
    }
    if (paren) ExpectOp(")");
    if (!tuple && names.size() == 1) return names[0].value;
    const NodeId t = NewExpr(ExprKind::kTuple, begin);
    E(t).args_begin = PushArgs(std::move(names), &E(t).args_count);
    return Finish(t);
  }

  // --- expressions ---

  // parse_tuple: a single expression, or a tuple when commas follow.
  NodeId ParseTuple(bool with_condexpr, bool explicit_parens, std::string_view extra_end = {}) {
    const size_t begin = cur_.offset;
    std::vector<Arg> items;
    bool is_tuple = false;
    for (;;) {
      if (!items.empty()) {
        if (!SkipOp(",")) break;
      }
      if (AtTagEnd() || IsOp(")") || (!extra_end.empty() && IsName(extra_end))) break;
      const NodeId e = ParseExpression(with_condexpr);
      if (failed_) return kNoNode;
      items.push_back({{}, e, 0});
      if (IsOp(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!items.empty()) return items[0].value;
      if (!explicit_parens) {
        Fail("expected an expression");
        return kNoNode;
      }
    }
    const NodeId t = NewExpr(ExprKind::kTuple, begin);
    E(t).args_begin = PushArgs(std::move(items), &E(t).args_count);
    return Finish(t);
  }

  NodeId ParseExpression(bool with_condexpr) {
    DepthGuard guard(this);
    if (!guard.ok || failed_) return kNoNode;
    return with_condexpr ? ParseCondExpr() : ParseOr();
  }

  NodeId ParseCondExpr() {
    const size_t begin = cur_.offset;
    NodeId expr1 = ParseOr();
    while (!failed_ && SkipName("if")) {
      const NodeId expr2 = ParseOr();
      NodeId expr3 = kNoNode;
      if (SkipName("else")) {
        DepthGuard guard(this);
        if (!guard.ok) return kNoNode;
        expr3 = ParseCondExpr();
      }
      const NodeId c = NewExpr(ExprKind::kCondExpr, begin);
      E(c).a = expr1, E(c).b = expr2, E(c).c = expr3;
      expr1 = Finish(c);
    }
    return expr1;
  }

  NodeId Binary(std::string_view op, NodeId left, NodeId right, size_t begin) {
    const NodeId b = NewExpr(ExprKind::kBinary, begin);
    E(b).name = op, E(b).a = left, E(b).b = right;
    return Finish(b);
  }

  NodeId ParseOr() {
    const size_t begin = cur_.offset;
    NodeId left = ParseAnd();
    while (!failed_ && SkipName("or")) left = Binary("or", left, ParseAnd(), begin);
    return left;
  }
  NodeId ParseAnd() {
    const size_t begin = cur_.offset;
    NodeId left = ParseNot();
    while (!failed_ && SkipName("and")) left = Binary("and", left, ParseNot(), begin);
    return left;
  }
  NodeId ParseNot() {
    if (IsName("not")) {
      const size_t begin = cur_.offset;
      Advance();
      DepthGuard guard(this);
      if (!guard.ok) return kNoNode;
      const NodeId u = NewExpr(ExprKind::kUnary, begin);
      const NodeId operand = ParseNot();
      E(u).name = "not", E(u).a = operand;
      return Finish(u);
    }
    return ParseCompare();
  }
  NodeId ParseCompare() {
    const size_t begin = cur_.offset;
    NodeId left = ParseMath1();
    while (!failed_) {
      std::string_view op;
      if (cur_.kind == Tok::kOperator &&
          (cur_.text == "==" || cur_.text == "!=" || cur_.text == "<" || cur_.text == "<=" || cur_.text == ">" ||
           cur_.text == ">=")) {
        op = cur_.text;
        Advance();
      } else if (SkipName("in")) {
        op = "in";
      } else if (IsName("not") && NextIsName("in")) {
        Advance();
        Advance();
        op = "notin";
      } else {
        break;
      }
      left = Binary(op, left, ParseMath1(), begin);
    }
    return left;
  }
  NodeId ParseMath1() {
    const size_t begin = cur_.offset;
    NodeId left = ParseConcat();
    while (!failed_ && (IsOp("+") || IsOp("-"))) {
      const std::string_view op = cur_.text;
      Advance();
      left = Binary(op, left, ParseConcat(), begin);
    }
    return left;
  }
  NodeId ParseConcat() {
    const size_t begin = cur_.offset;
    const NodeId first = ParseMath2();
    if (!IsOp("~")) return first;
    std::vector<Arg> parts = {{{}, first, 0}};
    while (!failed_ && SkipOp("~")) parts.push_back({{}, ParseMath2(), 0});
    if (failed_) return kNoNode;
    const NodeId c = NewExpr(ExprKind::kConcat, begin);
    E(c).args_begin = PushArgs(std::move(parts), &E(c).args_count);
    return Finish(c);
  }
  NodeId ParseMath2() {
    const size_t begin = cur_.offset;
    NodeId left = ParsePow();
    while (!failed_ && (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%"))) {
      const std::string_view op = cur_.text;
      Advance();
      left = Binary(op, left, ParsePow(), begin);
    }
    return left;
  }
  NodeId ParsePow() {
    const size_t begin = cur_.offset;
    NodeId left = ParseUnary(true);
    while (!failed_ && SkipOp("**")) left = Binary("**", left, ParseUnary(true), begin);
    return left;
  }
  NodeId ParseUnary(bool with_filter) {
    const size_t begin = cur_.offset;
    NodeId node;
    if (IsOp("-") || IsOp("+")) {
      const std::string_view op = cur_.text;
      Advance();
      DepthGuard guard(this);
      if (!guard.ok) return kNoNode;
      const NodeId operand = ParseUnary(false);
      node = NewExpr(ExprKind::kUnary, begin);
      E(node).name = op, E(node).a = operand;
      node = Finish(node);
    } else {
      node = ParsePrimary();
    }
    node = ParsePostfix(node);
    if (with_filter) node = ParseFilterExpr(node);
    return node;
  }

  NodeId ParsePrimary() {
    if (failed_) return kNoNode;
    const size_t begin = cur_.offset;
    switch (cur_.kind) {
      case Tok::kName: {
        const std::string_view n = cur_.text;
        const bool is_const = n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None";
        const NodeId e = NewExpr(is_const ? ExprKind::kConst : ExprKind::kName, begin);
        E(e).name = n;
        Advance();
        return Finish(e);
      }
      case Tok::kString: {
        const NodeId e = NewExpr(ExprKind::kString, begin);
        // Adjacent literals are one string: '__cla' 'ss__'.
        std::string& pool = out_.program.text_pool;
        const size_t at = pool.size();
        while (cur_.kind == Tok::kString) {
          pool += cur_.value;
          Advance();
        }
        // Decoding never lengthens a literal, so the pool is at most the
        // source; a source past 4 GiB keeps its literals' texts empty.
        if (pool.size() <= UINT32_MAX) {
          E(e).text_at = static_cast<uint32_t>(at);
          E(e).text_size = static_cast<uint32_t>(pool.size() - at);
        }
        return Finish(e);
      }
      case Tok::kInteger:
      case Tok::kFloat: {
        const NodeId e = NewExpr(ExprKind::kNumber, begin);
        E(e).number = cur_.number;
        E(e).name = cur_.text;
        Advance();
        return Finish(e);
      }
      case Tok::kOperator:
        if (SkipOp("(")) {
          const NodeId e = ParseTuple(true, /*explicit_parens=*/true);
          ExpectOp(")");
          return e;
        }
        if (IsOp("[")) return ParseListOrDict(ExprKind::kList, "]");
        if (IsOp("{")) return ParseListOrDict(ExprKind::kDict, "}");
        break;
      default:
        break;
    }
    Fail("expected an expression");
    return kNoNode;
  }

  NodeId ParseListOrDict(ExprKind kind, std::string_view close) {
    const size_t begin = cur_.offset;
    Advance();
    std::vector<Arg> items;
    while (!failed_ && !IsOp(close)) {
      if (!items.empty()) {
        ExpectOp(",");
        if (IsOp(close)) break;
      }
      items.push_back({{}, ParseExpression(true), 0});
      if (kind == ExprKind::kDict) {
        ExpectOp(":");
        items.push_back({{}, ParseExpression(true), 0});
      }
    }
    ExpectOp(close);
    if (failed_) return kNoNode;
    const NodeId e = NewExpr(kind, begin);
    E(e).args_begin = PushArgs(std::move(items), &E(e).args_count);
    return Finish(e);
  }

  NodeId ParsePostfix(NodeId node) {
    while (!failed_) {
      if (IsOp(".") || IsOp("[")) {
        node = ParseSubscript(node);
      } else if (IsOp("(")) {
        node = ParseCall(node);
      } else {
        break;
      }
    }
    return node;
  }

  NodeId ParseFilterExpr(NodeId node) {
    while (!failed_) {
      if (IsOp("|")) {
        node = ParseFilter(node, false);
      } else if (IsName("is")) {
        node = ParseTest(node);
      } else if (IsOp("(")) {
        node = ParseCall(node);
      } else {
        break;
      }
    }
    return node;
  }

  NodeId ParseSubscript(NodeId node) {
    const size_t begin = node == kNoNode ? cur_.offset : E(node).begin;
    if (SkipOp(".")) {
      if (cur_.kind == Tok::kName || cur_.kind == Tok::kInteger) {
        const NodeId g = NewExpr(cur_.kind == Tok::kName ? ExprKind::kGetAttr : ExprKind::kGetItem, begin);
        E(g).a = node;
        E(g).name_at = cur_.offset;
        if (cur_.kind == Tok::kName) {
          E(g).name = cur_.text;
        } else {
          const NodeId idx = NewExpr(ExprKind::kNumber, cur_.offset);
          E(idx).number = cur_.number;
          E(idx).name = cur_.text;
          E(idx).end = cur_.offset + cur_.text.size();
          E(g).b = idx;
        }
        Advance();
        return Finish(g);
      }
      Fail("expected an attribute name");
      return kNoNode;
    }
    ExpectOp("[");
    DepthGuard guard(this);
    if (!guard.ok) return kNoNode;
    std::vector<NodeId> subs;
    bool bare_slice = false;  // `a[1:2]`, not `a[b[1:2]]`
    for (;;) {
      subs.push_back(ParseSubscribed(&bare_slice));
      if (failed_ || !SkipOp(",")) break;
      if (IsOp("]")) break;
    }
    ExpectOp("]");
    if (failed_) return kNoNode;
    NodeId index = subs[0];
    if (subs.size() > 1) {
      std::vector<Arg> items;
      for (NodeId s : subs) items.push_back({{}, s, 0});
      index = NewExpr(ExprKind::kTuple, E(subs[0]).begin);
      E(index).args_begin = PushArgs(std::move(items), &E(index).args_count);
      Finish(index);  // its height counts: a[b, c] is as deep as b or c
    }
    if (bare_slice && subs.size() == 1) {
      E(index).a = node;
      E(index).begin = begin;
      return Finish(index);
    }
    const NodeId g = NewExpr(ExprKind::kGetItem, begin);
    E(g).a = node, E(g).b = index;
    return Finish(g);
  }

  // One subscript: an expression or a slice a:b:c (a kSlice without its object).
  NodeId ParseSubscribed(bool* bare_slice) {
    const size_t begin = cur_.offset;
    NodeId start = kNoNode;
    *bare_slice = false;
    if (!IsOp(":")) {
      start = ParseExpression(true);
      if (!IsOp(":")) return start;
    }
    *bare_slice = true;
    Advance();  // ':'
    NodeId stop = kNoNode, step = kNoNode;
    if (!IsOp("]") && !IsOp(",") && !IsOp(":")) stop = ParseExpression(true);
    if (SkipOp(":") && !IsOp("]") && !IsOp(",")) step = ParseExpression(true);
    const NodeId s = NewExpr(ExprKind::kSlice, begin);
    E(s).b = start, E(s).c = stop, E(s).d = step;
    return s;
  }

  std::vector<Arg> ParseCallArgs() {
    std::vector<Arg> args;
    ExpectOp("(");
    DepthGuard guard(this);
    if (!guard.ok) return args;
    while (!failed_ && !IsOp(")")) {
      if (!args.empty()) {
        ExpectOp(",");
        if (IsOp(")")) break;
      }
      Arg a;
      if (SkipOp("**")) {
        a.star = 2;
      } else if (SkipOp("*")) {
        a.star = 1;
      } else if (cur_.kind == Tok::kName && NextIsOp("=")) {
        a.name = cur_.text;
        Advance();
        Advance();
      }
      a.value = ParseExpression(true);
      args.push_back(a);
    }
    ExpectOp(")");
    return args;
  }

  NodeId ParseCall(NodeId node) {
    const size_t begin = node == kNoNode ? cur_.offset : E(node).begin;
    std::vector<Arg> args = ParseCallArgs();
    if (failed_) return kNoNode;
    const NodeId c = NewExpr(ExprKind::kCall, begin);
    E(c).a = node;
    E(c).args_begin = PushArgs(std::move(args), &E(c).args_count);
    return Finish(c);
  }

  // Dotted filter or test name: `a.b` is one name in Jinja2.
  std::string_view DottedName() {
    const size_t begin = cur_.offset;
    size_t end = begin;
    if (cur_.kind != Tok::kName) {
      Fail("expected a filter or test name");
      return {};
    }
    end = cur_.offset + cur_.text.size();
    Advance();
    while (IsOp(".") && next_.kind == Tok::kName) {
      Advance();
      end = cur_.offset + cur_.text.size();
      Advance();
    }
    return src_.substr(begin, end - begin);
  }

  NodeId ParseFilter(NodeId node, bool start_inline) {
    while (!failed_ && (start_inline || IsOp("|"))) {
      if (!start_inline) Advance();
      start_inline = false;
      const size_t begin = node == kNoNode ? cur_.offset : E(node).begin;
      const size_t name_at = cur_.offset;
      const std::string_view name = DottedName();
      std::vector<Arg> args;
      if (IsOp("(")) args = ParseCallArgs();
      if (failed_) return kNoNode;
      const NodeId f = NewExpr(ExprKind::kFilter, begin);
      E(f).a = node, E(f).name = name, E(f).name_at = name_at;
      E(f).args_begin = PushArgs(std::move(args), &E(f).args_count);
      node = Finish(f);
    }
    return node;
  }

  NodeId ParseTest(NodeId node) {
    const size_t begin = node == kNoNode ? cur_.offset : E(node).begin;
    Advance();  // 'is'
    const bool negated = SkipName("not");
    const std::string_view name = DottedName();
    std::vector<Arg> args;
    if (IsOp("(")) {
      args = ParseCallArgs();
    } else if ((cur_.kind == Tok::kName || cur_.kind == Tok::kString || cur_.kind == Tok::kInteger ||
                cur_.kind == Tok::kFloat || IsOp("(") || IsOp("[") || IsOp("{")) &&
               !IsName("else") && !IsName("or") && !IsName("and")) {
      if (IsName("is")) {
        Fail("unexpected 'is'");
        return kNoNode;
      }
      DepthGuard guard(this);
      if (!guard.ok) return kNoNode;
      args.push_back({{}, ParsePostfix(ParsePrimary()), 0});
    }
    if (failed_) return kNoNode;
    const NodeId t = NewExpr(ExprKind::kTest, begin);
    E(t).a = node, E(t).name = name, E(t).negated = negated;
    E(t).args_begin = PushArgs(std::move(args), &E(t).args_count);
    return Finish(t);
  }

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

}  // namespace

void Parse(std::string_view source, const ParseOptions& options, ParseResult* out) {
  Parser(source, options, out).Run();
}

ParseResult Parse(std::string_view source, const ParseOptions& options) {
  ParseResult out;
  Parse(source, options, &out);
  return out;
}

}  // namespace ggufguard::jinja
