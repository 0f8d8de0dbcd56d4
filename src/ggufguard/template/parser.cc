// Jinja2's parser: the tags and statements (parse_statement and the
// parse_for, parse_if... it dispatches to, in jinja2/parser.py), and the
// entry point. The expression grammar is parse_expressions.cc; the state
// both share, parser_state.h. See parser.h.
#include "ggufguard/template/parser.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ggufguard/template/lexer.h"
#include "ggufguard/template/parser_state.h"

namespace ggufguard::jinja {
namespace parsing {
namespace {

constexpr std::string_view kBlockOpeners[] = {"if", "for", "macro", "call", "filter", "set", "block", "with",
                                              "autoescape", "generation"};

bool IsOpener(std::string_view s) {
  for (std::string_view o : kBlockOpeners) {
    if (o == s) return true;
  }
  return false;
}

}  // namespace

Parser::Parser(std::string_view source, const ParseOptions& options, ParseResult* out)
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

void Parser::Run() && {
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

void Parser::ReportLexError() {
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

// The statements of open blocks wait on one stack (open_bodies_), each
// frame's from its `first` on; a block's are moved to Program::bodies in
// one piece when it closes (or reaches its else), innermost first.
void Parser::Append(NodeId stmt) {
  if (frames_.empty()) {
    out_.program.top.push_back(stmt);
  } else {
    open_bodies_.push_back(stmt);
  }
}

void Parser::SetRange(NodeId stmt, bool orelse, size_t first) {
  std::vector<NodeId>& bodies = out_.program.bodies;
  Stmt& s = out_.program.stmts[static_cast<size_t>(stmt)];
  const auto begin = static_cast<uint32_t>(bodies.size());
  const auto count = static_cast<uint32_t>(open_bodies_.size() - first);
  bodies.insert(bodies.end(), open_bodies_.begin() + static_cast<ptrdiff_t>(first), open_bodies_.end());
  open_bodies_.resize(first);
  (orelse ? s.orelse_begin : s.body_begin) = begin;
  (orelse ? s.orelse_count : s.body_count) = count;
}

void Parser::BeginTag() {
  failed_ = false;
  tag_issues_ = out_.issues.size();
  tag_open_ = cur_.offset;
  tag_is_block_ = cur_.kind == Tok::kBlockBegin;
  Advance();
}

// Skips what is left of the tag after an error, then its closer.
void Parser::EndTag() {
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

void Parser::ParseOutputTag() {
  BeginTag();
  const NodeId s = NewStmt(StmtKind::kOutput, tag_open_);
  out_.program.stmts[s].a = ParseTuple(/*with_condexpr=*/true, /*explicit_parens=*/false);
  Append(s);
  EndTag();
}

void Parser::Push(NodeId stmt, std::string_view opener) {
  if (frames_.size() < opts_.crash_nesting) {
    frames_.push_back({stmt, opener, false, open_bodies_.size()});
  } else {
    ++overflow_;  // reported as deep nesting; its body joins the enclosing one
  }
  CheckNesting(out_.program.stmts[stmt].begin);
}

// Closes the frames from the innermost down to `keep` (left open).
void Parser::CloseFrames(size_t keep) {
  while (frames_.size() > keep) {
    CloseBody(frames_.back());
    frames_.pop_back();
  }
}

void Parser::Pop(std::string_view closer) {
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

void Parser::ParseBlockTag() {
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
void Parser::ParseSignature(NodeId stmt) {
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
NodeId Parser::ParseAssignTarget(bool with_namespace) {
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

}  // namespace parsing

void Parse(std::string_view source, const ParseOptions& options, ParseResult* out) {
  parsing::Parser(source, options, out).Run();
}

ParseResult Parse(std::string_view source, const ParseOptions& options) {
  ParseResult out;
  Parse(source, options, &out);
  return out;
}

}  // namespace ggufguard::jinja
