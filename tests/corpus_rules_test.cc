// The committed corpus (corpus/, written by tests/tools/make_corpus.cc) says
// what it claims:
//   - every corpus/valid/*.gguf is valid (v1 files: once GG2004 version-1 is
//     allowed, which is all that stands between them and a loader that reads
//     v1);
//   - every corpus/rules/GGnnnn-<name>.gguf names a catalog rule by its code
//     and name and triggers it (under the default policy, or the policy
//     listed below for the rules the default one cannot reach);
//   - every rule in the catalog has a reproducer, except those listed in
//     kNoReproducer with the reason (docs/fuzzing.md);
//   - every corpus/policies/*.json (policy_fuzzer's seeds) is a valid policy;
//   - every corpus/regressions file validates without crashing; the public
//     reports' reproducers are rejected with their rule, the chat templates
//     once rejected are accepted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/split/split_set.h"
#include "ggufguard/validate.h"
#include "tests/tools/reproducer_policies.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

const fs::path& CorpusDir() {
  static const fs::path dir = fs::path(GGUFGUARD_SOURCE_DIR) / "corpus";
  return dir;
}

std::vector<uint8_t> ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<fs::path> GgufFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".gguf") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Describe(const Report& r) {
  std::string s;
  for (const Finding& f : r.findings) {
    s += "\n  " + RuleCode(f.rule) + " " + std::string(SeverityName(f.severity)) + " @" + std::to_string(f.offset) +
         ": " + f.message;
  }
  return s.empty() ? " (no findings)" : s;
}

bool HasRule(const Report& r, RuleId id) {
  for (const Finding& f : r.findings) {
    if (f.rule == id) return true;
  }
  return r.suppressed.count(id) != 0;
}

// The policy each reproducer is checked with (tests/tools/reproducer_policies.h,
// shared with make_corpus): the default one, but for a few limits; the rules
// of the tensor data (GG6009-GG6011) with --deep.
Policy ReproducerPolicy(RuleId id) { return corpus::PolicyForReproducer(id).policy; }
DeepOptions ReproducerDeep(RuleId id) { return DeepOptions{.enabled = corpus::PolicyForReproducer(id).deep}; }

// Rules with no reproducer at all, with the reason; keep docs/fuzzing.md in
// step. The split-set rules judge several files together, so no one file
// triggers them: tests/split_set_test.cc writes a set for each, and
// corpus/split/ holds a valid set (checked below).
const std::set<RuleId>& NoReproducer() {
  static const std::set<RuleId> kSetRules = {
      RuleId::kSplitShardMissing,     RuleId::kSplitCountMismatch, RuleId::kSplitNumberMismatch,
      RuleId::kSplitDuplicateTensor,  RuleId::kSplitTensorTotal,   RuleId::kSplitMetadataOutsideFirst,
      RuleId::kSplitShardLimit,
      // About a file's name, not its bytes (tests/lone_shard_test.cc names
      // the same bytes every way).
      RuleId::kSplitNameUnloadable,
      // About a file's server, not its bytes (tests/remote_test.cc triggers
      // them with a hub that lies).
      RuleId::kRemoteSizeMismatch, RuleId::kRemoteDigestMismatch,
      // An adapter against its base model: corpus/adapters/ holds a pair
      // for each (tests/loader_rules_test.cc, AdapterAgainstItsBaseModel).
      RuleId::kAdapterBaseArchitecture, RuleId::kAdapterBaseTensorMissing, RuleId::kAdapterBaseShape,
      RuleId::kAdapterBaseExpertCount, RuleId::kControlVectorBaseEmbedding, RuleId::kControlVectorUnusedLayer,
      // ollama's 16 MiB / 64 Mi-element reader limits need a file too large
      // to commit (tests/runtime_profiles_test.cc builds one in memory).
      RuleId::kOllamaReaderLimit,
      // About the files beside a GGUF (tests/sibling_files_test.cc triggers
      // them in a scanned directory).
      RuleId::kChatTemplateSiblingDiffers, RuleId::kChatTemplateSiblingInvalid, RuleId::kChatTemplateSiblingSkipped};
  return kSetRules;
}

