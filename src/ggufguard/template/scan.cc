// Orchestration of the template analysis: the byte pass here, then the
// parser (parser.h) and the abstract interpreter (analyser.h). See scan.h.
#include "ggufguard/template/scan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ggufguard/base/text.h"
#include "ggufguard/template/analyser.h"
#include "ggufguard/template/parser.h"

namespace ggufguard {
namespace {

using Kind = TemplateIssueKind;

constexpr size_t kMaxDetail = 160;  // characters of a finding's detail

// ---------------------------------------------------------------------------
// Byte pass: non-printable characters anywhere (text, code and comments).

bool IsPrintableAt(std::string_view s, size_t i, size_t* len) {
  const unsigned char c = s[i];
  if (c < 0x80) {
    *len = 1;
    return (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' || c == '\r';
  }
  *len = DecodeUtf8At(s, i).length;
  if (*len == 0) {
    *len = 1;
    return false;
  }
  // C1 controls U+0080..U+009F are encoded as C2 80..C2 9F.
  return !(c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0);
}

void ScanBytes(std::string_view s, size_t cap, std::vector<TemplateIssue>* out) {
  size_t i = 0;
  size_t len = 0;
  while (i < s.size() && out->size() < cap) {
    const unsigned char c = s[i];
    if ((c >= 0x20 && c < 0x7f) || c == '\n') {  // the common case, without the UTF-8 decoder
      ++i;
      continue;
    }
    if (IsPrintableAt(s, i, &len)) {
      i += len;
      continue;
    }
    // One issue per run, so a binary blob does not drown everything else.
    const size_t start = i;
    while (i < s.size() && !IsPrintableAt(s, i, &len)) i += len;
    out->push_back({Kind::kNonPrintableByte, start, 0, 0, EscapeForDisplay(s.substr(start, i - start))});
  }
}

Kind KindOf(jinja::ParseIssue::Kind kind) {
  switch (kind) {
    case jinja::ParseIssue::kSyntax: return Kind::kParseError;
    case jinja::ParseIssue::kUnterminated: return Kind::kUnterminated;
    case jinja::ParseIssue::kExcessiveNesting: return Kind::kExcessiveNesting;
    case jinja::ParseIssue::kDeepNesting: return Kind::kDeepNesting;
    case jinja::ParseIssue::kDunderToken: return Kind::kDunderAccess;
  }
  return Kind::kParseError;
}

// 1-based line and column (in code points) of each issue, in one pass.
void Locate(std::string_view s, std::vector<TemplateIssue>* issues) {
  uint32_t line = 1, column = 1;
  size_t pos = 0;
  for (TemplateIssue& issue : *issues) {  // sorted by offset
    const size_t target = std::min<uint64_t>(issue.offset, s.size());
    for (; pos < target; ++pos) {
      const unsigned char c = s[pos];
      if (c == '\n') {
        ++line;
        column = 1;
      } else if ((c & 0xc0) != 0x80) {
        ++column;
      }
    }
    issue.line = line;
    issue.column = column;
  }
}

constexpr size_t kMaxKeptArenaBytes = size_t{64} << 20;

size_t ArenaBytes(const jinja::Program& p) {
  return p.exprs.capacity() * sizeof(jinja::Expr) + p.stmts.capacity() * sizeof(jinja::Stmt) +
         p.args.capacity() * sizeof(jinja::Arg) + p.top.capacity() * sizeof(jinja::NodeId) + p.text_pool.capacity();
}

}  // namespace

TemplateScan AnalyseChatTemplate(std::string_view tmpl, const TemplateScanOptions& opts) {
  TemplateScan scan;
  if (opts.max_issues == 0) return scan;
  if (tmpl.size() > opts.max_bytes) {
    scan.issues.push_back({Kind::kTooLarge, opts.max_bytes, 0, 0,
                           std::to_string(tmpl.size()) + " bytes > " + std::to_string(opts.max_bytes)});
    return scan;
  }
  ScanBytes(tmpl, opts.max_issues, &scan.issues);
  jinja::ParseOptions parse_options;
  parse_options.max_nesting = opts.max_nesting;
  parse_options.crash_nesting = opts.crash_nesting;
  parse_options.max_issues = opts.max_issues;
  // The syntax tree's arenas are kept per thread from one template to the
  // next: a 1 MiB template's are ~20 MiB, past glibc's mmap threshold, so
  // fresh ones would be fresh pages from the kernel every time, a page fault
  // per 4 KiB that made the analysis of large templates cost more per KiB
  // than that of small ones (issue 31). Arenas past kMaxKeptArenaBytes (a
  // template far beyond GG8001's default) are given back after use.
  thread_local jinja::ParseResult parsed;
  jinja::Parse(tmpl, parse_options, &parsed);
  for (jinja::ParseIssue& issue : parsed.issues) {
    scan.issues.push_back({KindOf(issue.kind), issue.offset, 0, 0, EscapeForDisplay(issue.detail, 120)});
  }
  jinja::Analyse(parsed.program, tmpl, opts, &scan);
  // What a template never prints cannot be told from part of it: a
  // template Jinja2 would not parse is judged on what it does print.
  const bool partial = std::any_of(scan.issues.begin(), scan.issues.end(), [](const TemplateIssue& i) {
    return i.kind == Kind::kParseError || i.kind == Kind::kUnterminated;
  });
  if (partial) {
    std::erase_if(scan.behaviour_issues, [](const TemplateIssue& i) {
      return i.kind == Kind::kSystemDropped || i.kind == Kind::kContentDropped;
    });
  }
  if (ArenaBytes(parsed.program) > kMaxKeptArenaBytes) parsed = jinja::ParseResult();
  auto by_offset = [](const TemplateIssue& a, const TemplateIssue& b) { return a.offset < b.offset; };
  std::stable_sort(scan.issues.begin(), scan.issues.end(), by_offset);
  if (scan.issues.size() > opts.max_issues) scan.issues.resize(opts.max_issues);
  // The behaviour issues are a list of their own, each kind capped on its
  // own (recorder.h), so that notes listing a template's text never push an
  // escape out of the list.
  std::stable_sort(scan.behaviour_issues.begin(), scan.behaviour_issues.end(), by_offset);
  for (std::vector<TemplateIssue>* list : {&scan.issues, &scan.behaviour_issues}) {
    for (TemplateIssue& issue : *list) {
      // Errors at the end of the template point at its last byte: every
      // offset lies inside the template.
      if (!tmpl.empty() && issue.offset >= tmpl.size()) issue.offset = tmpl.size() - 1;
      if (issue.detail.size() > kMaxDetail) issue.detail = issue.detail.substr(0, kMaxDetail - 3) + "...";
    }
    Locate(tmpl, list);
  }
  return scan;
}

std::vector<TemplateIssue> ScanChatTemplate(std::string_view tmpl, const TemplateScanOptions& opts) {
  return AnalyseChatTemplate(tmpl, opts).issues;
}

const char* TemplateIssueKindName(TemplateIssueKind kind) {
  switch (kind) {
    case Kind::kNonPrintableByte: return "non-printable-byte";
    case Kind::kDunderAccess: return "dunder-access";
    case Kind::kAttrFilter: return "attr-filter";
    case Kind::kDangerousName: return "dangerous-name";
    case Kind::kGlobalsHelper: return "globals-helper";
    case Kind::kRecursiveMacro: return "recursive-macro";
    case Kind::kUnboundedRecursion: return "unbounded-recursion";
    case Kind::kDeepNesting: return "deep-nesting";
    case Kind::kExcessiveNesting: return "excessive-nesting";
    case Kind::kUnterminated: return "unterminated";
    case Kind::kTooLarge: return "too-large";
    case Kind::kComputedName: return "computed-name";
    case Kind::kFileAccess: return "file-access";
    case Kind::kRenderBomb: return "render-bomb";
    case Kind::kParseError: return "parse-error";
    case Kind::kContentGatedText: return "content-gated-text";
    case Kind::kOwnText: return "own-text";
    case Kind::kTextUrl: return "text-url";
    case Kind::kTextMarkup: return "text-markup";
    case Kind::kTextCommand: return "text-command";
    case Kind::kTextBlob: return "text-blob";
    case Kind::kInvisibleText: return "invisible-text";
    case Kind::kSystemDropped: return "system-dropped";
    case Kind::kContentDropped: return "content-dropped";
    case Kind::kContentRewritten: return "content-rewritten";
    case Kind::kContentMoved: return "content-moved";
    case Kind::kForgedTurn: return "forged-turn";
    case Kind::kInsertedText: return "inserted-text";
    case Kind::kUnknownSpecialToken: return "unknown-special-token";
  }
  return "unknown";
}

}  // namespace ggufguard
