// 8xxx: chat templates through ScanChatTemplate, and their digests in the
// JSON report.
#include "ggufguard/rules/template_rules.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ggufguard/report/render.h"
#include "ggufguard/template/scan.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

using ::ggufguard::testing::Check;

struct Case {
  RuleId rule;
  TemplateIssueKind kind;
  std::string tmpl;
};

std::string Deep(int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += "{% if x %}";
  for (int i = 0; i < levels; ++i) s += "{% endif %}";
  return s;
}

// Each kind of issue is one rule, at the template's offset in the file plus
// the issue's offset in the template.
TEST(TemplateRulesTest, EachIssueKindIsItsRuleAtItsByte) {
  const std::vector<Case> cases = {
      {RuleId::kChatTemplateNonPrintable, TemplateIssueKind::kNonPrintableByte, "hello\x01 world"},
      {RuleId::kChatTemplateDunderAccess, TemplateIssueKind::kDunderAccess, "{{ messages.__class__ }}"},
      {RuleId::kChatTemplateAttrFilter, TemplateIssueKind::kAttrFilter, "{{ messages|attr('x') }}"},
      {RuleId::kChatTemplateDangerousName, TemplateIssueKind::kDangerousName, "{{ config }}"},
      {RuleId::kChatTemplateGlobalsHelper, TemplateIssueKind::kGlobalsHelper, "{{ lipsum.x }}"},
      {RuleId::kChatTemplateRecursiveMacro, TemplateIssueKind::kRecursiveMacro,
       "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(1) }}"},
      {RuleId::kChatTemplateUnboundedRecursion, TemplateIssueKind::kUnboundedRecursion,
       "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}"},
      {RuleId::kChatTemplateExcessiveNesting, TemplateIssueKind::kExcessiveNesting, Deep(40)},
      {RuleId::kChatTemplateUnterminated, TemplateIssueKind::kUnterminated, "{{ messages"},
      {RuleId::kChatTemplateComputedName, TemplateIssueKind::kComputedName, "{{ messages[lipsum|string] }}"},
      {RuleId::kChatTemplateFileAccess, TemplateIssueKind::kFileAccess, "{% extends 'base.html' %}"},
      {RuleId::kChatTemplateRenderBomb, TemplateIssueKind::kRenderBomb, "{{ 'ab' * 10**9 }}"},
      {RuleId::kChatTemplateParseError, TemplateIssueKind::kParseError, "{{ messages[0] ) }}"},
  };
  for (const Case& c : cases) {
    TinyModel m = MakeTinyModel();
    m.Set("tokenizer.chat_template", GgufValue::Str(c.tmpl));
    BuiltFile f = m.Build();
    Report r = Check(f);
    const uint64_t base = m.Kv(f, "tokenizer.chat_template").string_bytes();
    size_t seen = 0;
    for (const TemplateIssue& issue : ScanChatTemplate(c.tmpl)) {
      if (issue.kind != c.kind) continue;
      ++seen;
      EXPECT_TRUE(HasFinding(r, c.rule, base + issue.offset)) << TemplateIssueKindName(c.kind);
    }
    EXPECT_GT(seen, 0u) << "the scanner should flag " << c.tmpl;
  }
}

TEST(TemplateRulesTest, DunderAccessIsAnErrorAtTheName) {
  TinyModel m = MakeTinyModel();
  const std::string tmpl = "{{ cycler.__init__.__globals__.os.popen('id').read() }}";
  m.Set("tokenizer.chat_template", GgufValue::Str(tmpl));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_FALSE(r.valid());
  const uint64_t base = m.Kv(f, "tokenizer.chat_template").string_bytes();
  EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess, base + tmpl.find("__init__")));
}

TEST(TemplateRulesTest, SizeCapComesFromThePolicy) {
  TinyModel m = MakeTinyModel();
  BuiltFile f = m.Build();
  Policy p = DefaultPolicy();
  p.limits.max_chat_template_bytes = 16;
  Report r = Check(f, p);
  EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateTooLarge, m.Kv(f, "tokenizer.chat_template").string_bytes() + 16));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(IsValid(Check(f)));  // the default cap is 1 MiB
}

TEST(TemplateRulesTest, NamedAndShadowingTemplatesAreScanned) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.chat_template.tool_use", GgufValue::Str("{{ x.__class__ }}"));
  m.kvs.emplace_back(std::string("tokenizer.chat_template\0b", 25), GgufValue::Str("{{ y.__dict__ }}"));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess,
                         m.Kv(f, "tokenizer.chat_template.tool_use").string_bytes() + 5));
  EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess,
                         testing::KvAt(f, m.kvs.size() - 1).string_bytes() + 5));
  EXPECT_FALSE(IsChatTemplateKey("tokenizer.chat_templates"));
  EXPECT_TRUE(IsChatTemplateKey("tokenizer.chat_template"));
  EXPECT_TRUE(IsChatTemplateKey("tokenizer.chat_template.rag"));
}

// A key that some reader maps onto the template key is that reader's
// template: gguf-parser-go trims keys, case-insensitive readers fold them.
TEST(TemplateRulesTest, AliasesOfTheTemplateKeyAreScannedAndHashed) {
  for (const char* alias : {"tokenizer.chat_template ", " tokenizer.chat_template", "Tokenizer.Chat_Template",
                            "tokenizer.chat_template.tool_use\t"}) {
    TinyModel m = MakeTinyModel();
    m.kvs.emplace_back(alias, GgufValue::Str("{{ ''.__class__ }}"));
    BuiltFile f = m.Build();
    Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess, testing::KvAt(f, m.kvs.size() - 1).string_bytes() + 6))
        << "'" << alias << "'\n" << testing::Describe(r);
    EXPECT_EQ(r.templates.listed.size(), 2u) << alias;
  }
  std::string scratch;
  EXPECT_FALSE(IsChatTemplateAlias("tokenizer.chat_templates ", &scratch));
  EXPECT_FALSE(IsChatTemplateAlias("xtokenizer.chat_template", &scratch));
}

