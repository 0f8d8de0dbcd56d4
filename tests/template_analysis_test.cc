// The analyser against each technique of a template attack, one per line,
// and against the look-alikes it must leave alone. The realistic templates
// (tests/data/chat_templates) are template_corpus_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/template/lexer.h"
#include "ggufguard/template/parser.h"
#include "ggufguard/template/scan.h"

namespace ggufguard {
namespace {

using K = TemplateIssueKind;

std::string Dump(const std::vector<TemplateIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    out += std::string(TemplateIssueKindName(i.kind)) + "@" + std::to_string(i.offset) + " " + i.detail + "\n";
  }
  return out;
}

bool Has(const std::vector<TemplateIssue>& issues, K kind) {
  return std::any_of(issues.begin(), issues.end(), [&](const TemplateIssue& i) { return i.kind == kind; });
}

struct Case {
  const char* tmpl;
  K kind;
};

void ExpectFinds(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const auto issues = ScanChatTemplate(c.tmpl);
    EXPECT_TRUE(Has(issues, c.kind)) << TemplateIssueKindName(c.kind) << " expected in\n" << c.tmpl << "\n" << Dump(issues);
  }
}

// Findings a default policy treats as errors: what "accepted" must not have.
bool HasError(const std::vector<TemplateIssue>& issues) {
  for (const auto& i : issues) {
    switch (i.kind) {
      case K::kNonPrintableByte:
      case K::kDangerousName:
      case K::kRecursiveMacro:
      case K::kExcessiveNesting:
      case K::kUnterminated:
      case K::kParseError:
        break;
      default:
        return true;
    }
  }
  return false;
}

TEST(TemplateAnalysisTest, NamesComputedAtRenderTimeAreFolded) {
  ExpectFinds({
      {"{{ messages[('_'*2 ~ 'class' ~ '_'*2)] }}", K::kDunderAccess},
      {"{{ messages['%c'|format(95) ~ '%c'|format(95) ~ 'class__'] }}", K::kDunderAccess},
      {"{{ messages[['_','_']|join ~ 'class__'] }}", K::kDunderAccess},
      {"{{ messages['XXclassXX'|replace('X','_')] }}", K::kDunderAccess},
      {"{{ messages['{0}{0}globals{0}{0}'.format('_')] }}", K::kDunderAccess},
      {"{{ messages['globals'.center(11,'_')] }}", K::kDunderAccess},
      {"{{ messages['x__globals__x'[1:-1]] }}", K::kDunderAccess},
      {"{{ messages[dict(__glo=1, bals__=1)|join] }}", K::kDunderAccess},
      {"{{ messages[{'__glo': 1, 'bals__': 2}|join] }}", K::kDunderAccess},
      {"{% set G %}__globals__{% endset %}{{ lipsum[G] }}", K::kDunderAccess},
      {"{% set G %}\n  __globals__\n{% endset %}{{ messages[G] }}", K::kDunderAccess},
      {"{% set d = '_' ~ '_' %}{{ messages[d ~ 'class' ~ d] }}", K::kDunderAccess},
      {"{{ messages['__SSALC__'|lower|reverse] }}", K::kDunderAccess},
      {"{{ messages['__class__'|upper|lower] }}", K::kDunderAccess},
      {"{{ messages['{:_^9}'.format('class')] }}", K::kDunderAccess},
      {"{{ messages['%s%sclass%s%s' % ('_','_','_','_')] }}", K::kDunderAccess},
      {"{{ messages[('_' * 2) + 'class' + ('_' * 2)] }}", K::kDunderAccess},
      {"{{ messages['ssalc__'[::-1] ~ '__'] }}", K::kDunderAccess},
      {"{% macro u() %}__{% endmacro %}{{ messages[u() ~ 'class' ~ u()] }}", K::kComputedName},
      {"{% set ns = namespace(d='') %}{% for i in range(2) %}{% set ns.d = ns.d ~ '_' %}{% endfor %}"
       "{{ messages[ns.d ~ 'class' ~ ns.d] }}", K::kComputedName},
      {"{% set ns = namespace(d='x') %}{% if messages %}{% set ns.d = '__' %}{% endif %}{{ messages[ns.d ~ 'class' ~ ns.d] }}",
       K::kDunderAccess},
      {"{% set p = [] %}{% for c in '__' %}{% do p.append(c) %}{% endfor %}{{ messages[p|join ~ 'class__'] }}",
       K::kComputedName},
      {"{{ messages[(raise_exception|string)[15] ~ 'x'] }}", K::kComputedName},
      {"{{ '{0.__class__}'.format(messages) }}", K::kDunderAccess},
      {"{{ messages|map(attribute='__class__')|list }}", K::kDunderAccess},
      {"{{ messages|map(attribute='role.__class__')|list }}", K::kDunderAccess},
      {"{{ messages|selectattr('__class__')|list }}", K::kDunderAccess},
      {"{{ messages|groupby('_' ~ '_class__') }}", K::kDunderAccess},
      {"{{ messages|sort(attribute=(raise_exception|string)[1:3]) }}", K::kComputedName},
      {"{{ messages|map('attr', '__class__')|list }}", K::kAttrFilter},
      {"{% macro m(f, k) %}{{ f[k] }}{% endmacro %}{{ m(messages, '__glo' ~ 'bals__') }}", K::kDunderAccess},
  });
}

