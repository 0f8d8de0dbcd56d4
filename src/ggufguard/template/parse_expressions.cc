// Jinja2's expression grammar, function for function as jinja2/parser.py
// writes it (parse_tuple, parse_condexpr, parse_or, ..., parse_unary,
// parse_primary, parse_postfix, parse_filter_expr): recursive descent over
// the lexer's tokens, each level guarded by the nesting bound. See parser.h
// and parser_state.h.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufguard/template/parser_state.h"

namespace ggufguard::jinja::parsing {

// parse_tuple: a single expression, or a tuple when commas follow.
NodeId Parser::ParseTuple(bool with_condexpr, bool explicit_parens, std::string_view extra_end) {
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

NodeId Parser::ParseExpression(bool with_condexpr) {
  DepthGuard guard(this);
  if (!guard.ok || failed_) return kNoNode;
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

NodeId Parser::ParseCondExpr() {
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

NodeId Parser::Binary(std::string_view op, NodeId left, NodeId right, size_t begin) {
  const NodeId b = NewExpr(ExprKind::kBinary, begin);
  E(b).name = op, E(b).a = left, E(b).b = right;
  return Finish(b);
}

NodeId Parser::ParseOr() {
  const size_t begin = cur_.offset;
  NodeId left = ParseAnd();
  while (!failed_ && SkipName("or")) left = Binary("or", left, ParseAnd(), begin);
  return left;
}

NodeId Parser::ParseAnd() {
  const size_t begin = cur_.offset;
  NodeId left = ParseNot();
  while (!failed_ && SkipName("and")) left = Binary("and", left, ParseNot(), begin);
  return left;
}

NodeId Parser::ParseNot() {
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

NodeId Parser::ParseCompare() {
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

NodeId Parser::ParseMath1() {
  const size_t begin = cur_.offset;
  NodeId left = ParseConcat();
  while (!failed_ && (IsOp("+") || IsOp("-"))) {
    const std::string_view op = cur_.text;
    Advance();
    left = Binary(op, left, ParseConcat(), begin);
  }
  return left;
}

NodeId Parser::ParseConcat() {
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

NodeId Parser::ParseMath2() {
  const size_t begin = cur_.offset;
  NodeId left = ParsePow();
  while (!failed_ && (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%"))) {
    const std::string_view op = cur_.text;
    Advance();
    left = Binary(op, left, ParsePow(), begin);
  }
  return left;
}

NodeId Parser::ParsePow() {
  const size_t begin = cur_.offset;
  NodeId left = ParseUnary(true);
  while (!failed_ && SkipOp("**")) left = Binary("**", left, ParseUnary(true), begin);
  return left;
}

NodeId Parser::ParseUnary(bool with_filter) {
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

NodeId Parser::ParsePrimary() {
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

NodeId Parser::ParseListOrDict(ExprKind kind, std::string_view close) {
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

NodeId Parser::ParsePostfix(NodeId node) {
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

NodeId Parser::ParseFilterExpr(NodeId node) {
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

NodeId Parser::ParseSubscript(NodeId node) {
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
NodeId Parser::ParseSubscribed(bool* bare_slice) {
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

std::vector<Arg> Parser::ParseCallArgs() {
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

NodeId Parser::ParseCall(NodeId node) {
  const size_t begin = node == kNoNode ? cur_.offset : E(node).begin;
  std::vector<Arg> args = ParseCallArgs();
  if (failed_) return kNoNode;
  const NodeId c = NewExpr(ExprKind::kCall, begin);
  E(c).a = node;
  E(c).args_begin = PushArgs(std::move(args), &E(c).args_count);
  return Finish(c);
}

// Dotted filter or test name: `a.b` is one name in Jinja2.
std::string_view Parser::DottedName() {
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

NodeId Parser::ParseFilter(NodeId node, bool start_inline) {
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

NodeId Parser::ParseTest(NodeId node) {
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

}  // namespace ggufguard::jinja::parsing