TEST(CommittedCorpusTest, TheSplitSetIsValidAsASet) {
  const fs::path first = CorpusDir() / "split" / "minimal-llama-00001-of-00003.gguf";
  ASSERT_TRUE(fs::is_regular_file(first)) << first;
  const Policy policy = DefaultPolicy();
  int shards = 0;
  const SetReport set = ValidateSplitSet(
      *ParseShardName(first.string()), policy, LocalShardOpener(),
      [&](ByteSource& source, const std::string&) { return ValidateSource(source, policy); },
      [&](const std::string& location, const Report* report, const std::string& error) {
        ++shards;
        ASSERT_NE(report, nullptr) << location << ": " << error;
        EXPECT_TRUE(report->valid()) << location << Describe(*report);
      });
  EXPECT_EQ(shards, 3);
  EXPECT_EQ(set.verdict(), Report::Verdict::kValid);
  EXPECT_TRUE(set.findings.empty());
}

TEST(CommittedCorpusTest, CorpusDirectoriesExist) {
  ASSERT_TRUE(fs::is_directory(CorpusDir() / "valid")) << CorpusDir();
  ASSERT_TRUE(fs::is_directory(CorpusDir() / "rules")) << CorpusDir();
  ASSERT_TRUE(fs::is_directory(CorpusDir() / "regressions")) << CorpusDir();
  EXPECT_TRUE(fs::is_regular_file(CorpusDir() / "valid" / "minimal-llama.gguf"));
  EXPECT_TRUE(fs::is_regular_file(CorpusDir() / "regressions" / "README.md"));
}

TEST(CommittedCorpusTest, EveryValidFileIsValid) {
  const std::vector<fs::path> files = GgufFiles(CorpusDir() / "valid");
  EXPECT_GE(files.size(), 50u);
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    Policy policy = DefaultPolicy();
    if (name.rfind("v1-", 0) == 0) {
      policy.severity_override[static_cast<uint16_t>(RuleId::kVersion1)] = Severity::kWarning;
    }
    const std::vector<uint8_t> bytes = ReadAll(path);
    const Report report = ValidateBytes(bytes, policy);
    EXPECT_TRUE(report.valid()) << name << Describe(report);
    if (name.find("-be.gguf") != std::string::npos) {
      EXPECT_TRUE(HasRule(report, RuleId::kBigEndian)) << name;
    }
  }
}

TEST(CommittedCorpusTest, MinimalLlamaHasNoFindingAboveInfo) {
  const std::vector<uint8_t> bytes = ReadAll(CorpusDir() / "valid" / "minimal-llama.gguf");
  ASSERT_FALSE(bytes.empty());
  for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
    const Report report = ValidateBytes(bytes, policy);
    EXPECT_TRUE(report.valid()) << policy.name << Describe(report);
    for (const Finding& f : report.findings) {
      EXPECT_EQ(f.severity, Severity::kInfo) << policy.name << Describe(report);
    }
  }
}

TEST(CommittedCorpusTest, EveryReproducerTriggersItsRule) {
  const std::vector<fs::path> files = GgufFiles(CorpusDir() / "rules");
  EXPECT_FALSE(files.empty());
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    // GGnnnn-<rule-name>.gguf
    ASSERT_GT(name.size(), 12u) << name;
    const RuleInfo* rule = FindRuleByCode(name.substr(0, 6));
    ASSERT_NE(rule, nullptr) << name << ": no rule " << name.substr(0, 6) << " in the catalog (stale file?)";
    EXPECT_EQ(name, RuleCode(rule->id) + "-" + std::string(rule->name) + ".gguf") << "rule renamed?";
    const std::vector<uint8_t> bytes = ReadAll(path);
    const Report report = ValidateBytes(bytes, ReproducerPolicy(rule->id), ReproducerDeep(rule->id));
    EXPECT_TRUE(HasRule(report, rule->id)) << name << " does not trigger " << RuleCode(rule->id) << Describe(report);
    // A reproducer must not be accepted, unless its rule is never an error
    // under the policy it is checked with.
    if (ReproducerPolicy(rule->id).SeverityOf(rule->id) == Severity::kError) {
      EXPECT_FALSE(report.valid()) << name;
    }
  }
}