// A name a branch may set keeps, when the branch does not run, what it had:
// for one nothing bound, the request's value. So the request's own keys
// index the request's tools after Qwen3-Coder's `set tools = []` default. A
// literal list still reaches its names however it is joined, and a list
// filled through a namespace attribute is not the empty literal it started
// as (a review's laundering attempts, each a working exploit in Jinja2
// without its sandbox).
TEST(TemplateAnalysisTest, AnEmptyDefaultListMakesNoComputedNames) {
  const char* clean =
      "{% if tools is not defined %}{% set tools = [] %}{% endif %}"
      "{% for tool in tools %}{% for k in tool if k not in ['name'] %}{{ tool[k] }}{% endfor %}{% endfor %}";
  EXPECT_FALSE(HasError(ScanChatTemplate(clean))) << Dump(ScanChatTemplate(clean));
  // A literal or the request's value is neither template-made nor computed.
  for (const char* literal_or_request :
       {"{% if y %}{% set key = 'role' %}{% endif %}{{ message[key] }}",
        "{% if keys is not defined %}{% set keys = ['name', 'type'] %}{% endif %}"
        "{% for k in keys %}{{ tool[k] }}{% endfor %}"}) {
    EXPECT_FALSE(HasError(ScanChatTemplate(literal_or_request))) << literal_or_request << "\n"
                                                                 << Dump(ScanChatTemplate(literal_or_request));
  }
  ExpectFinds({
      {"{% if x is not defined %}{% set x = ['__class__'] %}{% endif %}{% for k in x %}{{ foo[k] }}{% endfor %}",
       K::kDunderAccess},
      // List concatenation keeps the members of both sides: the name is '__class__'.
      {"{% set e = [] %}{% for k in e + ['__class__'] %}{{ foo[k] }}{% endfor %}", K::kDunderAccess},
      {"{% for k in [] %}{{ foo[k ~ 'x'] }}{% endfor %}", K::kComputedName},
      {"{% set l = ['__class__'] %}{% if x %}{% set l = ['a'] %}{% endif %}{% for k in l %}{{ foo[k] }}{% endfor %}",
       K::kDunderAccess},
      {"{% for k in (['__class__'] if x else ['a']) %}{{ foo[k] }}{% endfor %}", K::kDunderAccess},
      {"{% set ns = namespace(l=[], a=[]) %}{% set _ = ns.l.append(lipsum) %}"
       "{% set _ = ns.a.append('_'*2 ~ 'globals' ~ '_'*2) %}"
       "{% for f in ns.l %}{% for a in ns.a %}{{ f[a] }}{% endfor %}{% endfor %}",
       K::kComputedName},
      // Through an alias: b is a, so the loop over a sees lipsum.
      {"{% set a = [] %}{% set b = a %}{% set _ = b.append(lipsum) %}{% for k in a %}{{ k[x] }}{% endfor %}",
       K::kGlobalsHelper},
      // Through a receiver no variable names: a subscript, a macro's
      // parameter (the caller's list), the request's own list.
      {"{% set d = {'x': []} %}{% set _ = d.x.append(lipsum) %}{% for f in d.x %}{{ f[y] }}{% endfor %}",
       K::kGlobalsHelper},
      {"{% set d = {'x': []} %}{% set _ = d.x.append('__class__') %}{% for k in d.x %}{{ foo[k] }}{% endfor %}",
       K::kDunderAccess},
      {"{% macro add(l) %}{% set _ = l.append(lipsum) %}{% endmacro %}{% set a = [] %}{{ add(a) }}"
       "{% for f in a %}{{ f[y] }}{% endfor %}",
       K::kGlobalsHelper},
      {"{% set _ = messages.append(lipsum) %}{% for m in messages %}{{ m[y] }}{% endfor %}", K::kGlobalsHelper},
  });
  // Appending the request's data or a literal there taints nothing.
  const char* appends =
      "{% for m in messages %}{% set _ = m.tool_calls.append('x') %}{% endfor %}"
      "{% for k in tool %}{{ tool[k] }}{% endfor %}";
  EXPECT_FALSE(HasError(ScanChatTemplate(appends))) << Dump(ScanChatTemplate(appends));
}

