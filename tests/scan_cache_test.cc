// scan --cache: a hit gives the line validation gave, a policy change is a
// miss, and a corrupt or planted entry is never trusted.
#include "ggufguard/cli/scan_cache.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ggufguard/base/sha256.h"
#include "ggufguard/cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/zip_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

class ScanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("scan_cache");
    fs::create_directories(dir_ + "/models");
    model_ = dir_ + "/models/bad.gguf";
    fs::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/regressions/report-llamacpp-24263-empty-key.gguf", model_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  WalkEntry Entry() const { return WalkEntry{WalkEntry::Kind::kFile, model_, "", 0, false}; }
  std::string OnlyEntryFile() const {
    std::string found;
    for (const auto& e : fs::directory_iterator(dir_ + "/cache")) {
      EXPECT_TRUE(found.empty()) << "more than one entry";
      found = e.path().string();
    }
    return found;
  }

  std::string dir_, model_;
};

TEST_F(ScanCacheTest, AHitGivesTheValidatedLineAndAPolicyChangeMisses) {
  absl::StatusOr<ResultCache> cache = ResultCache::Open(dir_ + "/cache", "default", false);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const ResultCache::Result first = cache->Scan(Entry(), DefaultPolicy());
  EXPECT_FALSE(first.hit);
  EXPECT_EQ(first.code, kExitInvalid);
  EXPECT_NE(first.line.find("\"rule\":\"GG3007\""), std::string::npos) << first.line;
  const ResultCache::Result second = cache->Scan(Entry(), DefaultPolicy());
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(second.line, first.line);
  EXPECT_EQ(second.code, kExitInvalid);

  // A policy file that turns GG3007 off: another policy hash, a miss.
  const std::string policy_path = dir_ + "/policy.json";
  std::ofstream(policy_path) << R"({"disable": ["GG3007"]})";
  std::ostringstream err;
  std::optional<Policy> policy = LoadPolicyForCli(policy_path, err);
  ASSERT_TRUE(policy) << err.str();
  absl::StatusOr<ResultCache> other = ResultCache::Open(dir_ + "/cache", policy_path, false);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->policy_hash(), cache->policy_hash());
  const ResultCache::Result third = other->Scan(Entry(), *policy);
  EXPECT_FALSE(third.hit);
  EXPECT_EQ(third.line.find("GG3007"), std::string::npos) << third.line;
  // --deep is part of the policy's hash too.
  EXPECT_NE(ResultCache::Open(dir_ + "/cache", "default", true)->policy_hash(), cache->policy_hash());
  EXPECT_NE(ResultCache::Open(dir_ + "/cache", "default", false, "gguf")->policy_hash(), cache->policy_hash());
}

// A llamafile is judged as its member on the cache's route too (it validates
// in the pass that hashes the file): the verdict stored is the in-place
// route's, under the whole file's digest, and the next scan is a hit.
TEST_F(ScanCacheTest, ALlamafileIsJudgedAsItsMemberAndCached) {
  testing::ZipOptions options;
  options.stub = testing::ApeStub();
  const std::vector<uint8_t> file = testing::BuildZip(
      {testing::ZipEntry{"tiny.gguf", testing::MakeTinyModel().Build().bytes, 0, false, 4096}}, options);
  testing::WriteFileBytes(model_, file);
  absl::StatusOr<ResultCache> cache = ResultCache::Open(dir_ + "/cache", "default", false);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const ResultCache::Result first = cache->Scan(Entry(), DefaultPolicy());
  EXPECT_FALSE(first.hit);
  EXPECT_EQ(first.code, kExitValid) << first.line;
  const nlohmann::json line = nlohmann::json::parse(first.line);
  EXPECT_TRUE(line.contains("member_offset")) << first.line;
  EXPECT_NE(first.line.find("\"rule\":\"GG9166\""), std::string::npos) << first.line;
  EXPECT_FALSE(line.contains("cache")) << first.line;  // stored, not "not cached"
  const std::optional<std::vector<uint8_t>> entry = testing::ReadFileBytes(OnlyEntryFile());
  ASSERT_TRUE(entry.has_value());
  const nlohmann::json stored = nlohmann::json::parse(entry->begin(), entry->end());
  EXPECT_EQ(stored.value("sha256", ""),
            Sha256Hex(std::string_view(reinterpret_cast<const char*>(file.data()), file.size())));
  const ResultCache::Result second = cache->Scan(Entry(), DefaultPolicy());
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(second.line, first.line);
}

