// Hostile headers (bench/hostile_inputs.h): a million keys, a million
// templates, colliding keys, empty keys. Whatever their number, every list of
// every report stays under the policy's limits, with the rest counted. The
// files here are small enough for ASan (the benchmark's are 50x larger); the
// bound is checked by comparing two sizes of each file, not by timing.
#include <map>
#include <string>

#include "bench/hostile_inputs.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using bench::HostileBuilder;
using bench::HostileKind;
using Json = nlohmann::json;

struct Rendered {
  std::string text, json, sarif;
  Json doc;
};

Rendered ValidateAndRender(HostileKind kind, uint32_t n, const Policy& policy) {
  const std::vector<uint8_t> bytes = HostileBuilder(kind, n).Build().bytes;
  const Report r = ValidateBytes(bytes, policy);
  // Every rule lists at most max_findings_per_rule findings.
  std::map<RuleId, size_t> listed;
  for (const Finding& f : r.findings) ++listed[f.rule];
  for (const auto& [rule, count] : listed) EXPECT_LE(count, policy.limits.max_findings_per_rule) << RuleCode(rule);
  const std::vector<FileOutcome> outcomes = {FileOutcome{"h.gguf", &r, ""}};
  Rendered out{RenderText(outcomes), RenderJson(outcomes, policy.name), RenderSarif(outcomes, policy), {}};
  out.doc = Json::parse(out.json);
  return out;
}

// Keys listed across all collision groups, and the keys they count as not listed.
std::pair<uint64_t, uint64_t> CollisionKeys(const Json& file) {
  uint64_t listed = 0, suppressed = 0;
  for (const Json& g : file["key_collisions"]) {
    listed += g["keys"].size();
    suppressed += g["keys_suppressed"].get<uint64_t>();
  }
  return {listed, suppressed};
}

class HostileHeadersTest : public ::testing::TestWithParam<HostileKind> {};

TEST_P(HostileHeadersTest, ReportsDoNotGrowWithTheNumberOfItems) {
  const Policy policy = DefaultPolicy();
  const Rendered small = ValidateAndRender(GetParam(), 2000, policy);
  const Rendered large = ValidateAndRender(GetParam(), 20000, policy);
  // Ten times the items, the same report but for the counts' digits.
  EXPECT_LE(large.text.size(), small.text.size() + 1024);
  EXPECT_LE(large.json.size(), small.json.size() + 1024);
  EXPECT_LE(large.sarif.size(), small.sarif.size() + 1024);
  EXPECT_LT(large.json.size(), 512u * 1024);
  const Json& f = large.doc["files"][0];
  EXPECT_LE(f["templates"].size(), policy.limits.max_list_entries);
  EXPECT_LE(f["key_collisions"].size(), policy.limits.max_list_entries);
  EXPECT_LE(CollisionKeys(f).first, policy.limits.max_list_entries);
}

INSTANTIATE_TEST_SUITE_P(Kinds, HostileHeadersTest,
                         ::testing::Values(HostileKind::kManyKeys, HostileKind::kManyTemplates,
                                           HostileKind::kKeyCollisions, HostileKind::kEmptyKeys,
                                           HostileKind::kManyTensors),
                         [](const auto& kind) {
                           std::string name(bench::HostileKindName(kind.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(HostileHeadersTest, TemplatesListedUpToTheLimitAndCounted) {
  Policy policy = DefaultPolicy();
  policy.limits.max_list_entries = 7;
  const Json f = ValidateAndRender(HostileKind::kManyTemplates, 5000, policy).doc["files"][0];
  EXPECT_EQ(f["verdict"], "valid");
  ASSERT_EQ(f["templates"].size(), 7u);
  EXPECT_EQ(f["templates"][0]["key"], "tokenizer.chat_template.t0");
  EXPECT_EQ(f["templates"][6]["key"], "tokenizer.chat_template.t6");
  EXPECT_EQ(f["templates_suppressed"], 5000 - 7);
}

TEST(HostileHeadersTest, CollisionGroupsAndTheirKeysBoundedTogether) {
  // 5000 keys: 1250 pairs "c.N"/"C.N", then one group of 2500 keys
  // "general.name\0N".
  const Policy policy = DefaultPolicy();
  const Json f = ValidateAndRender(HostileKind::kKeyCollisions, 5000, policy).doc["files"][0];
  const uint64_t groups = 1250 + 1;
  ASSERT_EQ(f["key_collisions"].size(), 100u);
  EXPECT_EQ(f["key_collisions_suppressed"], groups - 100);
  // The first 50 groups list their two keys; the budget of 100 is then spent.
  EXPECT_EQ(f["key_collisions"][0]["key"], "c.0");
  EXPECT_EQ(f["key_collisions"][49]["keys"].size(), 2u);
  EXPECT_EQ(f["key_collisions"][50]["keys"].size(), 0u);
  EXPECT_EQ(f["key_collisions"][50]["keys_suppressed"], 2);
  EXPECT_EQ(CollisionKeys(f), std::make_pair(uint64_t{100}, uint64_t{100}));
  // A listed group's readings still see all of its keys.
  EXPECT_EQ(f["key_collisions"][0]["readings"]["exact"]["value"], "0");
  EXPECT_EQ(f["key_collisions"][0]["readings"]["last_wins"]["value"], "1");
}

TEST(HostileHeadersTest, OneGroupOfIdenticalKeysListsTheLimit) {
  Policy policy = DefaultPolicy();
  const uint32_t n = 3000;
  const std::vector<uint8_t> bytes = HostileBuilder(HostileKind::kEmptyKeys, n).Build().bytes;
  const Report r = ValidateBytes(bytes, policy);
  ASSERT_EQ(r.key_collisions.size(), 1u);
  EXPECT_EQ(r.key_collisions[0].kvs.size(), 100u);
  EXPECT_EQ(r.key_collisions[0].keys_suppressed, n - 100);
  EXPECT_EQ(r.key_collisions[0].exact, 0u);
  EXPECT_EQ(r.key_collisions[0].last_wins, n - 1);  // the readings consider every key
  // Empty keys and duplicates: 100 listed each, the rest counted.
  EXPECT_EQ(r.suppressed.at(RuleId::kEmptyKey), n - 100);
  EXPECT_EQ(r.suppressed.at(RuleId::kDuplicateKey), n - 1 - 100);
}

TEST(HostileHeadersTest, DuplicatesAndCollisionsFoundInFileOrder) {
  // The first findings listed are the first in the file, whatever order the
  // grouping sorts keys in.
  const std::vector<uint8_t> bytes = HostileBuilder(HostileKind::kKeyCollisions, 1000).Build().bytes;
  const Report r = ValidateBytes(bytes, DefaultPolicy());
  uint64_t last = 0;
  size_t collisions = 0;
  for (const Finding& f : r.findings) {
    if (f.rule != RuleId::kKeyCollision) continue;
    EXPECT_GE(f.offset, last);
    last = f.offset;
    ++collisions;
  }
  EXPECT_EQ(collisions, 100u);
  // 250 pairs and a group of 500: 249 + 249... every key after its group's first collides.
  EXPECT_EQ(r.suppressed.at(RuleId::kKeyCollision), 250 + 499 - 100);
}

}  // namespace
}  // namespace ggufguard
