// Templates one engine accepts and another refuses (docs/rules/GG8009.md,
// "Engines beyond Jinja2"), cut down from llama.cpp's
// models/templates/MiroThinker-v1.jinja: Jinja2 cannot parse its open
// {% if %} before {% endfor %}, and raises at render time on `set
// message.role`, while llama.cpp's engine renders both.
#include <gtest/gtest.h>

#include <string>

#include "ggufguard/template/scan.h"

namespace ggufguard {
namespace {

using K = TemplateIssueKind;

bool Has(const std::vector<TemplateIssue>& issues, K kind) {
  for (const TemplateIssue& i : issues) {
    if (i.kind == kind) return true;
  }
  return false;
}

constexpr char kOpenIfBeforeEndfor[] =
    "{%- for message in messages %}\n"
    "    {%- if message.role == 'assistant' %}\n"
    "    {%- if message.role == 'user' %}\n"
    "        {%- set x = 1 %}\n"
    "    {%- elif message.role == 'tool' %}\n"
    "        {%- set message.role = 'user' %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{{- messages[0].content }}\n";

TEST(TemplateEnginesTest, ABlockJinja2RefusesAndLlamaCppRecoversIsUnterminated) {
  const auto issues = ScanChatTemplate(kOpenIfBeforeEndfor);
  EXPECT_TRUE(Has(issues, K::kUnterminated));
  // Nothing in it reaches beyond chat data: no error-level kind.
  EXPECT_FALSE(Has(issues, K::kDunderAccess));
  EXPECT_FALSE(Has(issues, K::kGlobalsHelper));
  EXPECT_FALSE(Has(issues, K::kComputedName));
}

TEST(TemplateEnginesTest, AnEscapeBehindTheBrokenBlockIsStillFound) {
  std::string t = kOpenIfBeforeEndfor;
  t += "{{ cycler.__init__.__globals__ }}";
  const auto issues = ScanChatTemplate(t);
  EXPECT_TRUE(Has(issues, K::kUnterminated));
  EXPECT_TRUE(Has(issues, K::kDunderAccess));
}

TEST(TemplateEnginesTest, SettingAnAttributeOfChatDataIsNotReportedButOfARootIs) {
  // Jinja2 raises at render time; llama.cpp's engine sets it. Either way
  // only the request's own data changes.
  EXPECT_TRUE(ScanChatTemplate("{% for m in messages %}{% set m.role = 'user' %}{% endfor %}").empty());
  EXPECT_TRUE(Has(ScanChatTemplate("{% set c = cycler() %}{% set c.x = 1 %}"), K::kGlobalsHelper));
}

}  // namespace
}  // namespace ggufguard