TEST_F(ScanCacheTest, ACorruptOrForgedEntryIsIgnoredAndRewritten) {
  absl::StatusOr<ResultCache> cache = ResultCache::Open(dir_ + "/cache", "default", false);
  ASSERT_TRUE(cache.ok());
  const ResultCache::Result truth = cache->Scan(Entry(), DefaultPolicy());
  const std::string entry = OnlyEntryFile();
  std::string good;
  {
    std::ifstream in(entry);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Truncated, not JSON, and a verdict that disagrees with its exit code.
  std::string flipped = good;
  flipped.replace(flipped.find("\"code\":1"), 8, "\"code\":0");
  // Keys of another type than a string (nlohmann's value() threw on them).
  std::string typed = good;
  typed.replace(typed.find("\"sha256\":\""), 10, "\"sha256\":5,\"x\":\"");
  for (const std::string& bad : {good.substr(0, good.size() / 2), std::string("\x00\xff garbage", 10), flipped, typed}) {
    std::ofstream(entry, std::ios::trunc | std::ios::binary) << bad;
    const ResultCache::Result r = cache->Scan(Entry(), DefaultPolicy());
    EXPECT_FALSE(r.hit);
    EXPECT_EQ(r.code, kExitInvalid);
    EXPECT_EQ(r.line, truth.line);
    EXPECT_TRUE(cache->Scan(Entry(), DefaultPolicy()).hit) << "the entry was rewritten";
  }
}

TEST_F(ScanCacheTest, PlantedLinksAreNotFollowed) {
  absl::StatusOr<ResultCache> cache = ResultCache::Open(dir_ + "/cache", "default", false);
  ASSERT_TRUE(cache.ok());
  cache->Scan(Entry(), DefaultPolicy());
  const std::string entry = OnlyEntryFile();
  // A link under the entry's name, to a file that must stay untouched.
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "keep";
  fs::remove(entry);
  fs::create_symlink(victim, entry);
  EXPECT_FALSE(cache->Scan(Entry(), DefaultPolicy()).hit);
  EXPECT_FALSE(fs::is_symlink(entry)) << "the link was replaced by an entry";
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep");
  // The cache directory itself may not be a link.
  fs::create_directory_symlink(dir_ + "/cache", dir_ + "/cache-link");
  EXPECT_FALSE(ResultCache::Open(dir_ + "/cache-link", "default", false).ok());
}

// A file whose bytes are swapped in place between two reads: the first
// sweep over it from offset 0 sees `first`, every later one `later` (the
// same size), as a writer racing the scan would make it.
class SwappedSource final : public ByteSource {
 public:
  SwappedSource(std::vector<uint8_t> first, std::vector<uint8_t> later)
      : first_(std::move(first)), later_(std::move(later)) {}
  uint64_t size() const override { return first_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    if (offset == 0) ++sweeps_;
    const std::vector<uint8_t>& now = sweeps_ <= 1 ? first_ : later_;
    if (offset > now.size() || out.size() > now.size() - offset) return absl::OutOfRangeError("past the end");
    std::memcpy(out.data(), now.data() + offset, out.size());
    return absl::OkStatus();
  }

 private:
  std::vector<uint8_t> first_, later_;
  int sweeps_ = 0;
};

// Issue 38: the cache hashed the file, then validated it in a second read:
// a header swapped between the two stored the clean verdict under the
// malicious bytes' digest, and every later scan of those bytes, under any
// name, said valid. The stored verdict is now the one of the bytes its key
// hashes.
TEST_F(ScanCacheTest, AVerdictIsStoredUnderTheDigestOfTheBytesItJudged) {
  const std::vector<uint8_t> clean = testing::MakeTinyModel().Build().bytes;
  std::vector<uint8_t> malicious = clean;
  malicious[testing::kVersionOffset] = 99;  // GG2003: the same size, invalid
  ASSERT_EQ(ValidateBytes(clean, DefaultPolicy()).verdict(), Report::Verdict::kValid);
  ASSERT_EQ(ValidateBytes(malicious, DefaultPolicy()).verdict(), Report::Verdict::kInvalid);
  absl::StatusOr<ResultCache> cache = ResultCache::Open(dir_ + "/cache", "default", false);
  ASSERT_TRUE(cache.ok());

  // Hashed as malicious, then read again as clean.
  SwappedSource swapped(malicious, clean);
  const ResultCache::Result raced = cache->ScanSource(swapped, "raced.gguf", DefaultPolicy());
  EXPECT_FALSE(raced.hit);
  const nlohmann::json line = nlohmann::json::parse(raced.line);
  // The line says which bytes its verdict is about.
  const auto digest = [](const std::vector<uint8_t>& b) {
    return Sha256Hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  };
  EXPECT_EQ(line["sha256"], line["verdict"] == "valid" ? digest(clean) : digest(malicious)) << raced.line;

  // The malicious bytes, scanned later under another name: their own verdict.
  MemorySource malicious_now(malicious);
  const ResultCache::Result later = cache->ScanSource(malicious_now, "innocent.gguf", DefaultPolicy());
  EXPECT_EQ(later.code, kExitInvalid) << later.line;
  EXPECT_NE(later.line.find("GG2003"), std::string::npos) << later.line;
  // And the clean bytes hit the entry the raced scan stored for them.
  MemorySource clean_now(clean);
  const ResultCache::Result clean_hit = cache->ScanSource(clean_now, "clean.gguf", DefaultPolicy());
  EXPECT_EQ(clean_hit.code, kExitValid) << clean_hit.line;
  EXPECT_TRUE(clean_hit.hit);
}

TEST_F(ScanCacheTest, TheCliRescanGivesTheSameLines) {
  auto scan = [&](std::vector<std::string> args) {
    std::ostringstream out, err;
    args.insert(args.begin(), {"scan", "--jobs", "1"});
    args.push_back(dir_ + "/models");
    EXPECT_EQ(RunCli(args, out, err), kExitInvalid) << err.str();
    return out.str().substr(0, out.str().find("{\"type\":\"summary\""));
  };
  const std::string cold = scan({"--cache", dir_ + "/cache"});
  EXPECT_EQ(scan({"--cache", dir_ + "/cache"}), cold);
  EXPECT_EQ(scan({"--hash"}), cold);
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"scan", "--cache", dir_ + "/cache", "--format", "sarif", model_}, out, err), kExitUsage);
}

}  // namespace
}  // namespace ggufguard
