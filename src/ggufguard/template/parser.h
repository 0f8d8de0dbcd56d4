// Jinja2's parser (jinja2/parser.py, 3.x grammar and precedence), for
// analysis. A tag that does not parse is reported and skipped; parsing goes
// on after it, so a syntax error never hides what follows from the analyser.
// Recursion is bounded: expressions and blocks deeper than `crash_nesting`
// are reported and flattened, never followed.
#ifndef GGUFGUARD_TEMPLATE_PARSER_H_
#define GGUFGUARD_TEMPLATE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/template/ast.h"

namespace ggufguard::jinja {

struct ParseIssue {
  enum Kind : uint8_t {
    kSyntax,            // Jinja2 would not load the template
    kUnterminated,      // a tag, string, comment, raw block or block never closed
    kExcessiveNesting,  // deeper than max_nesting
    kDeepNesting,       // deeper than crash_nesting
    kDunderToken,       // a dunder name in the skipped rest of a tag that did not parse
  };
  Kind kind;
  size_t offset;
  std::string detail;  // plain text (not escaped)
};

struct ParseOptions {
  uint32_t max_nesting = 32;
  uint32_t crash_nesting = 256;
  size_t max_issues = 64;
};

struct ParseResult {
  Program program;
  std::vector<ParseIssue> issues;
};

ParseResult Parse(std::string_view source, const ParseOptions& options = {});
// The same into `out`, whose arenas keep their capacity: a caller that
// parses template after template (scan.cc, per thread) reuses the same
// memory instead of asking malloc for fresh pages each time (issue 31).
void Parse(std::string_view source, const ParseOptions& options, ParseResult* out);

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_PARSER_H_
