// No route gives a pass on bytes that were not validated (issue 38): the
// same hostile set (tests/data/route_sweep/hostile.tsv) through every way
// into the tool: a path, standard input, a URL (ranges, and one streamed
// GET with --hash), scan, scan --cache (cold and warm), --hash, the C API
// (a path and a buffer). Python's route reads the same table in
// python/tests/test_ggufguard.py. Each file must get the table's verdict,
// and only the control may be valid.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "ggufguard/ggufguard.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/child_server.h"
#include "tests/support/zip_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Hostile {
  std::string name;
  std::vector<uint8_t> bytes;
  std::string named, nameless;  // the verdict with and without a name
};

std::vector<Hostile> HostileSet() {
  std::ifstream in(GGUFGUARD_SOURCE_DIR "/tests/data/route_sweep/hostile.tsv");
  std::vector<Hostile> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::istringstream fields(line);
    for (std::string c; std::getline(fields, c, '\t');) cols.push_back(c);
    EXPECT_EQ(cols.size(), 5u) << line;
    if (cols.size() != 5) continue;
    std::vector<uint8_t> bytes = *testing::ReadFileBytes(fs::path(GGUFGUARD_SOURCE_DIR) / cols[1]);
    // The make column is a pipeline of steps joined by '+', applied in order.
    std::istringstream steps(cols[2]);
    for (std::string step; std::getline(steps, step, '+');) {
      if (step == "cut-half") {
        bytes.resize(bytes.size() / 2);
      } else if (step == "append-junk") {
        bytes.insert(bytes.end(), 64, 'A');
      } else if (step == "llamafile") {
        // The bytes become the one member, stored and page-aligned as
        // llamafile's zipalign writes it, of an executable's appended ZIP.
        testing::ZipOptions options;
        options.stub = testing::ApeStub();
        bytes = testing::BuildZip({testing::ZipEntry{"model.gguf", std::move(bytes), 0, false, 4096}}, options);
      } else {
        EXPECT_EQ(step, "copy") << line;
      }
    }
    out.push_back({cols[0], std::move(bytes), cols[3], cols[4]});
  }
  return out;
}

// Verdicts by file name, from a run's JSON report or JSON lines.
std::map<std::string, std::string> VerdictsOf(const std::string& text) {
  std::map<std::string, std::string> out;
  auto add = [&](const Json& f) {
    if (f.value("type", "file") == "file" && f.contains("file")) {
      out[fs::path(f["file"].get<std::string>()).filename().string()] = f["verdict"];
    }
  };
  const Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_discarded() && doc.contains("files")) {
    for (const Json& f : doc["files"]) add(f);
    return out;
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line, nullptr, false);
    if (!j.is_discarded()) add(j);
  }
  return out;
}

class RouteSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_ = HostileSet();
    ASSERT_GE(set_.size(), 6u);
    dir_ = testing::FreshDir("route_sweep");
    fs::create_directories(dir_ + "/files");
    for (const Hostile& h : set_) testing::WriteFileBytes(dir_ + "/files/" + h.name, h.bytes);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The CLI in-process over every file of the set at once.
  std::map<std::string, std::string> Cli(std::vector<std::string> args, bool each_file) {
    if (each_file) {
      for (const Hostile& h : set_) args.push_back(dir_ + "/files/" + h.name);
    }
    std::ostringstream out, err;
    RunCli(args, out, err);
    return VerdictsOf(out.str());
  }
  void Expect(const std::string& route, const std::map<std::string, std::string>& got, bool named) {
    for (const Hostile& h : set_) {
      auto it = got.find(h.name);
      ASSERT_NE(it, got.end()) << route << ": no verdict for " << h.name;
      EXPECT_EQ(it->second, named ? h.named : h.nameless) << route << ": " << h.name;
      if (h.name != "control-valid.gguf") {
        EXPECT_NE(it->second, "valid") << route << ": " << h.name;
      }
    }
  }

  std::vector<Hostile> set_;
  std::string dir_;
};

