// A shard judged alone (split/lone_shard.h): whatever its name and route,
// a file whose split.* keys make it one of several shards is never valid
// with nothing in not_checked, and the first shard under a name llama.cpp
// cannot find the others from is GG9107.
#include "ggufguard/split/lone_shard.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "ggufguard/ggufguard.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

// The committed valid set: shard k of 3, each valid alone as bytes.
std::vector<uint8_t> Shard(int k) {
  return *testing::ReadFileBytes(fs::path(GGUFGUARD_SOURCE_DIR) / "corpus/split" /
                                 ("minimal-llama-0000" + std::to_string(k) + "-of-00003.gguf"));
}

class LoneShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("lone_shard");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Put(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = dir_ + "/" + name;
    testing::WriteFileBytes(path, bytes);
    return path;
  }
  std::string dir_;
};

TEST(LoneShardNameTest, LlamaFindsTheSetOnlyFromItsOwnSuffix) {
  EXPECT_TRUE(LlamaFindsTheSetFrom("m-00001-of-00003.gguf", 3));
  EXPECT_TRUE(LlamaFindsTheSetFrom("/models/-00001-of-00003.gguf", 3));  // a prefix of "/models/" will do
  EXPECT_TRUE(LlamaFindsTheSetFrom("https://h/o/r/resolve/main/m-00001-of-00012.gguf?download=1", 12));
  for (const char* name : {"model.gguf", "-00001-of-00003.gguf", "m-00001-of-00002.gguf", "m-00002-of-00003.gguf",
                           "M-00001-OF-00003.GGUF", "m-00001-of-00003.GGUF", "m-1-of-3.gguf", "m-00001-of-3.gguf",
                           "m-00001-of-00003.gguf.part", "shard2.gguf"}) {
    EXPECT_FALSE(LlamaFindsTheSetFrom(name, 3)) << name;
  }
  // %05d of a u16 count: five digits whatever the count.
  EXPECT_TRUE(LlamaFindsTheSetFrom("m-00001-of-65535.gguf", 65535));
}

TEST(LoneShardNameTest, TheKeysSayWhichShardAFileIs) {
  // A report's header borrows the bytes it was made from: each is kept.
  const std::vector<uint8_t> shard1 = Shard(1), shard3 = Shard(3);
  const Report first = ValidateBytes(shard1, DefaultPolicy());
  std::optional<SplitPosition> at = SplitPositionOf(first.header);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->number, 1u);
  EXPECT_EQ(at->count, 3u);
  const Report third = ValidateBytes(shard3, DefaultPolicy());
  at = SplitPositionOf(third.header);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->number, 3u);
  // Not part of several: no keys, a merged file (split.count 0).
  const std::optional<std::vector<uint8_t>> minimal =
      testing::ReadFileBytes(fs::path(GGUFGUARD_SOURCE_DIR) / "corpus/valid/minimal-llama.gguf");
  ASSERT_TRUE(minimal);
  const Report merged = ValidateBytes(*minimal, DefaultPolicy());
  EXPECT_FALSE(SplitPositionOf(merged.header));
}

// Issue 38: a shard whose name does not parse as a shard name passed with
// exit 0, whole-file coverage and nothing in not_checked.
TEST_F(LoneShardTest, TheFirstShardUnderANameLlamaCannotUseIsGG9107) {
  for (const char* name : {"model.gguf", "shard1.gguf", "MODEL-00001-OF-00003.GGUF", "m-00001-of-00000.gguf",
                           "m-1-of-3.gguf"}) {
    const std::string path = Put(name, Shard(1));
    const CliResult r = Cli({"validate", "--format", "json", path});
    EXPECT_EQ(r.code, kExitInvalid) << name << r.out;
    const Json f = Json::parse(r.out)["files"][0];
    EXPECT_EQ(f["verdict"], "invalid") << name;
    ASSERT_EQ(f["findings"].size(), 1u) << name << r.out;
    EXPECT_EQ(f["findings"][0]["rule"], "GG9107");
    EXPECT_NE(f["findings"][0]["message"].get<std::string>().find("-00001-of-00003.gguf"), std::string::npos);
    ASSERT_EQ(f["not_checked"].size(), 1u) << name;
    EXPECT_NE(f["not_checked"][0].get<std::string>().find("the other 2 shards"), std::string::npos) << r.out;
    // The gguf profile judges no llama.cpp name: inconclusive, not invalid.
    EXPECT_EQ(Cli({"validate", "--profile", "gguf", path}).code, kExitInconclusive) << name;
  }
}

