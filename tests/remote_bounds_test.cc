// A remote file's bounds in time (issue 38): one deadline for all of a file
// (--timeout, max_remote_seconds: inconclusive when spent) and a minimum
// rate (--min-rate, min_remote_bytes_per_second: an I/O error below it),
// against tests/support/hostile_http.py dripping on loopback; a response
// that declares a Content-Encoding refused; and scan --cache taking a URL
// the remote route.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/child_server.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

// A valid model with a 60 KB chat template comment: about 3 s of body at
// 20 KB/s, one request (the first read asks for 2 MiB).
std::vector<uint8_t> SlowToSend() {
  testing::TinyModel m = testing::MakeTinyModel();
  m.Set("tokenizer.chat_template",
        testing::GgufValue::Str("{# " + std::string(60000, 'x') +
                                " #}{% for message in messages %}{{ message['content'] }}{% endfor %}"));
  return m.Build().bytes;
}

class RemoteBoundsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::FreshDir("remote_bounds"));
    testing::WriteFileBytes(*dir_ + "/m.gguf", SlowToSend());
    server_ = new testing::Server({"/usr/bin/python3", std::string(GGUFGUARD_SOURCE_DIR) + "/tests/support/hostile_http.py",
                                   *dir_ + "/m.gguf", *dir_ + "/requests.log"});
    port_ = server_->ReadPort();
    server_->ReadPort();  // the CDN's
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override { ASSERT_GT(port_, 0) << "the hostile server did not start"; }
  static std::string Url(const std::string& path) { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  static std::string* dir_;
  static testing::Server* server_;
  static int port_;
};
std::string* RemoteBoundsTest::dir_ = nullptr;
testing::Server* RemoteBoundsTest::server_ = nullptr;
int RemoteBoundsTest::port_ = -1;

// Issue 38: --idle-timeout gave up only below 1 KiB/s, so a server dripping
// just above it held a file for as long as it liked. A total deadline now
// ends it: inconclusive, with the deadline named, never a pass.
TEST_F(RemoteBoundsTest, ADripAboveTheMinimumRateMeetsTheDeadline) {
  const auto start = Clock::now();
  const CliResult r = Cli({"validate", "--format", "json", "--timeout", "1", Url("/rate/20000/m.gguf")});
  const auto took = Clock::now() - start;
  EXPECT_EQ(r.code, kExitInconclusive) << r.out << r.err;
  EXPECT_LT(took, std::chrono::seconds(3));  // the 1 s deadline, not the 3 s body
  const Json f = Json::parse(r.out)["files"][0];
  EXPECT_EQ(f["verdict"], "inconclusive");
  ASSERT_EQ(f["not_checked"].size(), 1u) << r.out;
  EXPECT_NE(f["not_checked"][0].get<std::string>().find("remote deadline of 1 s"), std::string::npos) << r.out;
  EXPECT_NE(f["not_checked"][0].get<std::string>().find("max_remote_seconds"), std::string::npos) << r.out;
  // The policy's limit is the default, in a policy file as for any limit.
  const std::string policy = *dir_ + "/deadline.json";
  std::ofstream(policy) << R"({"limits": {"max_remote_seconds": 1}})";
  const CliResult by_policy = Cli({"validate", "--policy", policy, Url("/rate/20000/m.gguf")});
  EXPECT_EQ(by_policy.code, kExitInconclusive) << by_policy.out << by_policy.err;
  // scan too.
  const CliResult scan = Cli({"scan", "--timeout", "1", Url("/rate/20000/m.gguf")});
  EXPECT_EQ(scan.code, kExitInconclusive) << scan.out << scan.err;
  // With time enough, the same drip gives the file's verdict.
  EXPECT_EQ(Cli({"validate", "--timeout", "30", Url("/rate/200000/m.gguf")}).code, kExitValid);
}

// Below the minimum rate over the idle window: abandoned, an I/O error.
TEST_F(RemoteBoundsTest, ADripBelowTheMinimumRateIsAbandoned) {
  const auto start = Clock::now();
  const CliResult r = Cli({"validate", "--min-rate", "8192", "--idle-timeout", "1", Url("/rate/2000/m.gguf")});
  EXPECT_EQ(r.code, kExitIo) << r.out << r.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(r.out.find("less than 8192 bytes/s for 1 s"), std::string::npos) << r.out;
  const std::string policy = *dir_ + "/rate.json";
  std::ofstream(policy) << R"({"limits": {"min_remote_bytes_per_second": 8192}})";
  EXPECT_EQ(Cli({"validate", "--policy", policy, "--idle-timeout", "1", Url("/rate/2000/m.gguf")}).code, kExitIo);
  for (const char* bad : {"0", "-1", "604801", "x"}) {
    EXPECT_EQ(Cli({"validate", "--timeout", bad, Url("/ok/m.gguf")}).code, kExitUsage) << bad;
  }
  EXPECT_EQ(Cli({"validate", "--min-rate", "0", Url("/ok/m.gguf")}).code, kExitUsage);
}

// ggufguard asks for no compression; a response that declares one holds
// bytes that are not the file's, and is refused rather than judged.
TEST_F(RemoteBoundsTest, AContentEncodingIsRefused) {
  EXPECT_EQ(Cli({"validate", Url("/ok/m.gguf")}).code, kExitValid);
  const CliResult r = Cli({"validate", Url("/gzip/m.gguf")});
  EXPECT_EQ(r.code, kExitIo) << r.out;
  EXPECT_NE(r.out.find("Content-Encoding"), std::string::npos) << r.out;
  EXPECT_EQ(Cli({"validate", "--hash", Url("/gzip/m.gguf")}).code, kExitIo);
}

// Issue 38: scan --cache opened http://HOST/x.gguf as the relative path
// http:/HOST/x.gguf: a file planted there was judged under the URL's name.
TEST_F(RemoteBoundsTest, ScanCacheTakesAUrlTheRemoteRouteAndDoesNotCacheIt) {
  const std::string work = *dir_ + "/cwd";
  fs::create_directories(work + "/http:/127.0.0.1:" + std::to_string(port_) + "/ok");
  fs::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/regressions/report-llamacpp-24263-empty-key.gguf",
                work + "/http:/127.0.0.1:" + std::to_string(port_) + "/ok/m.gguf");
  const fs::path before = fs::current_path();
  fs::current_path(work);
  const CliResult r = Cli({"scan", "--cache", *dir_ + "/cache", Url("/ok/m.gguf")});
  fs::current_path(before);
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;  // the remote file's verdict, not the planted one's
  const Json line = Json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(line["verdict"], "valid") << r.out;
  EXPECT_NE(line.value("cache", "").find("not cached: a remote file"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(*dir_ + "/cache"));
}

}  // namespace
}  // namespace ggufguard
