// The interpreter (interpreter.h) driven directly on parsed templates:
// scopes and branches, loop passes, macro rounds and the visit budget.
// template_analysis_test.cc covers the attack techniques end to end.
#include "ggufguard/template/interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "ggufguard/template/parser.h"

namespace ggufguard::jinja::analysis {
namespace {

TemplateScan Interpret(std::string_view src, TemplateScanOptions opts = {}) {
  ParseResult parsed = Parse(src);
  TemplateScan out;
  Interpreter(parsed.program, src, opts, &out).Run();
  return out;
}

bool Has(const TemplateScan& s, TemplateIssueKind kind) {
  return std::any_of(s.issues.begin(), s.issues.end(), [&](const TemplateIssue& i) { return i.kind == kind; });
}

TEST(TemplateInterpreterTest, ABranchThatMayRunJoinsWithTheBinding) {
  // The set under an unknown condition may or may not run: both values reach the subscript.
  EXPECT_TRUE(Has(Interpret("{% set k = 'role' %}{% if x %}{% set k = '__class__' %}{% endif %}{{ m[k] }}"),
                  TemplateIssueKind::kDunderAccess));
  // A branch that cannot run leaves the binding alone.
  EXPECT_FALSE(Has(Interpret("{% set k = 'role' %}{% if false %}{% set k = '__class__' %}{% endif %}{{ m[k] }}"),
                   TemplateIssueKind::kDunderAccess));
}

TEST(TemplateInterpreterTest, ScopesEnd) {
  // {% with %} and a loop's target end with their block.
  EXPECT_FALSE(Has(Interpret("{% with k = '__class__' %}{% endwith %}{{ m[k] }}"), TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Has(Interpret("{% with k = '__class__' %}{{ m[k] }}{% endwith %}"), TemplateIssueKind::kDunderAccess));
}

TEST(TemplateInterpreterTest, NamespaceValuesCarryAcrossLoopPasses) {
  // The second pass sees what the first set.
  EXPECT_TRUE(Has(Interpret("{% set ns = namespace(k='role') %}{% for m in messages %}{{ m[ns.k] }}"
                      "{% set ns.k = '__class__' %}{% endfor %}"),
                  TemplateIssueKind::kDunderAccess));
}

TEST(TemplateInterpreterTest, MacroBodiesSeeTheirCallSitesArguments) {
  EXPECT_TRUE(Has(Interpret("{% macro f(k) %}{{ m[k] }}{% endmacro %}{{ f('__class__') }}"),
                  TemplateIssueKind::kDunderAccess));
  EXPECT_FALSE(Has(Interpret("{% macro f(k) %}{{ m[k] }}{% endmacro %}{{ f('content') }}"),
                   TemplateIssueKind::kDunderAccess));
}

TEST(TemplateInterpreterTest, FoldsReplaceOfTheEmptyStringWithACount) {
  // Python: '_class__'.replace('', '_', 1) is '__class__' (the rest stays).
  EXPECT_TRUE(Has(Interpret("{{ messages['_class__'.replace('', '_', 1)] }}"), TemplateIssueKind::kDunderAccess));
  EXPECT_FALSE(Has(Interpret("{{ messages['ole'.replace('', 'r', 1)] }}"), TemplateIssueKind::kDunderAccess));
}

TEST(TemplateInterpreterTest, ALiteralOnEitherSideOfAConcatenationMakesTheNameTemplateMade) {
  // x ~ '_' was template-made, '__cla' ~ x read as the request's: now both
  // are (tests/data/chat_templates/attack/literal_prefix_concat.jinja).
  EXPECT_TRUE(Has(Interpret("{% set c = messages|length * 0 %}{{ m['__cla' ~ ('%c' % (c + 115))] }}"),
                  TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ m[m.content ~ '__'] }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ m['__' ~ m.content] }}"), TemplateIssueKind::kComputedName));
  // The benign neighbours: such a concatenation rendered, not used as a
  // name, and a name from the request alone.
  EXPECT_TRUE(Interpret("{% for m in messages %}{{ '<|im_start|>' ~ m.role ~ '\\n' }}{% endfor %}").issues.empty());
  EXPECT_TRUE(Interpret("{{ m[m.role] }}").issues.empty());
}

TEST(TemplateInterpreterTest, AMixedListKeepsItsLiterals) {
  // tests/data/chat_templates/attack/mixed_list_literal.jinja
  EXPECT_TRUE(Has(Interpret("{% for k in ['__class__', m.role] %}{{ m[k] }}{% endfor %}"),
                  TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Has(Interpret("{{ m[(['x', m.role, '__class__'])[i]] }}"), TemplateIssueKind::kDunderAccess));
  // The benign neighbour: a list of field names and the request's value.
  EXPECT_TRUE(Interpret("{% for k in ['content', m.role] %}{{ m[k] }}{% endfor %}").issues.empty());
}

TEST(TemplateInterpreterTest, APieceOfALiteralWithoutTheMakingsOfANameIsTheRequests) {
  // GigaChat 3.5's JSON pointer walk: $ref of a schema that may be one of
  // the template's own {'type': 'any'} literals, sliced, split and
  // unescaped, then used as a key. No piece of 'k', 'type' or 'any' is a name.
  EXPECT_TRUE(Interpret("{% for key, val in [['k', {'type': 'any'}]] %}{% for seg in val['$ref'][2:].split('/') %}"
                        "{{ tools[seg | replace('~1', '/') | replace('~0', '~')] }}{% endfor %}{% endfor %}")
                  .issues.empty());
  EXPECT_TRUE(Interpret("{{ m[(m.content or 'xxany')[2:].lower().strip()] }}").issues.empty());
  // The neighbours: a literal with an underscore, a replacement that puts
  // one in, a format field, the attr filter's name in another case.
  EXPECT_TRUE(Has(Interpret("{{ m[(m.content or 'xx__class__')[2:]] }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ m[(m.content or 'class') | replace('c', '__c')] }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ (m.content or 'x{0}')[1:].format(m) }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ x | map((m.content or 'xATTR')[1:].lower(), 'y') | list }}"),
                  TemplateIssueKind::kComputedName));
}

TEST(TemplateInterpreterTest, ManyLiteralsWithoutTheMakingsOfANameAreNoComputedName) {
  // Llama Guard 3's categories: more literals than a value follows one by
  // one, iterated and read back by key.
  const std::string dict =
      "{'S1': 'Violent Crimes.', 'S2': 'Non-Violent Crimes.', 'S3': 'Sex Crimes.', 'S4': 'Child Exploitation.', "
      "'S5': 'Defamation.', 'S6': 'Specialized Advice.', 'S7': 'Privacy.', 'S8': 'Intellectual Property.', "
      "'S9': 'Indiscriminate Weapons.', 'S10': 'Hate.', 'S11': 'Self-Harm.', 'S12': 'Sexual Content.', "
      "'S13': 'Elections.'}";
  auto guard = [&](const std::string& d) {
    return "{% if categories is not defined %}{% set categories = " + d +
           " %}{% endif %}{% for key in categories %}{{ key ~ ': ' ~ categories[key] }}{% endfor %}";
  };
  EXPECT_TRUE(Interpret(guard(dict)).issues.empty());
  // The neighbours: one value, or one key, with the makings of a name.
  std::string value = dict, key = dict;
  value.replace(value.find("Hate."), 5, "__x__");
  key.replace(key.find("'S10'"), 5, "'_S10'");
  EXPECT_TRUE(Has(Interpret(guard(value)), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret(guard(key)), TemplateIssueKind::kComputedName));
}

TEST(TemplateInterpreterTest, IteratingADictMayGiveItsKeys) {
  // A dict literal joined with the request's value: the loop variable may
  // be any of its keys, not only its values.
  EXPECT_TRUE(Has(Interpret("{% if c is not defined %}{% set c = {'__class__': 1} %}{% endif %}"
                            "{% for k in c %}{{ m[k] }}{% endfor %}"),
                  TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Interpret("{% if c is not defined %}{% set c = {'role': 1} %}{% endif %}"
                        "{% for k in c %}{{ m[k] }}{% endfor %}")
                  .issues.empty());
}

TEST(TemplateInterpreterTest, AMacroValueIsFollowedToItsCalls) {
  const auto unbounded = TemplateIssueKind::kUnboundedRecursion;
  // axolotl's jamba: macros kept in a list and called through it by index,
  // with the request's data. No call leads back: nothing recurses.
  const TemplateScan dispatch = Interpret(
      "{% macro docs(d) %}{{ d }}{% endmacro %}{% macro knobs(k) %}{{ k }}{% endmacro %}"
      "{% macro last(d, k) %}{% set calls = [] %}{% set params = [] %}"
      "{% if d %}{% set calls = calls + [docs] %}{% set params = params + [[d]] %}{% endif %}"
      "{% if k %}{% set calls = calls + [knobs] %}{% set params = params + [[k]] %}{% endif %}"
      "{% for i in range(calls|length) %}{{ calls[i](*params[i]) }}{% endfor %}{% endmacro %}"
      "{{ last(documents, knobs_given) }}");
  EXPECT_TRUE(dispatch.issues.empty());
  // The neighbours, each a self-application Jinja2 recurses on without end:
  // through a parameter, a list, a default, a dict, and where the analysis
  // does not follow a value (a namespace attribute, varargs, kwargs, a
  // method's argument, a star argument).
  for (const char* t : {
           "{% macro ap(g) %}{{ g(g) }}{% endmacro %}{{ ap(ap) }}",
           "{% macro ap(g) %}{{ g[0](g) }}{% endmacro %}{{ ap([ap]) }}",
           "{% macro f(g=f) %}{{ g() }}{% endmacro %}{{ f() }}",
           "{% macro f(d) %}{{ d['g'](d) }}{% endmacro %}{{ f({'g': f}) }}",
           "{% macro f() %}{{ g() }}{% endmacro %}{% set g = f %}{{ f() }}",
           "{% set ns = namespace(x=none) %}{% macro f() %}{{ ns.x() }}{% endmacro %}{% set ns.x = f %}{{ f() }}",
           "{% macro f() %}{{ varargs[0](varargs[0]) }}{% endmacro %}{{ f(f) }}",
           "{% macro f() %}{{ kwargs.g(g=kwargs.g) }}{% endmacro %}{{ f(g=f) }}",
           "{% set l = [] %}{% macro f() %}{{ l[0]() }}{% endmacro %}{% do l.append(f) %}{{ f() }}",
           "{% macro f(l) %}{{ l[0](*l) }}{% endmacro %}{{ f([f]) }}",
       }) {
    EXPECT_TRUE(Has(Interpret(t), unbounded)) << t;
  }
  // A macro's own attributes are still reached through an element.
  EXPECT_TRUE(Has(Interpret("{% macro f() %}x{% endmacro %}{{ [f][0]._func }}"), TemplateIssueKind::kDunderAccess));
  // A caller used as a value is not followed.
  EXPECT_TRUE(Has(Interpret("{% macro f() %}{% set c = caller %}{{ c() }}{% endmacro %}{% call f() %}x{% endcall %}"),
                  unbounded));
}

TEST(TemplateInterpreterTest, FormatMapWalksItsFieldsAsFormatDoes) {
  // tests/data/chat_templates/attack/format_map_field.jinja, format_map_name.jinja
  EXPECT_TRUE(Has(Interpret("{{ '{m.__class__}'.format_map({'m': m}) }}"), TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Has(Interpret("{% set n = '{u}{u}class{u}{u}'.format_map({'u': '_'}) %}{{ m[n] }}"),
                  TemplateIssueKind::kDunderAccess));
  // A format string not folded is judged as str.format's is.
  EXPECT_TRUE(Has(Interpret("{{ ('{m.' ~ x ~ '}').format_map({'m': m}) }}"), TemplateIssueKind::kComputedName));
  // The benign neighbours: the request's own fields, a dict literal of safe names.
  EXPECT_TRUE(Interpret("{{ '{role}: {content}'.format_map(m) }}{{ m['{k}'.format_map({'k': 'role'})] }}").issues.empty());
}

TEST(TemplateInterpreterTest, LettersPickedFromAReprAreTheTemplates) {
  // tests/data/chat_templates/attack/string_repr_letters.jinja
  EXPECT_TRUE(Has(Interpret("{% set s = messages|string %}{% set u = s[s.find('_')] %}{{ m[u ~ u ~ 'x'] }}"),
                  TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{% set s = messages|tojson %}{{ m[s[s.find('_')] ~ s[s.find('c')]] }}"),
                  TemplateIssueKind::kComputedName));
  // The benign neighbours: the repr printed or measured, a request name used as is.
  EXPECT_TRUE(Interpret("{% set s = tools|tojson %}{{ s[:200] }}{{ s|length }}{{ m[m.role] }}").issues.empty());
}

TEST(TemplateInterpreterTest, AMacroReadsGlobalsSetAfterItsDefinition) {
  // tests/data/chat_templates/attack/late_bound_macro_global.jinja
  EXPECT_TRUE(Has(Interpret("{% macro f(x) %}{{ x[k] }}{% endmacro %}{% set k = '__class__' %}{{ f(m) }}"),
                  TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Has(Interpret("{% macro f(x) %}{{ x[k] }}{% endmacro %}{% set k = 'role' %}{{ f(m) }}"
                            "{% if y %}{% set k = '__cla' ~ 'ss__' %}{% endif %}{{ f(m) }}"),
                  TemplateIssueKind::kDunderAccess));
  EXPECT_TRUE(Has(Interpret("{% macro f(x) %}{{ x[a] }}{% endmacro %}{% set a = lipsum|string %}{{ f(m) }}"),
                  TemplateIssueKind::kComputedName));
  // A set inside a loop is the loop's: a macro never sees it (Jinja2 renders this).
  EXPECT_FALSE(Has(Interpret("{% macro f(x) %}{{ x[k] }}{% endmacro %}{% for i in l %}{% set k = '__class__' %}"
                             "{{ f(m) }}{% endfor %}"),
                   TemplateIssueKind::kDunderAccess));
  // A macro defined in a loop sees that loop's later sets (Jinja2 raises SecurityError).
  EXPECT_TRUE(Has(Interpret("{% for m in l %}{% macro f() %}{{ m[k] }}{% endmacro %}{% set k = '__class__' %}"
                            "{{ f() }}{% endfor %}"),
                  TemplateIssueKind::kDunderAccess));
  // The benign neighbour: field names set after the macro.
  EXPECT_TRUE(Interpret("{% macro f(x) %}{{ x[k] }}{% endmacro %}{% set k = 'content' %}{{ f(m) }}").issues.empty());
}

TEST(TemplateInterpreterTest, AnUnmodelledFilterIsDerivedFromItsInput) {
  // Unknown to Jinja2 (no_such) or known but not modelled (min): one rule.
  EXPECT_TRUE(Has(Interpret("{{ m[lipsum|no_such] }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Has(Interpret("{{ m[lipsum|min] }}"), TemplateIssueKind::kComputedName));
  EXPECT_TRUE(Interpret("{{ m[m.role|no_such] }}{{ m[m.role|min] }}").issues.empty());
}

TEST(TemplateInterpreterTest, IssuesAreCappedAndDeduplicated) {
  std::string src;
  for (int i = 0; i < 100; ++i) src += "{{ m.__class__ }}";
  TemplateScanOptions opts;
  opts.max_issues = 5;
  EXPECT_EQ(Interpret(src, opts).issues.size(), 5u);
  EXPECT_EQ(Interpret("{% for i in [1, 2] %}{{ m.__class__ }}{% endfor %}").issues.size(), 1u);
}

TEST(TemplateInterpreterTest, VisitBudgetEndsDeepMacroChains) {
  // Each macro calls the next with a literal: every round re-analyses a
  // body, within a budget proportional to the template.
  std::string src;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    src += "{% macro m" + std::to_string(i) + "(x) %}{{ m" + std::to_string(i + 1) + "(x ~ 'a') }}{% endmacro %}";
  }
  src += "{% macro m" + std::to_string(n) + "(x) %}{{ x }}{% endmacro %}{{ m0('b') }}";
  const TemplateScan s = Interpret(src);
  EXPECT_FALSE(Has(s, TemplateIssueKind::kDunderAccess));
}

}  // namespace
}  // namespace ggufguard::jinja::analysis