TEST_F(LoneShardTest, ALaterShardAloneIsInconclusiveUnderAnyName) {
  for (const char* name : {"model.gguf", "shard2.gguf", "m-2-of-3.gguf"}) {
    const CliResult r = Cli({"validate", "--format", "json", Put(name, Shard(2))});
    EXPECT_EQ(r.code, kExitInconclusive) << name << r.out;
    const Json f = Json::parse(r.out)["files"][0];
    EXPECT_EQ(f["verdict"], "inconclusive");
    EXPECT_TRUE(f["findings"].empty()) << r.out;
    ASSERT_EQ(f["not_checked"].size(), 1u);
    EXPECT_NE(f["not_checked"][0].get<std::string>().find("shard 2 of 3"), std::string::npos) << r.out;
    EXPECT_NE(f["not_checked"][0].get<std::string>().find("not a shard name"), std::string::npos) << r.out;
  }
}

TEST_F(LoneShardTest, NoSetAndInspectSayWhyTheSetWasNotRead) {
  const std::string first = Put("minimal-llama-00001-of-00003.gguf", Shard(1));
  Put("minimal-llama-00002-of-00003.gguf", Shard(2));
  Put("minimal-llama-00003-of-00003.gguf", Shard(3));
  EXPECT_EQ(Cli({"validate", first}).code, kExitValid);  // the whole set
  const CliResult r = Cli({"validate", "--no-set", first});
  EXPECT_EQ(r.code, kExitInconclusive) << r.out;
  EXPECT_NE(r.out.find("--no-set"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GG9107"), std::string::npos) << r.out;  // llama.cpp can load it under this name
  EXPECT_EQ(Cli({"inspect", first}).code, kExitInconclusive);
}

// Standard input has no name: inconclusive, whichever shard it holds.
TEST_F(LoneShardTest, StandardInputIsInconclusive) {
  const std::string first = Put("model.gguf", Shard(1));
  const std::string out = dir_ + "/stdin.json";
  const std::string command = std::string(GGUFGUARD_CLI_PATH) + " validate --format json - < '" + first + "' > '" +
                              out + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitInconclusive);
  std::ifstream in(out);
  const Json doc = Json::parse(in);
  EXPECT_NE(doc["files"][0]["not_checked"][0].get<std::string>().find("no file name"), std::string::npos) << doc;
}

TEST_F(LoneShardTest, TheCApiJudgesTheNameItIsGivenAndNoNameWithoutOne) {
  const std::string path = Put("model.gguf", Shard(1));
  ggufguard_report* r = nullptr;
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_verdict(r), GGUFGUARD_VERDICT_INVALID);
  ASSERT_EQ(ggufguard_finding_count(r), 1u);
  ggufguard_finding f;
  ASSERT_EQ(ggufguard_finding_at(r, 0, &f), GGUFGUARD_OK);
  EXPECT_STREQ(f.rule, "GG9107");
  ggufguard_report_free(r);
  const std::vector<uint8_t> bytes = Shard(2);
  ASSERT_EQ(ggufguard_validate_buffer(bytes.data(), bytes.size(), nullptr, &r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_verdict(r), GGUFGUARD_VERDICT_INCONCLUSIVE);
  EXPECT_EQ(ggufguard_report_not_checked_count(r), 1u);
  EXPECT_EQ(ggufguard_report_valid(r), 1);  // the header is valid; the verdict is what a gatekeeper reads
  ggufguard_report_free(r);
}

// scan: a shard name brings in the set; any other name is judged alone,
// and its name-dependent verdict is never cached.
TEST_F(LoneShardTest, ScanJudgesItAloneAndTheCacheKeepsNothingOfIt) {
  fs::create_directories(dir_ + "/models");
  Put("models/model.gguf", Shard(1));
  Put("models/part.gguf", Shard(3));
  for (bool cached : {false, true, true}) {
    std::vector<std::string> args = {"scan", "--jobs", "1", dir_ + "/models"};
    if (cached) args.insert(args.begin() + 1, {"--cache", dir_ + "/cache"});
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitInvalid) << r.out;
    EXPECT_NE(r.out.find("\"verdict\":\"inconclusive\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("GG9107"), std::string::npos) << r.out;
  }
  EXPECT_TRUE(fs::is_empty(dir_ + "/cache"));
}

}  // namespace
}  // namespace ggufguard
