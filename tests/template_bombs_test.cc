// Render-time bombs whose growth is multiplicative (GG8014), each beside a
// neighbour that grows the same way but stays small, and the policy limits
// they are measured against. The realistic templates of each shape are in
// tests/data/chat_templates (attack/bomb_*, benign/bomb_*_neighbour), which
// the Jinja2 oracle renders.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ggufguard/template/scan.h"

namespace ggufguard {
namespace {

using K = TemplateIssueKind;

std::string Dump(const std::vector<TemplateIssue>& issues) {
  std::string out;
  for (const auto& i : issues) out += std::string(TemplateIssueKindName(i.kind)) + "@" + std::to_string(i.offset) + " " + i.detail + "\n";
  return out;
}

const TemplateIssue* Find(const std::vector<TemplateIssue>& issues, K kind) {
  const auto it = std::find_if(issues.begin(), issues.end(), [&](const TemplateIssue& i) { return i.kind == kind; });
  return it == issues.end() ? nullptr : &*it;
}

// The kinds a default policy treats as errors, as template_analysis_test.cc.
bool HasError(const std::vector<TemplateIssue>& issues) {
  return std::any_of(issues.begin(), issues.end(), [](const TemplateIssue& i) {
    return i.kind != K::kNonPrintableByte && i.kind != K::kDangerousName && i.kind != K::kRecursiveMacro &&
           i.kind != K::kExcessiveNesting && i.kind != K::kUnterminated && i.kind != K::kParseError;
  });
}

struct Pair {
  const char* bomb;
  const char* neighbour;  // the same growth, small
};

void ExpectBombAndNeighbour(const std::vector<Pair>& pairs) {
  for (const Pair& p : pairs) {
    const auto bomb = ScanChatTemplate(p.bomb);
    EXPECT_NE(Find(bomb, K::kRenderBomb), nullptr) << p.bomb << "\n" << Dump(bomb);
    const auto neighbour = ScanChatTemplate(p.neighbour);
    EXPECT_FALSE(HasError(neighbour)) << p.neighbour << "\n" << Dump(neighbour);
  }
}

// A caller's keyword with a fallback (multimodal templates size their
// image placeholders so): the fallback is what a render without the keyword
// makes. A number fallback is a number to int, not text of its digits
// (Reka Edge's `num_img_tokens | default(64, true) | int` read as 10^64 and
// rejected a real template); text times what may be a number repeats it.
TEST(TemplateBombsTest, ACallersKeywordRepeatsByItsFallback) {
  ExpectBombAndNeighbour({
      {"{% set n = n | default('9' * 400, true) | int %}{{ '<IMG>' * n }}",
       "{% set n = n | default('9' * 2, true) | int %}{{ '<IMG>' * n }}"},
      {"{% set w = w | default(10 ** 9) %}{{ '-' * w }}", "{% set w = w | default(10 ** 2) %}{{ '-' * w }}"},
      {"{{ 'x' * (w | default(10 ** 9)) }}", "{{ 'x' * (w | default(100)) }}"},
  });
  // In the style of Reka Edge's template (llama.cpp models/templates): image
  // and video placeholder runs, sized by two keywords read with default | int.
  const std::string reka_like =
      "{%- macro parts(content, image_tokens, frames) -%}{%- set ns = namespace(out='') -%}"
      "{%- for p in content -%}{%- if p.type == 'image' -%}"
      "{%- set ns.out = ns.out ~ '<image>' ~ ('<REKA_IMG_TOKEN>' * image_tokens) ~ '</image>' -%}"
      "{%- elif p.type == 'video' -%}"
      "{%- set ns.out = ns.out ~ '<video>' ~ ('<REKA_IMG_TOKEN>' * (image_tokens * frames)) ~ '</video>' -%}"
      "{%- else -%}{%- set ns.out = ns.out ~ p.text -%}{%- endif -%}{%- endfor -%}{{- ns.out -}}{%- endmacro -%}"
      "{%- set num_img_tokens = num_img_tokens | default(64, true) | int -%}"
      "{%- set num_video_frames = num_video_frames | default(6, true) | int -%}"
      "{%- for m in messages -%}{{- m.role ~ ': ' ~ parts(m.content, num_img_tokens, num_video_frames) ~ '\\n' -}}"
      "{%- endfor -%}";
  const auto issues = ScanChatTemplate(reka_like);
  EXPECT_EQ(Find(issues, K::kRenderBomb), nullptr) << Dump(issues);
}

TEST(TemplateBombsTest, LoopsNestedOverComputedRanges) {
  ExpectBombAndNeighbour({
      {"{% set n = 1000 if messages else 10 %}{% for i in range(n) %}{% for j in range(n) %}{% for k in range(n) %}"
       "{% endfor %}{% endfor %}{% endfor %}",
       "{% set n = 10 if messages else 3 %}{% for i in range(n) %}{% for j in range(n) %}{% for k in range(n) %}"
       "{% endfor %}{% endfor %}{% endfor %}"},
      // range(i) in a loop over range(1000): i is at most 1000.
      {"{% for i in range(1000) %}{% for j in range(i) %}{% for k in range(j) %}{% endfor %}{% endfor %}{% endfor %}",
       "{% for i in range(10) %}{% for j in range(i) %}{% for k in range(j) %}{% endfor %}{% endfor %}{% endfor %}"},
      {"{% for i in range(loop_count if loop_count else 10**6) %}{% for j in range(10) %}{% endfor %}{% endfor %}",
       "{% for i in range(loop_count if loop_count else 10**3) %}{% for j in range(10) %}{% endfor %}{% endfor %}"},
      // A bound per message of the request: 10^7 passes for one message.
      {"{% for i in range(messages|length * 10**7) %}{% endfor %}",
       "{% for i in range(messages|length * 10) %}{% endfor %}"},
      {"{% for i in range(('9' * 20)|int) %}{% endfor %}", "{% for i in range('9'|int) %}{% endfor %}"},
      // A macro's loops run in every pass of the loops around its call.
      {"{% macro f() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}"
       "{% for i in range(1000) %}{% for j in range(1000) %}{{ f() }}{% endfor %}{% endfor %}",
       "{% macro f() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}"
       "{% for m in messages %}{% for j in range(10) %}{{ f() }}{% endfor %}{% endfor %}"},
      {"{% macro f() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}"
       "{% macro g() %}{% for i in range(1000) %}{{ f() }}{% endfor %}{% endmacro %}"
       "{% for i in range(1000) %}{{ g() }}{% endfor %}",
       "{% macro f() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}"
       "{% macro g() %}{% for i in range(10) %}{{ f() }}{% endfor %}{% endmacro %}"
       "{% for i in range(10) %}{{ g() }}{% endfor %}"},
      // What an output statement writes, in each pass of its loops.
      {"{% for i in range(100000) %}{{ '=' * 1000 }}{% endfor %}", "{% for i in range(100) %}{{ '=' * 40 }}{% endfor %}"},
      {"{% for i in range(1000) %}{% set x = 'a' * 1000 %}{% for j in range(1000) %}{{ x }}{% endfor %}{% endfor %}",
       "{% for i in range(10) %}{% set x = 'a' * 1000 %}{% for j in range(10) %}{{ x }}{% endfor %}{% endfor %}"},
  });
}

TEST(TemplateBombsTest, StringsThatGrowInEveryPass) {
  const char* kStart = "{% set ns = namespace(s='ab', t='', a='x', b='x', l=['ab']) %}";
  auto in = [&](const char* loop, const char* body) { return std::string(kStart) + loop + body + "{% endfor %}{{ ns.s }}"; };
  const char* kConstant = "{% for i in range(40) %}";
  const char* kRequest = "{% for m in messages %}";
  const std::vector<std::pair<const char*, const char*>> bodies = {
      {"{% set ns.s = ns.s ~ ns.s %}", "{% set ns.s = ns.s ~ 'x' %}"},
      {"{% set ns.s = ns.s|replace('a', 'aa')|replace('b', 'bb') %}", "{% set ns.s = ns.s|replace('a', 'A') %}"},
      {"{% set ns.s = (ns.s ~ 'x') * 2 %}", "{% set ns.s = ns.s ~ 'x' * 2 %}"},
      {"{% set t = ns.s %}{% set ns.s = t ~ t %}", "{% set t = ns.s %}{% set ns.s = t ~ '.' %}"},
      {"{% set ns.s = [ns.s, ns.s]|join %}", "{% set ns.s = [ns.s, '.']|join %}"},
      {"{% set ns.s = '{0}{0}'.format(ns.s) %}", "{% set ns.s = '{0}{1}'.format(ns.s, '.') %}"},
      {"{% set ns.s = '%s%s' % (ns.s, ns.s) %}", "{% set ns.s = '%s%s' % (ns.s, '.') %}"},
      {"{% set ns.s = ns.s|tojson %}", "{% set ns.s = ns.s ~ ('x'|tojson) %}"},
      // Through an inner loop: the outer pass doubles what the inner builds.
      {"{% set ns.t = '' %}{% for j in range(2) %}{% set ns.t = ns.t ~ ns.s %}{% endfor %}{% set ns.s = ns.t %}",
       "{% set ns.t = '' %}{% for j in range(2) %}{% set ns.t = ns.t ~ 'x' %}{% endfor %}{% set ns.s = ns.s ~ ns.t %}"},
      // Fibonacci: no string doubles, the pair grows geometrically.
      {"{% set ns.t = ns.a %}{% set ns.a = ns.a ~ ns.b %}{% set ns.b = ns.t %}",
       "{% set ns.t = ns.a %}{% set ns.a = ns.b %}{% set ns.b = ns.t %}"},
      // A {% set %} block holds what its body writes.
      {"{% set ns.s %}{{ ns.s }}{{ ns.s }}{% endset %}", "{% set ns.s %}{{ ns.s }}.{% endset %}"},
      // A list mutated in place is carried like a namespace attribute.
      {"{% do ns.l.extend(ns.l) %}{% set ns.s = ns.l|join %}", "{% do ns.l.append('x') %}{% set ns.s = ns.l|join %}"},
  };
  for (const char* loop : {kConstant, kRequest}) {
    for (const auto& [bomb, neighbour] : bodies) {
      ExpectBombAndNeighbour({{in(loop, bomb).c_str(), in(loop, neighbour).c_str()}});
    }
  }
  // A replacement that holds what it replaces once leaves as many to
  // replace next time (escaping quotes): no doubling, over any loop.
  const auto escaped = ScanChatTemplate(in(kRequest, "{% set ns.s = (ns.s ~ m.content)|replace('\"', '\\\\\"') %}"));
  EXPECT_FALSE(HasError(escaped)) << Dump(escaped);
  // A plain list, and a macro whose every call doubles what it reads.
  ExpectBombAndNeighbour({
      {"{% set l = ['ab'] %}{% for i in range(40) %}{% do l.extend(l) %}{% endfor %}{{ l|length }}",
       "{% set l = ['ab'] %}{% for i in range(40) %}{% do l.append('ab') %}{% endfor %}{{ l|length }}"},
      {"{% set ns = namespace(s='ab') %}{% macro d() %}{% set ns.s = ns.s ~ ns.s %}{% endmacro %}"
       "{% for m in messages %}{{ d() }}{% endfor %}",
       "{% set ns = namespace(s='ab') %}{% macro d() %}{% set ns.s = ns.s ~ 'x' %}{% endmacro %}"
       "{% for m in messages %}{{ d() }}{% endfor %}"},
      {"{% set ns = namespace(s='ab') %}{% macro d() %}{% set ns.s = ns.s ~ ns.s %}{% endmacro %}"
       "{% for i in range(40) %}{{ d() }}{% endfor %}",
       "{% set ns = namespace(s='ab') %}{% macro d() %}{% set ns.s = ns.s ~ ns.s %}{% endmacro %}{{ d() }}{{ d() }}"},
  });
}

TEST(TemplateBombsTest, LinearGrowthBoundedByTheRequestPasses) {
  // GG8014 flagged every shape that names the attribute twice: a separator
  // only between lines, a conditional append. One copy a pass is linear.
  for (const char* ok : {
           "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s ~ ('\\n' if ns.s else '') ~ m.content %}"
           "{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = (ns.s ~ '\\n\\n' ~ m.content) if ns.s else "
           "m.content %}{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s ~ m.content|trim ~ '\\n' if m.content "
           "else ns.s %}{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s ~ (ns.s|length > 0) * '\\n' ~ m.content "
           "%}{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(s='', sep='\\n') %}{% for m in messages %}{% set ns.s = ns.s ~ ns.sep ~ m.content %}"
           "{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(s='', prev='') %}{% for m in messages %}{% set ns.s = ns.s ~ ns.prev %}"
           "{% set ns.prev = m.content %}{% endfor %}{{ ns.s }}",
           "{% set ns = namespace(out='', part='') %}{% for m in messages %}{% set ns.part = '' %}{% for c in m.content %}"
           "{% set ns.part = ns.part ~ c.text %}{% endfor %}{% set ns.out = ns.out ~ ns.part %}{% endfor %}{{ ns.out }}",
           "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = (ns.s ~ m.content)[-4000:] %}{% endfor %}",
           "{% set ns = namespace(a='', b='') %}{% for m in messages %}{% set ns.t = ns.a if loop.index is even else ns.b %}"
           "{% set ns.a = ns.t ~ m.content %}{% set ns.b = ns.t %}{% endfor %}{{ ns.a }}",
           "{% set ns = namespace(i=0, total=0) %}{% for m in messages %}{% set ns.i = ns.i + 1 %}"
           "{% set ns.total = ns.total + ns.i %}{% endfor %}{{ ns.total }}",
           // A namespace made anew in every pass carries nothing over.
           "{% for m in messages %}{% set nt = namespace(text='') %}{% set nt.text = nt.text|tojson %}{% endfor %}",
       }) {
    const auto issues = ScanChatTemplate(ok);
    EXPECT_FALSE(HasError(issues)) << ok << "\n" << Dump(issues);
  }
}

TEST(TemplateBombsTest, RecursionThatFansOutOrGrowsWhatItPasses) {
  ExpectBombAndNeighbour({
      {"{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
       "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"},
      {"{% macro f(n) %}{% if n > 0 %}{% for i in range(3) %}{{ f(n - 1) }}{% endfor %}{% endif %}{% endmacro %}{{ f(30) }}",
       "{% macro f(n) %}{% if n > 0 %}{% for i in range(3) %}{{ f(n - 1) }}{% endfor %}{% endif %}{% endmacro %}{{ f(4) }}"},
      {"{% macro f(s, n) %}{% if n > 0 %}{{ f(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}{{ f('ab', 40) }}",
       "{% macro f(s, n) %}{% if n > 0 %}{{ f(s ~ '.', n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}{{ f('ab', 40) }}"},
  });
  // Recursion on parts of the request's data, twice per level, is bounded by
  // the data: each call takes another part (tool-schema printers).
  for (const char* ok : {
           "{% macro r(x, depth) %}{{ '  ' * depth }}{{ x.name }}{% for c in x.children %}{{ r(c, depth + 1) }}{% endfor %}"
           "{% if x.items %}{{ r(x.items, depth + 1) }}{% endif %}{% endmacro %}{{ r(tools[0], 0) }}",
           "{% macro t(spec) %}{% for u in spec.type %}{{ t({'type': u}) }}{% endfor %}{% if spec.extra is mapping %}"
           "{{ t(spec.extra if spec.extra else 'Any') }}{% endif %}{% endmacro %}{{ t(tools[0]) }}",
       }) {
    const auto issues = ScanChatTemplate(ok);
    EXPECT_FALSE(HasError(issues)) << ok << "\n" << Dump(issues);
  }
}

TEST(TemplateBombsTest, JoinsReplacementsAndWidthsFromComputedValues) {
  ExpectBombAndNeighbour({
      {"{{ ('a' * 1000)|join('b' * 100000) }}", "{{ ('a' * 1000)|join(', ') }}"},
      {"{{ (range(10000)|list)|join('x' * 10000) }}", "{{ (range(10000)|list)|join(', ') }}"},
      {"{% set sep = 'x' * 10000 %}{{ sep.join(range(10000)|map('string')) }}", "{{ ', '.join(range(10)|map('string')) }}"},
      {"{{ ('a' * 1000) * 1000 * 1000 }}", "{{ ('a' * 10) * 10 * 10 }}"},
      {"{% set s = 'a' * 5000 %}{{ s * 5000 }}", "{% set s = 'a' * 50 %}{{ s * 50 }}"},
      {"{{ messages|tojson(indent=10**9) }}", "{{ messages|tojson(indent=2) }}"},
      {"{{ '{:{w}}'.format(1, w=10**9) }}", "{{ '{:{w}}'.format(1, w=8) }}"},
      {"{{ '{:>{}}'.format(1, 10**9) }}", "{{ '{:>{}}'.format(1, 8) }}"},
      {"{{ '%*d' % (messages|length * 10**9, 1) }}", "{{ '%*d' % (messages|length * 4, 1) }}"},
      {"{{ 'x'|center(messages|length * 10**9) }}", "{{ 'x'|center(40) }}"},
      {"{{ messages[0].content|indent(messages|length * 10**8, first=True) }}",
       "{{ messages[0].content|indent(4, first=True) }}"},
      {"{{ ('x' * 1000)|wordwrap(1, true, 'y' * 100000) }}", "{{ ('x' * 1000)|wordwrap(79) }}"},
      {"{{ ('ab' * 500)|replace('a', 'x' * 100000) }}", "{{ ('ab' * 500)|replace('a', 'x') }}"},
  });
}

TEST(TemplateBombsTest, MessagesSayHowMuch) {
  const auto doubling = ScanChatTemplate(
      "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}");
  const TemplateIssue* d = Find(doubling, K::kRenderBomb);
  ASSERT_NE(d, nullptr) << Dump(doubling);
  EXPECT_EQ(d->detail, "ns.s ~ ns.s: multiplies ns.s by 2 in each of 40 iterations: about 2199023255552 bytes > 16777216");
  const auto request = ScanChatTemplate(
      "{% set ns = namespace(s='ab') %}{% for m in messages %}{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}");
  ASSERT_NE(Find(request, K::kRenderBomb), nullptr) << Dump(request);
  EXPECT_EQ(Find(request, K::kRenderBomb)->detail,
            "[ns.s, ns.s]|join: multiplies ns.s by 2 in every iteration of a loop over request data");
  const auto fan = ScanChatTemplate(
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}");
  ASSERT_NE(Find(fan, K::kRenderBomb), nullptr) << Dump(fan);
  EXPECT_EQ(Find(fan, K::kRenderBomb)->detail,
            "f() calls itself 2 times per level, counting down 42 levels: about 4398046511104 calls > 1000000");
  const auto nested = ScanChatTemplate("{% for i in range(1000) %}{% for j in range(i) %}{% endfor %}{% endfor %}"
                                       "{% for i in range(1000) %}{% for j in range(i) %}{% for k in range(j) %}{% endfor %}"
                                       "{% endfor %}{% endfor %}");
  ASSERT_NE(Find(nested, K::kRenderBomb), nullptr) << Dump(nested);
  EXPECT_EQ(Find(nested, K::kRenderBomb)->detail, "range(j): nested loops run of about 1000000000 > 1000000");
}

TEST(TemplateBombsTest, ThePolicyLimitsDecide) {
  // 2^11 bytes and 200 loop passes: far below the defaults, past these.
  const std::string doubling =
      "{% set ns = namespace(s='ab') %}{% for i in range(10) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}";
  const std::string loops = "{% set n = 20 if messages else 10 %}{% for i in range(n) %}{% for j in range(10) %}{% endfor %}{% endfor %}";
  EXPECT_EQ(Find(ScanChatTemplate(doubling), K::kRenderBomb), nullptr);
  EXPECT_EQ(Find(ScanChatTemplate(loops), K::kRenderBomb), nullptr);
  TemplateScanOptions tight;
  tight.max_output_bytes = 1000;
  tight.max_iterations = 100;
  EXPECT_NE(Find(ScanChatTemplate(doubling, tight), K::kRenderBomb), nullptr);
  EXPECT_NE(Find(ScanChatTemplate(loops, tight), K::kRenderBomb), nullptr);
}

TEST(TemplateBombsTest, ANamespacesOwnUnderscoreAttributesAreItsData) {
  // GG8003 and GG8006 flagged `ns._count` as private access: a namespace
  // answers every name from its own dict (Jinja2's Namespace).
  for (const char* ok : {
           "{% set ns = namespace(_count=0) %}{% for m in messages %}{% set ns._count = ns._count + 1 %}{% endfor %}"
           "{{ ns._count }}",
           "{% set ns = namespace() %}{% set ns._last = messages[-1] %}{{ ns._last.content }}{{ ns['_last'] }}",
       }) {
    const auto issues = ScanChatTemplate(ok);
    EXPECT_FALSE(HasError(issues)) << ok << "\n" << Dump(issues);
  }
  // What reaches Namespace's internals stays flagged, and so does `_x` on
  // anything but a namespace.
  for (const char* bad : {
           "{% set ns = namespace() %}{{ ns._Namespace__attrs }}",
           "{% set ns = namespace() %}{{ ns.__class__ }}",
           "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
           "{{ cycler._private }}",
           "{{ messages[0]._private }}",
       }) {
    const auto issues = ScanChatTemplate(bad);
    EXPECT_TRUE(HasError(issues)) << bad << "\n" << Dump(issues);
  }
}

}  // namespace
}  // namespace ggufguard