TEST_F(RouteSweepTest, PathsScanAndTheCache) {
  Expect("validate PATH", Cli({"validate", "--format", "json"}, true), true);
  Expect("validate --hash PATH", Cli({"validate", "--format", "json", "--hash"}, true), true);
  Expect("validate --deep PATH", Cli({"validate", "--format", "json", "--deep"}, true), true);
  Expect("scan DIR", Cli({"scan", "--jobs", "2", dir_ + "/files"}, false), true);
  Expect("scan --hash DIR", Cli({"scan", "--hash", dir_ + "/files"}, false), true);
  Expect("scan --cache DIR (cold)", Cli({"scan", "--cache", dir_ + "/cache", dir_ + "/files"}, false), true);
  Expect("scan --cache DIR (warm)", Cli({"scan", "--cache", dir_ + "/cache", dir_ + "/files"}, false), true);
}

TEST_F(RouteSweepTest, StandardInput) {
  std::map<std::string, std::string> got;
  for (const Hostile& h : set_) {
    const std::string out = dir_ + "/stdin.json";
    const std::string command = std::string(GGUFGUARD_CLI_PATH) + " validate --format json - < '" + dir_ +
                                "/files/" + h.name + "' > '" + out + "'";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status) == 0, h.nameless == "valid") << h.name;
    std::ifstream in(out);
    got[h.name] = Json::parse(in)["files"][0]["verdict"];
  }
  Expect("validate -", got, false);
}

TEST_F(RouteSweepTest, Urls) {
  testing::Server server({"/usr/bin/python3", std::string(GGUFGUARD_SOURCE_DIR) + "/tests/support/hostile_http.py",
                          dir_ + "/files/" + set_[0].name, dir_ + "/requests.log", dir_ + "/files"});
  const int port = server.ReadPort();
  ASSERT_GT(port, 0);
  std::vector<std::string> urls;
  for (const Hostile& h : set_) urls.push_back("http://127.0.0.1:" + std::to_string(port) + "/dir/" + h.name);
  for (const bool hash : {false, true}) {
    std::vector<std::string> args = {"validate", "--format", "json"};
    if (hash) args.push_back("--hash");
    args.insert(args.end(), urls.begin(), urls.end());
    std::ostringstream out, err;
    RunCli(args, out, err);
    Expect(hash ? "validate --hash URL" : "validate URL", VerdictsOf(out.str()), true);
  }
  std::vector<std::string> scan = {"scan", "--cache", dir_ + "/cache"};
  scan.insert(scan.end(), urls.begin(), urls.end());
  std::ostringstream out, err;
  RunCli(scan, out, err);
  Expect("scan --cache URL", VerdictsOf(out.str()), true);
}

TEST_F(RouteSweepTest, TheCApi) {
  std::map<std::string, std::string> by_path, by_buffer;
  auto name = [](int verdict) {
    return verdict == GGUFGUARD_VERDICT_VALID ? "valid" : verdict == GGUFGUARD_VERDICT_INCONCLUSIVE ? "inconclusive"
                                                                                                   : "invalid";
  };
  for (const Hostile& h : set_) {
    ggufguard_report* r = nullptr;
    ASSERT_EQ(ggufguard_validate_path((dir_ + "/files/" + h.name).c_str(), nullptr, &r), GGUFGUARD_OK);
    by_path[h.name] = name(ggufguard_report_verdict(r));
    ggufguard_report_free(r);
    ASSERT_EQ(ggufguard_validate_buffer(h.bytes.data(), h.bytes.size(), nullptr, &r), GGUFGUARD_OK);
    by_buffer[h.name] = name(ggufguard_report_verdict(r));
    ggufguard_report_free(r);
  }
  Expect("ggufguard_validate_path", by_path, true);
  Expect("ggufguard_validate_buffer", by_buffer, false);
}

}  // namespace
}  // namespace ggufguard