// vLLM's MiniCPM3 tool template: a macro given `x if x else 'Any'` reads
// spec.type of it. A literal joined with the request's value is either, not
// template-made; computing on it is.
TEST(TemplateAnalysisTest, ALiteralJoinedWithTheRequestsValueIsNotTemplateMade) {
  for (const char* accepted : {
           "{% macro t(name, spec) %}{% set m = {'string': 'str', 'number': 'float'} %}"
           "{% if m[spec.type] is defined %}{{ m[spec.type] }}"
           "{% elif spec.type == 'object' %}{{ t(name, spec.extra if spec.extra else 'Any') }}"
           "{% elif spec.type == 'array' %}{{ t(name, spec['items']) }}"
           "{% else %}{% for u in spec.type %}{{ t(name, {'type': u}) }}{% endfor %}{% endif %}"
           "{% endmacro %}{{ t('p', tools[0]) }}",
           // The same name set in a loop, from the request or among literals.
           "{% set ns = namespace(k='') %}{% for m in messages %}{% set ns.k = m.role %}{% endfor %}"
           "{{ messages[0][ns.k] }}",
           "{% set ns = namespace(k='content') %}{% for m in messages %}{% if m.content is not string %}"
           "{% set ns.k = 'text' %}{% endif %}{% endfor %}{{ messages[0][ns.k] }}",
       }) {
    EXPECT_FALSE(HasError(ScanChatTemplate(accepted))) << accepted << "\n" << Dump(ScanChatTemplate(accepted));
  }
  ExpectFinds({
      {"{% set a = x or '__cl' %}{% set b = y or 'ass__' %}{{ foo[a ~ b] }}", K::kComputedName},
      {"{{ foo[(x or 'xx__class__')[2:]] }}", K::kComputedName},
      {"{{ foo[(x or '__CLASS__')|lower] }}", K::kComputedName},
      {"{% set u = '%c'|format(x or 95) %}{{ foo[u ~ u ~ m.role ~ u ~ u] }}", K::kComputedName},
      {"{{ foo[x or '__class__'] }}", K::kDunderAccess},
      {"{% macro f(k='__class__') %}{{ foo[k] }}{% endmacro %}{{ f(x) }}", K::kDunderAccess},
      // A literal container given to a macro reaches its body (before, only
      // a literal string did).
      {"{% macro f(d) %}{{ foo[d.k] }}{% endmacro %}{{ f({'k': '__class__'}) }}", K::kDunderAccess},
      {"{% macro f(l) %}{% for k in l %}{{ foo[k] }}{% endfor %}{% endmacro %}{{ f(['__class__']) }}",
       K::kDunderAccess},
      {"{% set l = x if x else ['__class__'] %}{{ foo[l[0]] }}", K::kDunderAccess},
      {"{% for k in [x or '__class__'] %}{{ foo[k] }}{% endfor %}", K::kDunderAccess},
      {"{% for l in [[x or '__class__']] %}{% for k in l %}{{ foo[k] }}{% endfor %}{% endfor %}",
       K::kDunderAccess},
      // A name that grows in a loop past what the passes over it see is
      // template-made.
      {"{% set ns = namespace(a='class__', b='') %}{% for m in messages %}{% set ns.b = ns.a %}"
       "{% set ns.a = '_' ~ ns.a %}{% endfor %}{{ foo[ns.b] }}",
       K::kComputedName},
  });
}