TEST(CommittedCorpusTest, EveryCatalogRuleHasAReproducer) {
  std::vector<std::string> missing;
  for (const RuleInfo& rule : AllRules()) {
    const fs::path path = CorpusDir() / "rules" / (RuleCode(rule.id) + "-" + std::string(rule.name) + ".gguf");
    const bool exists = fs::is_regular_file(path);
    if (NoReproducer().count(rule.id)) {
      EXPECT_FALSE(exists) << path << " exists: take " << RuleCode(rule.id) << " off NoReproducer()";
      continue;
    }
    if (!exists) missing.push_back(RuleCode(rule.id) + " " + std::string(rule.name));
  }
  std::string list;
  for (const std::string& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << "rules without a reproducer in corpus/rules (add one to Reproducers() in "
                                  "tests/tools/make_corpus.cc and regenerate):"
                               << list;
}

TEST(CommittedCorpusTest, EveryPolicySeedParses) {
  std::error_code ec;
  int n = 0;
  for (const auto& entry : fs::directory_iterator(CorpusDir() / "policies", ec)) {
    if (entry.path().extension() != ".json") continue;
    const std::vector<uint8_t> bytes = ReadAll(entry.path());
    absl::StatusOr<Policy> policy =
        ParsePolicyJson(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        entry.path().filename().string());
    EXPECT_TRUE(policy.ok()) << entry.path() << ": " << policy.status();
    ++n;
  }
  EXPECT_GE(n, 1) << "corpus/policies holds the seeds of fuzz/policy_fuzzer.cc";
}

TEST(CommittedCorpusTest, RegressionsValidateWithoutCrashing) {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(CorpusDir() / "regressions", ec)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    const std::vector<uint8_t> bytes = ReadAll(entry.path());
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      const Report report = ValidateBytes(bytes, policy);
      // A llamafile's report is its GGUF member's, which lies inside it.
      const uint64_t outer = report.member_offset ? *report.member_offset + report.file_size : report.file_size;
      EXPECT_TRUE(outer <= bytes.size() && (report.member_offset || outer == bytes.size())) << entry.path();
    }
  }
}

// corpus/regressions/README.md lists each public report's reproducer as
// "- `report-NAME.gguf` (source): what it does. GGnnnn." over one or more
// lines, and each miss reported against ggufguard as "- `miss-NAME.gguf`
// ... GGnnnn." (under --policy strict when the line says so): every such
// file is rejected with that rule, and every
// report-*.gguf and miss-*.gguf file has a line.
TEST(CommittedCorpusTest, EveryReportAndMissIsRejectedWithItsRule) {
  std::ifstream in(CorpusDir() / "regressions" / "README.md");
  ASSERT_TRUE(in);
  const std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::vector<std::string> kPrefixes = {"report-", "miss-"};
  std::map<std::string, std::string> listed;  // file -> rule code
  std::set<std::string> strict;                // files whose line says they are rejected under --policy strict
  for (const std::string& prefix : kPrefixes) {
    const std::string item_start = "- `" + prefix;
    for (size_t at = readme.find(item_start); at != std::string::npos; at = readme.find(item_start, at + 1)) {
      const size_t name_end = readme.find('`', at + 3);
      const size_t item_end = std::min(readme.find("\n- ", at + 1), readme.find("\n\n", at + 1));
      std::string item = readme.substr(at, item_end - at);
      while (!item.empty() && (item.back() == '\n' || item.back() == ' ')) item.pop_back();
      ASSERT_GE(item.size(), 8u);
      const std::string code = item.substr(item.size() - 7, 6);  // "GGnnnn" before the final '.'
      listed[readme.substr(at + 3, name_end - at - 3)] = code;
      if (item.find("--policy strict") != std::string::npos) strict.insert(readme.substr(at + 3, name_end - at - 3));
    }
  }
  EXPECT_GE(listed.size(), 14u);
  for (const auto& [file, code] : listed) {
    const RuleInfo* rule = FindRuleByCode(code);
    ASSERT_NE(rule, nullptr) << file << ": '" << code << "' is no rule";
    const std::vector<uint8_t> bytes = ReadAll(CorpusDir() / "regressions" / file);
    ASSERT_FALSE(bytes.empty()) << file;
    const Report r = ValidateBytes(bytes, strict.count(file) ? StrictPolicy() : DefaultPolicy());
    EXPECT_FALSE(r.valid()) << file;
    EXPECT_TRUE(std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.rule == rule->id; }))
        << file << " is not rejected with " << code;
  }
  for (const fs::path& p : GgufFiles(CorpusDir() / "regressions")) {
    const std::string name = p.filename().string();
    for (const std::string& prefix : kPrefixes) {
      if (name.rfind(prefix, 0) == 0) {
        EXPECT_TRUE(listed.count(name)) << name << " has no line in the README";
      }
    }
  }
}

