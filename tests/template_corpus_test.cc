// The analyser on the project's realistic chat templates
// (tests/data/chat_templates, MANIFEST.tsv): every benign template, every
// inert look-alike and every poisoned template's neighbour is accepted under
// both policies, by the code checks and the behaviour rules; every attack is
// rejected under the default policy with a finding of its kind inside its
// payload, and every poisoned template under the policy BEHAVIOUR.tsv names.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/rules/template_rules.h"
#include "ggufguard/template/scan.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(GGUFGUARD_SOURCE_DIR) / "tests" / "data" / "chat_templates";

struct Entry {
  std::string path, cls, kind, payload, note;
};

std::vector<Entry> ReadManifest() {
  std::ifstream in(kDir / "MANIFEST.tsv");
  std::vector<Entry> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    EXPECT_GE(cols.size(), 4u) << line;
    if (cols.size() < 4) continue;
    cols.resize(5);
    out.push_back({cols[0], cols[1], cols[2], cols[3], cols[4]});
  }
  return out;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Severity SeverityUnder(const Policy& policy, TemplateIssueKind kind) {
  return policy.SeverityOf(RuleForTemplateIssue(kind));
}

std::string Dump(const std::vector<TemplateIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    out += std::string(TemplateIssueKindName(i.kind)) + "@" + std::to_string(i.offset) + " line " +
           std::to_string(i.line) + ": " + i.detail + "\n";
  }
  return out;
}

TEST(TemplateCorpusTest, ManifestListsEveryFileOnce) {
  std::vector<std::string> listed;
  for (const Entry& e : ReadManifest()) listed.push_back(e.path);
  std::vector<std::string> files;
  for (const auto& f : fs::recursive_directory_iterator(kDir)) {
    if (f.path().extension() == ".jinja") files.push_back(fs::relative(f.path(), kDir).generic_string());
  }
  std::sort(listed.begin(), listed.end());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(listed, files);
}

std::vector<TemplateIssue> AllIssues(const std::string& tmpl) {
  TemplateScan scan = AnalyseChatTemplate(tmpl);
  scan.issues.insert(scan.issues.end(), scan.behaviour_issues.begin(), scan.behaviour_issues.end());
  return scan.issues;
}

TEST(TemplateCorpusTest, BenignAndInertTemplatesAreAcceptedUnderBothPolicies) {
  size_t checked = 0;
  for (const Entry& e : ReadManifest()) {
    if (e.cls != "benign" && e.cls != "inert" && e.cls != "neighbour") continue;
    const std::string tmpl = Read(kDir / e.path);
    ASSERT_FALSE(tmpl.empty()) << e.path;
    const auto issues = AllIssues(tmpl);
    const Policy default_policy = DefaultPolicy(), strict_policy = StrictPolicy();
    for (const Policy* policy : {&default_policy, &strict_policy}) {
      for (const TemplateIssue& i : issues) {
        EXPECT_NE(SeverityUnder(*policy, i.kind), Severity::kError)
            << e.path << " rejected under " << policy->name << ":\n" << Dump(issues);
        // No behaviour warning either: a warning is an error under strict.
        if (i.kind >= TemplateIssueKind::kContentGatedText) {
          EXPECT_EQ(SeverityUnder(*policy, i.kind), Severity::kInfo) << e.path << ":\n" << Dump(issues);
        }
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 140u);
}

// BEHAVIOUR.tsv: per pair, the policy its poisoned template is rejected under.
std::map<std::string, std::string> BehaviourPolicies() {
  std::ifstream in(kDir / "BEHAVIOUR.tsv");
  std::map<std::string, std::string> out;
  std::string line;
  std::getline(in, line);  // header: name kind policy request shows loses quiet
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() >= 3) out[cols[0]] = cols[2];
  }
  return out;
}

TEST(TemplateCorpusTest, EveryPoisonedTemplateIsRejectedAtItsPayloadAndHasANeighbour) {
  const std::map<std::string, std::string> policies = BehaviourPolicies();
  std::set<std::string> poisoned, neighbours;
  for (const Entry& e : ReadManifest()) {
    const std::string name = fs::path(e.path).stem().string();
    if (e.cls == "neighbour") neighbours.insert(name);
    if (e.cls != "poisoned") continue;
    poisoned.insert(name);
    ASSERT_TRUE(policies.count(name)) << e.path << " has no line in BEHAVIOUR.tsv";
    const Policy policy = policies.at(name) == "strict" ? StrictPolicy() : DefaultPolicy();
    const std::string tmpl = Read(kDir / e.path);
    const size_t at = tmpl.find(e.payload);
    ASSERT_NE(at, std::string::npos) << e.path << ": payload not in the file";
    ASSERT_EQ(tmpl.find(e.payload, at + 1), std::string::npos) << e.path << ": payload not unique";
    const auto issues = AllIssues(tmpl);
    bool found = false;
    for (const TemplateIssue& i : issues) {
      found = found || (TemplateIssueKindName(i.kind) == e.kind && i.offset >= at && i.offset < at + e.payload.size() &&
                        SeverityUnder(policy, i.kind) == Severity::kError);
    }
    EXPECT_TRUE(found) << e.path << " (" << e.note << "): no " << e.kind << " error under " << policy.name << " inside '"
                       << e.payload << "'\n" << Dump(issues);
  }
  EXPECT_EQ(poisoned, neighbours);
  EXPECT_GE(poisoned.size(), 60u);
}

TEST(TemplateCorpusTest, EveryAttackIsRejectedAtItsPayload) {
  const Policy default_policy = DefaultPolicy();
  size_t checked = 0;
  for (const Entry& e : ReadManifest()) {
    if (e.cls != "attack") continue;
    const std::string tmpl = Read(kDir / e.path);
    const size_t at = tmpl.find(e.payload);
    ASSERT_NE(at, std::string::npos) << e.path << ": payload not in the file";
    ASSERT_EQ(tmpl.find(e.payload, at + 1), std::string::npos) << e.path << ": payload not unique";
    const auto issues = ScanChatTemplate(tmpl);
    bool found = false;
    for (const TemplateIssue& i : issues) {
      found = found || (TemplateIssueKindName(i.kind) == e.kind && i.offset >= at && i.offset < at + e.payload.size() &&
                        SeverityUnder(default_policy, i.kind) == Severity::kError);
    }
    EXPECT_TRUE(found) << e.path << " (" << e.note << "): no " << e.kind << " error inside '" << e.payload << "'\n"
                       << Dump(issues);
    ++checked;
  }
  EXPECT_GE(checked, 40u);
}

}  // namespace
}  // namespace ggufguard