// GigaChat 3.5 (llama.cpp's models/templates): render_role_message(message)
// is given the request's messages and dict literals whose content is a
// macro's output, reads message.embed_files, and looks each file's type up
// in a namespace of special tokens: add_tokens[f.type].
TEST(TemplateAnalysisTest, DictLiteralsAreReadByKeyAndNamespacesByTheRequestsNames) {
  for (const char* accepted : {
           "{% macro r(message, role=none) %}{% if not role %}{% set role = message['role'] %}{% endif %}"
           "{% for f in message.get('embed_files', []) %}{{ tokens.start ~ tokens[f.type] }}{% endfor %}"
           "{{ role ~ message['content'] }}{% endmacro %}{% macro body() %}x{% endmacro %}"
           "{% set tokens = namespace(start='<|file|>', image='[img]', audio='[audio]') %}"
           "{{ r({'role': 'tool', 'content': body()}) }}{% for m in messages %}{{ r(m, role='user') }}{% endfor %}",
           "{% macro g() %}x{% endmacro %}{% set d = {'role': 'a', 'content': g()} %}{{ messages[0][d.role] }}",
           "{% set ns = namespace(a='x') %}{{ ns['a'] }}{{ ns[messages[0].role] }}",
           // A JSON pointer walked through a schema that a macro is also given
           // as dict literals: the value is set anew in every pass.
           "{% macro ts(schema, root=none) %}{% set r = schema if root is none else root %}"
           "{% if schema['$ref'] is string %}{% set p = namespace(n=r) %}"
           "{% for seg in schema['$ref'][2:].split('/') %}{% set p.n = p.n[seg] %}{% endfor %}{{ ts(p.n, r) }}"
           "{% else %}{% for t in schema.type %}{{ ts({'type': t, 'enum': schema.enum}, r) }}{% endfor %}"
           "{{ ts({'type': 'string'}, r) }}{% endif %}{% endmacro %}{{ ts(tools[0].parameters) }}",
       }) {
    EXPECT_FALSE(HasError(ScanChatTemplate(accepted))) << accepted << "\n" << Dump(ScanChatTemplate(accepted));
  }
  ExpectFinds({
      {"{% set d = x if x else {'type': '__class__'} %}{{ foo[d.type] }}", K::kDunderAccess},
      {"{{ foo[{'a': 'b', 'c': '__class__'}[m.role]] }}", K::kDunderAccess},
      {"{{ foo[{'a': 'b'}.get(m.role, '__class__')] }}", K::kDunderAccess},
      {"{% for k, v in {'a': '__class__'}|items %}{{ foo[v] }}{% endfor %}", K::kDunderAccess},
      {"{{ foo[dict(a='__class__').a] }}", K::kDunderAccess},
      {"{{ foo[{m.role: '__class__'}[m.role]] }}", K::kDunderAccess},
      // A dict's bound method is no key; its repr is the template's.
      {"{% set r = {'a': 1}.items|string %}{{ foo[r[1:3] ~ r[1:3]] }}", K::kComputedName},
      // What a namespace holds comes with a read by the request's name, or
      // through any name but the one that set it.
      {"{% set ns = namespace(h=lipsum) %}{{ ns[m.role][m.content] }}", K::kComputedName},
      {"{% set ns = namespace(a=lipsum) %}{% macro f(n) %}{{ n.a[m.content] }}{% endmacro %}{{ f(ns) }}",
       K::kComputedName},
      {"{% set ns = namespace(a='x') %}{% set b = ns %}{% set b.a = lipsum %}{{ ns.a[m.content] }}",
       K::kComputedName},
      {"{% for n in [namespace(a=lipsum)] %}{{ n.a[m.content] }}{% endfor %}", K::kComputedName},
      {"{% set ns = namespace(a='x') %}{{ ns['_Namespace__attrs'] }}", K::kDunderAccess},
      {"{% set ns = namespace(a='x') %}{{ ns[m.role ~ '_x'] }}", K::kComputedName},
      // A literal dict changed where the analysis cannot follow it: through a
      // macro's parameter (the caller's dict), through a key of another.
      {"{% macro m(x) %}{% set _ = x.update({'a': '__class__'}) %}{% endmacro %}{% set d = {'a': 'x'} %}"
       "{{ m(d) }}{{ foo[d.a] }}",
       K::kDunderAccess},
      {"{% set d = {'x': {'a': 'x'}} %}{% set _ = d.x.update({'a': '__class__'}) %}{{ foo[d.x.a] }}",
       K::kDunderAccess},
      {"{% set _ = messages.append(lipsum) %}{{ messages[0][m.content] }}", K::kComputedName},
      {"{% macro f(n) %}{% set n.a = lipsum %}{% endmacro %}{% set ns = namespace(a='x') %}{{ f(ns) }}"
       "{{ ns.a[m.content] }}",
       K::kComputedName},
      {"{% set ns = namespace(a='x') %}{% for n in [ns] %}{% set n.a = lipsum %}{% endfor %}{{ ns.a[m.content] }}",
       K::kComputedName},
      {"{% set ns = namespace(a='x') %}{% with n = ns %}{% set n.a = lipsum %}{% endwith %}{{ ns.a[m.content] }}",
       K::kComputedName},
  });
}