// corpus/regressions/README.md lists each chat template ggufguard once
// rejected as "- `template-NAME.gguf` (where): what. `benign/FILE.jinja`.
// Accepted.": every such file holds that template of
// tests/data/chat_templates and is accepted under the default and the strict
// policy with no chat-template finding above a note, and every
// template-*.gguf file has a line.
TEST(CommittedCorpusTest, EveryTemplateOnceRejectedIsAccepted) {
  std::ifstream in(CorpusDir() / "regressions" / "README.md");
  ASSERT_TRUE(in);
  const std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::map<std::string, std::string> listed;  // file -> benign template
  for (size_t at = readme.find("- `template-"); at != std::string::npos; at = readme.find("- `template-", at + 1)) {
    const size_t name_end = readme.find('`', at + 3);
    const size_t item_end = std::min(readme.find("\n- ", at + 1), readme.find("\n\n", at + 1));
    const std::string item = readme.substr(at, item_end - at);
    const size_t benign = item.find("`benign/");
    ASSERT_NE(benign, std::string::npos) << item;
    listed[readme.substr(at + 3, name_end - at - 3)] = item.substr(benign + 1, item.find('`', benign + 1) - benign - 1);
    EXPECT_NE(item.find("Accepted."), std::string::npos) << item;
  }
  EXPECT_GE(listed.size(), 2u);
  for (const auto& [file, benign] : listed) {
    const std::vector<uint8_t> bytes = ReadAll(CorpusDir() / "regressions" / file);
    const std::vector<uint8_t> tmpl =
        ReadAll(fs::path(GGUFGUARD_SOURCE_DIR) / "tests" / "data" / "chat_templates" / benign);
    ASSERT_FALSE(bytes.empty()) << file;
    ASSERT_FALSE(tmpl.empty()) << benign;
    EXPECT_NE(std::search(bytes.begin(), bytes.end(), tmpl.begin(), tmpl.end()), bytes.end())
        << file << " does not hold " << benign;
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      const Report r = ValidateBytes(bytes, policy);
      EXPECT_TRUE(r.valid()) << file << " under " << policy.name << ":" << Describe(r);
      for (const Finding& f : r.findings) {
        EXPECT_FALSE(RuleCode(f.rule).rfind("GG80", 0) == 0 && f.severity != Severity::kInfo)
            << file << " under " << policy.name << ":" << Describe(r);
      }
    }
  }
  for (const fs::path& p : GgufFiles(CorpusDir() / "regressions")) {
    const std::string name = p.filename().string();
    if (name.rfind("template-", 0) == 0) {
      EXPECT_TRUE(listed.count(name)) << name << " has no line in the README";
    }
  }
}

}  // namespace
}  // namespace ggufguard
