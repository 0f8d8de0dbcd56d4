// docs/rules/GGnnnn.md and docs/rules.md stay in step with the rule catalog:
// every rule has a page and an index row, every page is a rule, and each
// page's title and severities are the catalog's.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

const fs::path kDocs = fs::path(GGUFGUARD_SOURCE_DIR) / "docs";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RuleDocsTest, EveryRuleHasAPageThatMatchesTheCatalog) {
  for (const RuleInfo& r : AllRules()) {
    const std::string code = RuleCode(r.id);
    const fs::path page = kDocs / "rules" / (code + ".md");
    ASSERT_TRUE(fs::exists(page)) << page;
    const std::string text = Slurp(page);
    EXPECT_EQ(text.rfind("# " + code + " " + std::string(r.name) + "\n", 0), 0u) << page << " title";
    const std::string severities = "**Severity:** " + std::string(SeverityName(r.default_severity)) +
                                   " (default policy), " + std::string(SeverityName(r.strict_severity)) +
                                   " (strict policy)";
    EXPECT_NE(text.find(severities), std::string::npos) << page << " should say " << severities;
    EXPECT_NE(text.find("**Since:** 0.1.0"), std::string::npos) << page;
    for (const char* section : {"## What it catches", "## Why it matters", "## Example", "## How to fix"}) {
      EXPECT_NE(text.find(section), std::string::npos) << page << " lacks " << section;
    }
  }
}

TEST(RuleDocsTest, EveryPageIsARule) {
  ASSERT_TRUE(fs::exists(kDocs / "rules"));
  size_t pages = 0;
  for (const auto& entry : fs::directory_iterator(kDocs / "rules")) {
    const std::string name = entry.path().filename().string();
    ASSERT_EQ(entry.path().extension(), ".md") << name;
    const RuleInfo* rule = FindRuleByCode(entry.path().stem().string());
    EXPECT_TRUE(rule != nullptr && RuleCode(rule->id) == entry.path().stem().string())
        << name << " names no rule";
    ++pages;
  }
  EXPECT_EQ(pages, AllRules().size());
}

TEST(RuleDocsTest, IndexLinksEveryRule) {
  const std::string index = Slurp(kDocs / "rules.md");
  ASSERT_FALSE(index.empty());
  for (const RuleInfo& r : AllRules()) {
    const std::string code = RuleCode(r.id);
    EXPECT_NE(index.find("[" + code + "](rules/" + code + ".md) | `" + std::string(r.name) + "`"), std::string::npos)
        << code;
  }
}

// FindRule and the sink's per-rule counters index by RulePosition, a table
// built at compile time: every rule at its place, no other ID anywhere.
TEST(RuleCatalogTest, EveryRuleIsFoundAtItsPosition) {
  const absl::Span<const RuleInfo> rules = AllRules();
  ASSERT_LE(rules.size(), kMaxRules);
  std::set<int> ids;
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(RulePosition(rules[i].id), static_cast<int>(i)) << RuleCode(rules[i].id);
    EXPECT_EQ(FindRule(rules[i].id), &rules[i]);
    ids.insert(static_cast<int>(rules[i].id));
  }
  for (int id = 0; id < 10000; ++id) {
    if (ids.count(id) == 0) {
      EXPECT_EQ(RulePosition(static_cast<RuleId>(id)), -1) << id;
    }
  }
  EXPECT_EQ(RulePosition(static_cast<RuleId>(65535)), -1);
  EXPECT_EQ(FindRule(static_cast<RuleId>(65535)), nullptr);
}

}  // namespace
}  // namespace ggufguard