TEST(TemplateAnalysisTest, RootsBeyondTheHelperNames) {
  ExpectFinds({
      {"{{ raise_exception.__globals__ }}", K::kDunderAccess},
      {"{{ raise_exception.x }}", K::kGlobalsHelper},
      {"{{ strftime_now[k] }}", K::kComputedName},
      {"{{ cycler(1).__init__ }}", K::kDunderAccess},
      {"{{ cycler(1).foo }}", K::kGlobalsHelper},
      {"{% with f = lipsum %}{{ f[messages[0]['content']] }}{% endwith %}", K::kComputedName},
      {"{% with f = lipsum %}{{ f.x }}{% endwith %}", K::kGlobalsHelper},
      {"{% for f in [joiner] %}{{ f.x }}{% endfor %}", K::kGlobalsHelper},
      {"{% macro m(f) %}{{ f.x }}{% endmacro %}{{ m(namespace) }}", K::kGlobalsHelper},
      {"{% macro m(f, k) %}{{ f[k] }}{% endmacro %}{{ m(lipsum, messages[0].content) }}", K::kComputedName},
      {"{% for m in messages %}{{ loop.x }}{% endfor %}", K::kGlobalsHelper},
      {"{{ lipsum[messages[0]['content']] }}", K::kComputedName},
      {"{% set x = lipsum %}{{ x|attr('__globals__') }}", K::kAttrFilter},
  });
}

TEST(TemplateAnalysisTest, TheTokenizerAgreesWithJinja2) {
  // A raw block ends at endraw with Unicode spaces, as Jinja2 (Python's \s) ends it.
  ExpectFinds({
      {"{% raw %}x{%\xc2\xa0" "endraw\xc2\xa0%}{{ x.__class__ }}", K::kDunderAccess},
      {"{%- raw -%}x{%-\xe3\x80\x80" "endraw -%}{{ x.__class__ }}", K::kDunderAccess},
      {"{%\xc2\xa0raw\xc2\xa0%}{{ x }}{% endraw %}{{ x.__class__ }}", K::kDunderAccess},
      {"{{\xc2\xa0x.__class__\xc2\xa0}}", K::kDunderAccess},
      {"{%+ if x %}{{ x.__class__ }}{% endif +%}", K::kDunderAccess},
      {"{# a #}{{ x.__class__ }}{#- b -#}", K::kDunderAccess},
      {"{{ x['\\x5f\\x5fclass\\x5f\\x5f'] }}", K::kDunderAccess},
      {"{{ x['\\N{low line}\\N{LOW LINE}class__'] }}", K::kDunderAccess},
      {"{{ x['__cla' 'ss__'] }}", K::kDunderAccess},
      {"{{ {'a': {}}.__class__ }}", K::kDunderAccess},  // `}}` inside braces does not end the tag
  });
  // And what Jinja2 treats as text stays text.
  for (const char* inert : {
           "{% raw %}{{ x.__class__ }}{% endraw %}",
           "{# {{ x.__class__ }} #}",
           "x.__class__ and {{ '__class__ is a Python attribute' }}",
           "{% raw %}{% endraw{% endraw %}",
       }) {
    const auto issues = ScanChatTemplate(inert);
    EXPECT_FALSE(HasError(issues)) << inert << "\n" << Dump(issues);
  }
}

TEST(TemplateAnalysisTest, FileAccessIsAnError) {
  ExpectFinds({
      {"{% include 'x' %}", K::kFileAccess},
      {"{% include 'x' ignore missing %}", K::kFileAccess},
      {"{% extends 'base' %}", K::kFileAccess},
      {"{% import 'macros' as m %}", K::kFileAccess},
      {"{% from 'macros' import render with context %}", K::kFileAccess},
  });
}