// The rule remembers the issues of the first distinct templates it scans
// (a header may repeat one under a million keys); a repeat, remembered or
// not, must still report each of its keys at that key's own bytes.
TEST(TemplateRulesTest, RepeatedTemplatesReportEachKeyAtItsOwnBytes) {
  TinyModel m = MakeTinyModel();
  auto tmpl = [](int i) { return absl::StrCat("{{ x.__class__ }}{# ", i, " #}"); };
  constexpr int kDistinct = 70;  // more than the rule remembers
  for (int i = 0; i < kDistinct; ++i) m.Set(absl::StrCat("tokenizer.chat_template.t", i), GgufValue::Str(tmpl(i)));
  m.Set("tokenizer.chat_template.again_first", GgufValue::Str(tmpl(0)));
  m.Set("tokenizer.chat_template.again_last", GgufValue::Str(tmpl(kDistinct - 1)));
  BuiltFile f = m.Build();
  Policy p = DefaultPolicy();
  p.limits.max_findings_per_rule = 1000;
  Report r = Check(f, p);
  std::vector<std::string> keys = {"tokenizer.chat_template.again_first", "tokenizer.chat_template.again_last"};
  for (int i = 0; i < kDistinct; ++i) keys.push_back(absl::StrCat("tokenizer.chat_template.t", i));
  for (const std::string& key : keys) {
    EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess, m.Kv(f, key).string_bytes() + 5)) << key;
  }
  size_t dunder = 0;
  for (const Finding& finding : r.findings) dunder += finding.rule == RuleId::kChatTemplateDunderAccess;
  EXPECT_EQ(dunder, keys.size());
}

TEST(TemplateRulesTest, DigestsAreSha256OfEachTemplate) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.chat_template", GgufValue::Str("abc"));
  m.Set("tokenizer.chat_template.empty", GgufValue::Str(""));
  BuiltFile f = m.Build();
  Report r = Check(f);
  const std::vector<TemplateDigest>& d = r.templates.listed;
  EXPECT_EQ(r.templates.not_listed, 0u);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "tokenizer.chat_template");
  EXPECT_EQ(d[0].offset, m.Kv(f, "tokenizer.chat_template").string_bytes());
  EXPECT_EQ(d[0].bytes, 3u);
  EXPECT_EQ(d[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(d[1].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  nlohmann::json doc = nlohmann::json::parse(RenderJson({FileOutcome{"m.gguf", &r, ""}}, "default"));
  const nlohmann::json& templates = doc["files"][0]["templates"];
  ASSERT_EQ(templates.size(), 2u);
  EXPECT_EQ(templates[0]["key"], "tokenizer.chat_template");
  EXPECT_EQ(templates[0]["bytes"], 3);
  EXPECT_EQ(templates[0]["offset"], d[0].offset);
  EXPECT_EQ(templates[0]["sha256"], d[0].sha256);
}

// The report's template list comes from the rules' one analysis, under the
// policy's limits: a gatekeeper that caps template size to bound CPU gets no
// analysis in any format (issue 32), and the default still lists the roots.
TEST(TemplateRulesTest, ReportedRootsComeFromTheAnalysisUnderThePolicy) {
  TinyModel m = MakeTinyModel();
  const std::string tmpl = "{{ lipsum }}{# " + std::string(200, 'x') + " #}";
  m.Set("tokenizer.chat_template", GgufValue::Str(tmpl));
  BuiltFile f = m.Build();

  Report full = Check(f);
  ASSERT_EQ(full.templates.listed.size(), 1u);
  EXPECT_EQ(full.templates.listed[0].roots, std::vector<std::string>{"lipsum"});

  Policy capped = DefaultPolicy();
  capped.limits.max_chat_template_bytes = 64;
  Report r = Check(f, capped);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kChatTemplateTooLarge));
  ASSERT_EQ(r.templates.listed.size(), 1u);
  EXPECT_EQ(r.templates.listed[0].sha256, full.templates.listed[0].sha256);
  EXPECT_TRUE(r.templates.listed[0].roots.empty());
  nlohmann::json doc = nlohmann::json::parse(RenderJson({FileOutcome{"m.gguf", &r, ""}}, "capped"));
  EXPECT_TRUE(doc["files"][0]["templates"][0]["roots"].empty());
}

// Keys past the listed ones are still judged, with the listed keys'
// analysis reused rather than redone, and counted as not listed.
TEST(TemplateRulesTest, TemplatesPastTheListAreJudgedAndCounted) {
  TinyModel m = MakeTinyModel();
  for (int i = 0; i < 5; ++i) m.Set(absl::StrCat("tokenizer.chat_template.t", i), GgufValue::Str("{{ x.__class__ }}"));
  BuiltFile f = m.Build();
  Policy p = DefaultPolicy();
  p.limits.max_list_entries = 2;
  Report r = Check(f, p);
  size_t template_keys = 0;
  for (const auto& kv : m.kvs) template_keys += IsChatTemplateKey(kv.first);
  ASSERT_GE(template_keys, 5u);
  EXPECT_EQ(r.templates.listed.size(), 2u);
  EXPECT_EQ(r.templates.not_listed, template_keys - 2);
  for (int i = 0; i < 5; ++i) {
    const std::string key = absl::StrCat("tokenizer.chat_template.t", i);
    EXPECT_TRUE(HasFinding(r, RuleId::kChatTemplateDunderAccess, m.Kv(f, key).string_bytes() + 5)) << key;
  }
}

}  // namespace
}  // namespace ggufguard