TEST(TemplateAnalysisTest, RenderTimeBombs) {
  ExpectFinds({
      {"{% for i in range(10**9) %}x{% endfor %}", K::kRenderBomb},
      {"{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}x{% endfor %}{% endfor %}{% endfor %}",
       K::kRenderBomb},
      {"{{ 'a'*10**10 }}", K::kRenderBomb},
      {"{{ [0]*10**9 }}", K::kRenderBomb},
      {"{{ 9**9**9 }}", K::kRenderBomb},
      {"{{ lipsum(n=10**8) }}", K::kRenderBomb},
      {"{{ lipsum(10**8) }}", K::kRenderBomb},
      {"{{ 'x'|center(10**9) }}", K::kRenderBomb},
      {"{{ 'x'.ljust(10**9) }}", K::kRenderBomb},
      {"{{ '%0999999999d'|format(1) }}", K::kRenderBomb},
      {"{{ '%0999999999d' % 1 }}", K::kRenderBomb},
      {"{{ '{:>999999999}'.format(1) }}", K::kRenderBomb},
      {"{{ 'x'|indent(10**9) }}", K::kRenderBomb},
      {"{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", K::kRenderBomb},
      {"{% set ns = namespace(s='ab') %}{% for m in messages %}{% set ns.s = ns.s + ns.s %}{% endfor %}", K::kRenderBomb},
      {"{{ messages*10**9 }}", K::kRenderBomb},
      {"{{ range(10**9)|list }}", K::kRenderBomb},
      {"{{ messages|batch(10**9) }}", K::kRenderBomb},
      {"{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}", K::kUnboundedRecursion},
      {"{% for x in messages recursive %}{{ loop(messages) }}{% endfor %}", K::kUnboundedRecursion},
      {"{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", K::kUnboundedRecursion},
      {"{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}", K::kUnboundedRecursion},
      {"{% macro f() %}{% if true %}{{ f() }}{% endif %}{% endmacro %}{{ f() }}", K::kUnboundedRecursion},
  });
  std::string deep = "{{ ";
  for (int i = 0; i < 300; ++i) deep += "x+";
  ExpectFinds({{(deep + "x }}").c_str(), K::kDeepNesting}});
}

TEST(TemplateAnalysisTest, BoundedWorkIsAccepted) {
  for (const char* ok : {
           "{% for i in range(10) %}{{ i }}{% endfor %}{{ '-' * 40 }}{{ '=' * 80 }}",
           "{% for i in range(messages|length) %}{{ messages[i].content }}{% endfor %}",
           "{% for m in messages %}{% for t in tools %}{{ t.name }}{% endfor %}{% endfor %}",
           "{% set ns = namespace(text='') %}{% for m in messages %}{% set ns.text = ns.text ~ m.content %}{% endfor %}",
           "{% set ns = namespace(i=0) %}{% for m in messages %}{% set ns.i = ns.i + 1 %}{% endfor %}{{ messages[ns.i] }}",
           "{{ '%d'|format(3) }}{{ '{}'.format(x) }}{{ 'x'|center(20) }}{{ x|indent(4) }}{{ 2**10 }}",
           "{% for x in tree recursive %}{{ x.name }}{% if x.children %}{{ loop(x.children) }}{% endif %}{% endfor %}",
           "{% for k, v in d|dictsort recursive %}{{ loop(v|dictsort) }}{% endfor %}",
           "{% for m in messages %}{% for key in m %}{{ m[key] }}{% endfor %}{% endfor %}",
           "{% set _x = 1 %}{{ _x }}{% set __y = 2 %}{{ __y }}",
           "{{ '' * 10**18 }}{{ 'ab' * 0 }}",  // empty results, at once
           "{% set p = [] %}{% for m in messages %}{% do p.append(m.content) %}{% endfor %}{{ p|join('\\n') }}",
       }) {
    const auto issues = ScanChatTemplate(ok);
    EXPECT_FALSE(HasError(issues)) << ok << "\n" << Dump(issues);
  }
}

TEST(TemplateAnalysisTest, FindingsSayWhereAndWhatTheNameFoldsTo) {
  const std::string t = "{{ 'hi' }}\n  {{ messages[('_'*2 ~ 'class' ~ '_'*2)] }}";
  const TemplateScan scan = AnalyseChatTemplate(t);
  ASSERT_EQ(scan.issues.size(), 1u) << Dump(scan.issues);
  const TemplateIssue& i = scan.issues[0];
  EXPECT_EQ(i.kind, K::kDunderAccess);
  EXPECT_EQ(i.offset, t.find("'_'*2"));  // the subscript, inside its parentheses
  EXPECT_EQ(i.line, 2u);
  EXPECT_EQ(i.column, 16u);
  EXPECT_EQ(i.detail, "messages[(\\x27_\\x27*2 ~ \\x27class\\x27 ~ \\x27_\\x27*2)] builds '__class__'");
  EXPECT_EQ(scan.folded_names, std::vector<std::string>{"__class__"});

  const TemplateScan roots = AnalyseChatTemplate(
      "{% set ns = namespace(a=1) %}{% for m in messages %}{{ raise_exception('x') if m.role == 'bad' }}{% endfor %}");
  EXPECT_EQ(roots.roots, (std::vector<std::string>{"namespace", "loop", "raise_exception"}));
  EXPECT_TRUE(roots.issues.empty()) << Dump(roots.issues);
}

TEST(TemplateAnalysisTest, ParseErrorsSayWhereAndDoNotHideWhatFollows) {
  const std::string t = "{{ x ) }}\n{{ y.__class__ }}";
  const auto issues = ScanChatTemplate(t);
  ASSERT_EQ(issues.size(), 2u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kParseError);
  EXPECT_EQ(issues[0].line, 1u);
  EXPECT_EQ(issues[0].column, 6u);
  EXPECT_EQ(issues[1].kind, K::kDunderAccess);
  EXPECT_EQ(issues[1].line, 2u);
  // An unknown tag, a stray else, an endfor closing an if.
  for (const char* bad : {"{% frobnicate %}", "{% else %}", "{% for x in y %}{% endif %}", "{{ }}", "{{ a b }}"}) {
    const auto found = ScanChatTemplate(bad);
    EXPECT_TRUE(Has(found, K::kParseError) || Has(found, K::kUnterminated)) << bad << "\n" << Dump(found);
  }
}

TEST(TemplateAnalysisTest, LexerDecodesStringsAsPython) {
  EXPECT_EQ(jinja::DecodeStringLiteral(R"(\x5f\u005f\U0000005f\137\N{LOW LINE}\N{latin small letter a})"), "_____a");
  EXPECT_EQ(jinja::DecodeStringLiteral(R"(a\qb\\c\'d)"), "a\\qb\\c'd");
  EXPECT_EQ(jinja::DecodeStringLiteral("a\\\nb"), "ab");
  EXPECT_EQ(jinja::DecodeStringLiteral(R"(\N{SNOWMAN})"), "\xef\xbf\xbd");
  EXPECT_EQ(jinja::DecodeStringLiteral(R"(\x5)"), "\xef\xbf\xbd");
}

TEST(TemplateAnalysisTest, ParserBuildsJinjaPrecedence) {
  // 'a' ~ x|upper is 'a' ~ (x|upper): filters bind tighter than operators.
  const jinja::ParseResult r = jinja::Parse("{{ 'a' ~ x|upper }}");
  ASSERT_TRUE(r.issues.empty());
  ASSERT_EQ(r.program.top.size(), 1u);
  const jinja::Expr& concat = r.program.expr(r.program.stmt(r.program.top[0]).a);
  ASSERT_EQ(concat.kind, jinja::ExprKind::kConcat);
  ASSERT_EQ(concat.args_count, 2u);
  EXPECT_EQ(r.program.expr(r.program.args[concat.args_begin + 1].value).kind, jinja::ExprKind::kFilter);
  // 2 ** 3 ** 2 is (2 ** 3) ** 2 in Jinja2.
  const jinja::ParseResult p = jinja::Parse("{{ 2 ** 3 ** 2 }}");
  const jinja::Expr& pow = p.program.expr(p.program.stmt(p.program.top[0]).a);
  ASSERT_EQ(pow.kind, jinja::ExprKind::kBinary);
  EXPECT_EQ(p.program.expr(pow.a).kind, jinja::ExprKind::kBinary);
  EXPECT_EQ(p.program.expr(pow.b).kind, jinja::ExprKind::kNumber);
}

}  // namespace
}  // namespace ggufguard
