// Remote files (src/ggufguard/remote): locations, a real HTTP server
// (Debian's nginx, started here on loopback) giving every real-corpus file
// the verdict it has on disk, and a hostile server of our own
// (tests/support/hostile_http.py) for each way a server can lie, stall or
// overflow. Every server listens on 127.0.0.1 only and is stopped on every
// path (the Server destructor).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "ggufguard/io/source.h"
#include "ggufguard/remote/http_source.h"
#include "ggufguard/remote/location.h"
#include "ggufguard/remote/remote_validate.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/child_server.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

using testing::Server;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// --- Locations -------------------------------------------------------------

TEST(RemoteLocationTest, HfResolvesAgainstTheEndpoint) {
  absl::StatusOr<Location> l = ResolveLocation("hf://org/repo/model-00001-of-00003.gguf", "http://127.0.0.1:9/");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(l->remote);
  EXPECT_EQ(l->value, "http://127.0.0.1:9/org/repo/resolve/main/model-00001-of-00003.gguf");
  l = ResolveLocation("hf://Org-1/Re.po_2@v1.0/dir/a b+c.gguf", "https://hub.example");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->value, "https://hub.example/Org-1/Re.po_2/resolve/v1.0/dir/a%20b%2Bc.gguf");
  l = ResolveLocation("hf://o/r/m.gguf", "");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->value, "https://huggingface.co/o/r/resolve/main/m.gguf");
}

TEST(RemoteLocationTest, HfRefusesOddNames) {
  for (const char* bad : {"hf://org/repo", "hf://org/../x.gguf", "hf://org/repo/../x.gguf", "hf://-org/repo/x.gguf",
                          "hf://org/re?po/x.gguf", "hf://org/repo@a/b/x.gguf/", "hf://org/repo/a//b.gguf",
                          "hf://org/repo@/x.gguf", "hf://o/r/a\\b.gguf", "hf://o/r/a\x01.gguf"}) {
    EXPECT_FALSE(ResolveLocation(bad, "").ok()) << bad;
  }
  // An endpoint that is plain http to the outside world is refused too.
  EXPECT_FALSE(ResolveLocation("hf://o/r/m.gguf", "http://hub.example").ok());
}

TEST(RemoteLocationTest, OnlyHttpsOrLoopbackHttp) {
  EXPECT_TRUE(ResolveLocation("https://example.com/m.gguf", "").ok());
  EXPECT_TRUE(ResolveLocation("http://127.0.0.1:8080/m.gguf", "").ok());
  EXPECT_TRUE(ResolveLocation("http://127.1.2.3/m.gguf", "").ok());
  EXPECT_TRUE(ResolveLocation("http://localhost/m.gguf", "").ok());
  EXPECT_TRUE(ResolveLocation("http://[::1]:80/m.gguf", "").ok());
  EXPECT_FALSE(ResolveLocation("http://example.com/m.gguf", "").ok());
  EXPECT_FALSE(ResolveLocation("http://128.0.0.1/m.gguf", "").ok());
  EXPECT_FALSE(ResolveLocation("http://127.0.0.1.example.com/m.gguf", "").ok());
  EXPECT_FALSE(ResolveLocation("https://user:pw@example.com/m.gguf", "").ok());
  EXPECT_FALSE(CheckFetchableUrl("ftp://127.0.0.1/m.gguf").ok());
  EXPECT_FALSE(CheckFetchableUrl("file:///etc/passwd").ok());
  absl::StatusOr<Location> local = ResolveLocation("dir/m.gguf", "");
  ASSERT_TRUE(local.ok());
  EXPECT_FALSE(local->remote);
}

TEST(RemoteLocationTest, SiblingReplacesTheLastComponent) {
  absl::StatusOr<std::string> s =
      SiblingUrl("https://h.example/o/r/resolve/main/m-00001-of-00003.gguf?x=1", "m-00002-of-00003.gguf");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, "https://h.example/o/r/resolve/main/m-00002-of-00003.gguf");
  EXPECT_FALSE(SiblingUrl("https://h.example/a/b.gguf", "../c.gguf").ok());
  EXPECT_FALSE(SiblingUrl("https://h.example/a/b.gguf", "..").ok());
}

// --- The hostile server ----------------------------------------------------

class HostileServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::FreshDir("ggufguard-hostile"));
    const testing::BuiltFile model = testing::TinyModelWithCleanData();
    bytes_ = new std::vector<uint8_t>(model.bytes);
    std::ofstream(*dir_ / "m.gguf", std::ios::binary)
        .write(reinterpret_cast<const char*>(model.bytes.data()), static_cast<std::streamsize>(model.bytes.size()));
    server_ = new Server({"/usr/bin/python3", std::string(GGUFGUARD_SOURCE_DIR) + "/tests/support/hostile_http.py",
                          (*dir_ / "m.gguf").string(), (*dir_ / "requests.log").string()});
    port_ = server_->ReadPort();
    cdn_port_ = server_->ReadPort();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
    delete bytes_;
  }
  void SetUp() override { ASSERT_GT(port_, 0) << "the hostile server did not start"; }

  static std::string Url(const std::string& path) { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  static RemoteOptions Short() {
    RemoteOptions o;
    o.connect_timeout_ms = 2000;
    o.idle_timeout_s = 1;
    return o;
  }
  static absl::Status OpenError(const std::string& path, RemoteOptions o = Short(), TransferStats* spent = nullptr) {
    absl::StatusOr<std::unique_ptr<HttpSource>> s = HttpSource::Open(Url(path), path, o, spent);
    return s.status();
  }

  static fs::path* dir_;
  static std::vector<uint8_t>* bytes_;
  static Server* server_;
  static int port_, cdn_port_;
};
fs::path* HostileServerTest::dir_ = nullptr;
std::vector<uint8_t>* HostileServerTest::bytes_ = nullptr;
Server* HostileServerTest::server_ = nullptr;
int HostileServerTest::port_ = -1;
int HostileServerTest::cdn_port_ = -1;

TEST_F(HostileServerTest, HonestServerGivesTheLocalVerdict) {
  RemoteValidateOptions o;
  o.remote = Short();
  o.remote.first_read = 64;  // the header in several requests, the padding through more
  RemoteValidation remote = ValidateRemote(Url("/ok/m.gguf"), "m", DefaultPolicy(), o);
  ASSERT_TRUE(remote.file.ok()) << remote.file.status();
  const Report local = ValidateBytes(*bytes_, DefaultPolicy());
  EXPECT_EQ(remote.file->report().valid(), local.valid());
  EXPECT_EQ(testing::RulesAt(remote.file->report()), testing::RulesAt(local));
  EXPECT_EQ(remote.file->report().file_size, bytes_->size());
  EXPECT_GT(remote.stats.requests, 1u);
  EXPECT_GE(remote.stats.bytes, bytes_->size() > 64 ? 64u : 0u);
}

// --hash reads the whole file forward, starting with the block the first
// read already holds: every byte is fetched once, and the digest is the
// file's whether the first block is part of the file or all of it.
TEST_F(HostileServerTest, HashFetchesEachByteOnce) {
  MemorySource memory(*bytes_);
  absl::StatusOr<std::string> digest = HashSource(memory);
  ASSERT_TRUE(digest.ok());
  auto hash_remote = [&](uint64_t first_read) {
    RemoteValidateOptions o;
    o.remote = Short();
    o.remote.first_read = first_read;
    o.stream_whole = true;
    RemoteValidation remote = ValidateRemote(Url("/ok/m.gguf"), "m", DefaultPolicy(), o);
    EXPECT_TRUE(remote.file.ok()) << remote.file.status();
    if (remote.file.ok()) {
      EXPECT_EQ(remote.file->report().sha256, *digest) << first_read;
      EXPECT_EQ(remote.file->report().verdict(), ValidateBytes(*bytes_, DefaultPolicy()).verdict());
    }
    return remote.stats;
  };
  // The first read holds the whole file: one request, nothing more.
  const TransferStats whole = hash_remote(uint64_t{1} << 20);
  EXPECT_EQ(whole.requests, 1u);
  ASSERT_GE(whole.bytes, bytes_->size());
  const uint64_t response_headers = whole.bytes - bytes_->size();
  // Half the file first, then the other half: the bodies add up to the file
  // (fetched twice, the first half would cost bytes_->size() / 2 more).
  const TransferStats halves = hash_remote(bytes_->size() / 2);
  EXPECT_EQ(halves.requests, 2u);
  EXPECT_LE(halves.bytes, bytes_->size() + 2 * response_headers + 64) << response_headers;
  ASSERT_GT(bytes_->size() / 2, 2 * response_headers + 64);
}

TEST_F(HostileServerTest, WholeBodyInsteadOfRangeStopsAtOnce) {
  TransferStats spent;
  absl::Status s = OpenError("/full/m.gguf", Short(), &spent);
  EXPECT_NE(s.message().find("answered 200"), std::string_view::npos) << s;
  // The server offers 64 MiB more than the file: a few buffers arrive at most.
  EXPECT_LT(spent.bytes, uint64_t{4} << 20);
}

TEST_F(HostileServerTest, ContentRangeThatLies) {
  absl::Status s = OpenError("/lie/m.gguf");
  EXPECT_NE(s.message().find("Content-Range lies"), std::string_view::npos) << s;
}

TEST_F(HostileServerTest, ContentRangeThatChanges) {
  RemoteOptions o = Short();
  o.first_read = 16;
  absl::StatusOr<std::unique_ptr<HttpSource>> source = HttpSource::Open(Url("/change/m.gguf"), "m", o);
  ASSERT_TRUE(source.ok()) << source.status();
  std::vector<uint8_t> buf(16);
  absl::Status s = (*source)->ReadAt(32, absl::MakeSpan(buf));
  EXPECT_NE(s.message().find("Content-Range changed"), std::string_view::npos) << s;
}

TEST_F(HostileServerTest, ShortBody) {
  absl::Status s = OpenError("/short/m.gguf");
  EXPECT_NE(s.message().find("body ended after"), std::string_view::npos) << s;
}

TEST_F(HostileServerTest, SlowDripTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = OpenError("/drip/m.gguf");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(HostileServerTest, HttpErrors) {
  for (const char* status : {"404", "500"}) {
    absl::Status s = OpenError(std::string("/status/") + status + "/m.gguf");
    EXPECT_NE(s.message().find(std::string("HTTP ") + status), std::string_view::npos) << s;
  }
}

TEST_F(HostileServerTest, RedirectLoop) {
  absl::Status s = OpenError("/loop/m.gguf");
  EXPECT_NE(s.message().find("redirect loop"), std::string_view::npos) << s;
}

TEST_F(HostileServerTest, RedirectToAnotherSchemeOrAFarHostIsNotFollowed) {
  TransferStats spent;
  absl::Status s = OpenError("/to-ftp/m.gguf", Short(), &spent);
  EXPECT_NE(s.message().find("redirect refused"), std::string_view::npos) << s;
  EXPECT_EQ(spent.requests, 1u);  // the refused target was never asked
  s = OpenError("/to-far/m.gguf", Short(), &spent);
  EXPECT_NE(s.message().find("redirect refused"), std::string_view::npos) << s;
  EXPECT_EQ(spent.requests, 1u);
}

TEST_F(HostileServerTest, BudgetIsNotAPass) {
  RemoteValidateOptions o;
  o.remote = Short();
  Policy policy = DefaultPolicy();
  policy.limits.max_remote_bytes = 100;
  RemoteValidation remote = ValidateRemote(Url("/ok/m.gguf"), "m", policy, o);
  // Could not verify: inconclusive, with the budget named, never a pass and
  // never an I/O error.
  ASSERT_TRUE(remote.file.ok()) << remote.file.status();
  const Report& spent = remote.file->report();
  EXPECT_EQ(spent.verdict(), Report::Verdict::kInconclusive);
  EXPECT_EQ(spent.coverage, Report::Coverage::kStoppedAtBudget);
  ASSERT_EQ(spent.not_checked.size(), 1u);
  EXPECT_NE(spent.not_checked[0].find("max_remote_bytes"), std::string::npos) << spent.not_checked[0];
  // The transfer stops at the callback that passes the budget: one header
  // line or one body chunk (libcurl's 16 KiB) beyond it at most.
  EXPECT_LT(remote.stats.bytes, 100u + 16384u);
  // A small file fits a small budget: the first read shrinks to fit it.
  policy.limits.max_remote_bytes = 8 * bytes_->size() + 4096;
  remote = ValidateRemote(Url("/ok/m.gguf"), "m", policy, o);
  ASSERT_TRUE(remote.file.ok()) << remote.file.status();
  EXPECT_EQ(remote.file->report().verdict(), Report::Verdict::kValid);

  // The CLI says so with exit 5, in text and in scan's JSON lines alike.
  const std::string policy_file = ::testing::TempDir() + "/budget100.json";
  {
    std::ofstream(policy_file) << R"({"limits": {"max_remote_bytes": 100}})";
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"validate", "--policy", policy_file, Url("/ok/m.gguf")}, out, err), kExitInconclusive)
      << out.str() << err.str();
  EXPECT_NE(out.str().find("inconclusive"), std::string::npos) << out.str();
  std::ostringstream scan_out, scan_err;
  EXPECT_EQ(RunCli({"scan", "--jobs", "1", "--policy", policy_file, Url("/ok/m.gguf")}, scan_out, scan_err),
            kExitInconclusive)
      << scan_out.str() << scan_err.str();
  EXPECT_NE(scan_out.str().find("\"verdict\":\"inconclusive\""), std::string::npos) << scan_out.str();
}

TEST_F(HostileServerTest, ScanAndInspectTakeUrls) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"scan", "--jobs", "1", Url("/ok/m.gguf"), Url("/status/500/m.gguf")}, out, err), kExitIo);
  const std::string lines = out.str();
  EXPECT_NE(lines.find("\"verdict\":\"valid\""), std::string::npos) << lines;
  EXPECT_NE(lines.find("HTTP 500"), std::string::npos) << lines;
  EXPECT_NE(lines.find("\"bytes_transferred\""), std::string::npos) << lines;
  std::ostringstream inspect_out, inspect_err;
  EXPECT_EQ(RunCli({"inspect", Url("/ok/m.gguf")}, inspect_out, inspect_err), kExitValid) << inspect_err.str();
  EXPECT_NE(inspect_out.str().find("tokenizer.ggml.tokens"), std::string::npos) << inspect_out.str();
}

// The hub's redirect: the token reaches the hub's port only, never the
// CDN's, appears in no output, and X-Linked-Size/Etag are checked.
// scan takes validate's remote flags: the token of --token-file reaches the
// hub for a file and for each shard of a set, and appears in no output; an
// unreadable token file is a usage error.
TEST_F(HostileServerTest, ScanSendsTheTokenFileToTheHub) {
  const std::string token = "hf_SCAN_token_file_5c2a";
  const std::string token_file = (*dir_ / "token").string();
  std::ofstream(token_file) << token << "\n";
  ::setenv("HF_ENDPOINT", Url("").c_str(), 1);
  std::ostringstream out, err;
  const int code = RunCli({"scan", "--jobs", "1", "--token-file", token_file, "hf://org/repo/m.gguf"}, out, err);
  std::ostringstream missing_out, missing_err;
  const int missing = RunCli({"scan", "--token-file", (*dir_ / "absent").string(), "hf://org/repo/m.gguf"},
                             missing_out, missing_err);
  ::unsetenv("HF_ENDPOINT");
  EXPECT_EQ(code, kExitValid) << out.str() << err.str();
  EXPECT_EQ(out.str().find(token), std::string::npos) << out.str();
  EXPECT_EQ(err.str().find(token), std::string::npos) << err.str();
  EXPECT_EQ(missing, kExitUsage);
  EXPECT_NE(missing_err.str().find("--token-file"), std::string::npos) << missing_err.str();
  const std::string log = ReadAll(*dir_ / "requests.log");
  EXPECT_NE(log.find("Bearer " + token), std::string::npos) << log;
}

TEST_F(HostileServerTest, HubRedirectKeepsTheTokenHomeAndChecksLinkedFacts) {
  const std::string token = "hf_TOKEN_must_not_leak_7d1e";
  ::setenv("HF_TOKEN", token.c_str(), 1);
  ::setenv("HF_ENDPOINT", Url("").c_str(), 1);
  std::ostringstream out, err;
  const int code = RunCli({"validate", "--format", "json", "--hash", "hf://org/repo/m.gguf", Url("/badhub/m.gguf"),
                           Url("/status/404/m.gguf")},
                          out, err);
  std::ostringstream text_out, text_err;
  RunCli({"validate", "hf://org/repo/m.gguf", Url("/badhub/m.gguf")}, text_out, text_err);
  ::unsetenv("HF_TOKEN");
  ::unsetenv("HF_ENDPOINT");
  EXPECT_EQ(code, kExitIo);
  for (const std::string& s : {out.str(), err.str(), text_out.str(), text_err.str()}) {
    EXPECT_EQ(s.find(token), std::string::npos) << s;
    EXPECT_EQ(s.find("sig=secret"), std::string::npos) << s;  // a CDN URL's signature
  }
  const std::string json = out.str();
  EXPECT_NE(json.find("\"bytes_transferred\""), std::string::npos) << json;
  EXPECT_NE(json.find("GG9120"), std::string::npos) << json;
  EXPECT_NE(json.find("GG9121"), std::string::npos) << json;
  EXPECT_NE(text_out.str().find("remote-size-mismatch"), std::string::npos) << text_out.str();
  EXPECT_NE(text_out.str().find("bytes transferred"), std::string::npos) << text_out.str();
  // hf:// alone is valid: the first file's findings are none.
  EXPECT_NE(text_out.str().find("hf\\x3a//org/repo/m.gguf: valid"), std::string::npos) << text_out.str();
  // Where the token went.
  const std::string log = ReadAll(*dir_ / "requests.log");
  const std::string hub = ":" + std::to_string(port_) + "\t";
  const std::string cdn = ":" + std::to_string(cdn_port_) + "\t";
  bool hub_saw_token = false, cdn_seen = false;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/org/repo/resolve/main/m.gguf" + hub) == 0) hub_saw_token |= line.find(token) != std::string::npos;
    if (line.find(cdn) != std::string::npos) {
      cdn_seen = true;
      EXPECT_EQ(line.find("Bearer"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(hub_saw_token) << log;
  EXPECT_TRUE(cdn_seen) << log;
}

// --- nginx: every real file has the same verdict by URL as by path --------

class NginxTest : public ::testing::Test {
 public:
  static int FreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    ::close(fd);
    return port;
  }
};

// nginx on a free loopback port serving `root`, its files under `dir`;
// stopped when the returned server is destroyed. Null, with the reason in
// *why, when it did not come up.
std::unique_ptr<Server> StartNginx(const fs::path& root, const fs::path& dir, int* port_out, std::string* why) {
  const int port = NginxTest::FreePort();
  *port_out = port;
  if (port <= 0) {
    *why = "no free port";
    return nullptr;
  }
  std::ofstream(dir / "nginx.conf") << "daemon off;\nworker_processes 1;\npid " << (dir / "nginx.pid").string()
                                   << ";\nerror_log " << (dir / "error.log").string() << ";\n"
                                   << "events { worker_connections 64; }\nhttp {\n  access_log off;\n"
                                   << "  client_body_temp_path " << dir.string() << ";\n"
                                   << "  proxy_temp_path " << dir.string() << ";\n"
                                   << "  fastcgi_temp_path " << dir.string() << ";\n"
                                   << "  uwsgi_temp_path " << dir.string() << ";\n"
                                   << "  scgi_temp_path " << dir.string() << ";\n"
                                   << "  server {\n    listen 127.0.0.1:" << port << ";\n    root "
                                   << fs::canonical(root).string() << ";\n  }\n}\n";
  auto nginx = std::make_unique<Server>(std::vector<std::string>{"/usr/sbin/nginx", "-e", (dir / "error.log").string(),
                                                                 "-p", dir.string(), "-c", (dir / "nginx.conf").string()});
  if (!nginx->started()) {
    *why = "nginx did not start";
    return nullptr;
  }
  // Ready when it answers.
  for (int i = 0; i < 100; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (up) return nginx;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why = ReadAll(dir / "error.log");
  return nullptr;
}

// Issue 28's end to end: a split model on a hub (HF_ENDPOINT at nginx on
// loopback, the project's own corpus/split set laid out as the hub's
// /resolve/ paths), named by its first shard, is judged as one model; a
// shard the hub lacks (404) makes the set inconclusive, never valid.
TEST_F(NginxTest, HfSplitSetIsJudgedAsOneModel) {
  ASSERT_TRUE(fs::exists("/usr/sbin/nginx")) << "nginx missing: scripts/install-deps.sh installs nginx-light";
  const fs::path dir = testing::FreshDir("ggufguard-nginx-split");
  const fs::path repo = dir / "www" / "org" / "repo" / "resolve" / "main";
  fs::create_directories(repo);
  const fs::path split = fs::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "split";
  for (int k = 1; k <= 3; ++k) {
    const std::string name = "minimal-llama-0000" + std::to_string(k) + "-of-00003.gguf";
    fs::copy_file(split / name, repo / name);
  }
  int port = 0;
  std::string why;
  std::unique_ptr<Server> nginx = StartNginx(dir / "www", dir, &port, &why);
  ASSERT_NE(nginx, nullptr) << why;
  ::setenv("HF_ENDPOINT", ("http://127.0.0.1:" + std::to_string(port)).c_str(), 1);
  auto run = [](std::ostringstream& out) {
    std::ostringstream err;
    return RunCli({"validate", "--format", "json", "hf://org/repo/minimal-llama-00001-of-00003.gguf"}, out, err);
  };
  std::ostringstream whole;
  const int whole_code = run(whole);
  fs::remove(repo / "minimal-llama-00003-of-00003.gguf");
  std::ostringstream missing;
  const int missing_code = run(missing);
  ::unsetenv("HF_ENDPOINT");

  EXPECT_EQ(whole_code, kExitValid) << whole.str();
  const nlohmann::json w = nlohmann::json::parse(whole.str());
  ASSERT_EQ(w["sets"].size(), 1u) << whole.str();
  EXPECT_EQ(w["sets"][0]["verdict"], "valid");
  ASSERT_EQ(w["sets"][0]["shards"].size(), 3u);
  for (const auto& shard : w["sets"][0]["shards"]) EXPECT_EQ(shard["verdict"], "valid") << shard;
  EXPECT_EQ(w["files"].size(), 3u);

  EXPECT_EQ(missing_code, kExitInconclusive) << missing.str();
  const nlohmann::json m = nlohmann::json::parse(missing.str());
  ASSERT_EQ(m["sets"].size(), 1u) << missing.str();
  EXPECT_EQ(m["sets"][0]["verdict"], "inconclusive");
  EXPECT_FALSE(m["sets"][0]["not_checked"].empty());
  bool gg9100 = false;
  for (const auto& f : m["sets"][0]["findings"]) gg9100 |= f["rule"] == "GG9100";
  EXPECT_TRUE(gg9100) << missing.str();
}

// Issue 37's sibling files over hf://: a model whose repository (nginx on
// loopback, laid out as the hub's /resolve/ paths) publishes another
// template in tokenizer_config.json is GG8033 with the difference; the
// sibling requests are counted, a 404 is no finding, and --no-siblings
// makes none.
TEST_F(NginxTest, HfSiblingTemplateIsComparedWithTheModels) {
  ASSERT_TRUE(fs::exists("/usr/sbin/nginx")) << "nginx missing: scripts/install-deps.sh installs nginx-light";
  const fs::path dir = testing::FreshDir("ggufguard-nginx-siblings");
  const fs::path repo = dir / "www" / "org" / "repo" / "resolve" / "main";
  fs::create_directories(repo);
  const std::string tmpl = ReadAll(fs::path(GGUFGUARD_SOURCE_DIR) / "tests/data/chat_templates/benign/chatml_basic.jinja");
  testing::TinyModel m = testing::MakeTinyModel();
  m.Set("tokenizer.chat_template", testing::GgufValue::Str(tmpl));
  testing::WriteFileBytes((repo / "model.gguf").string(), m.Build().bytes);
  std::string theirs = tmpl;
  theirs.insert(theirs.find("{% endfor %}"), "{{ 'Be brief.' }}");
  std::ofstream(repo / "tokenizer_config.json") << nlohmann::json{{"chat_template", theirs}}.dump();
  int port = 0;
  std::string why;
  std::unique_ptr<Server> nginx = StartNginx(dir / "www", dir, &port, &why);
  ASSERT_NE(nginx, nullptr) << why;
  ::setenv("HF_ENDPOINT", ("http://127.0.0.1:" + std::to_string(port)).c_str(), 1);
  auto run = [](std::vector<std::string> args, int* code) {
    std::ostringstream out, err;
    *code = RunCli(args, out, err);
    return nlohmann::json::parse(out.str());
  };
  int code = -1, plain_code = -1;
  const nlohmann::json with = run({"validate", "--format", "json", "hf://org/repo/model.gguf"}, &code);
  const nlohmann::json without = run({"validate", "--format", "json", "--no-siblings", "hf://org/repo/model.gguf"}, &plain_code);
  fs::remove(repo / "tokenizer_config.json");
  int absent_code = -1;
  const nlohmann::json absent = run({"validate", "--format", "json", "hf://org/repo/model.gguf"}, &absent_code);
  ::unsetenv("HF_ENDPOINT");

  EXPECT_EQ(code, kExitValid) << with.dump();
  const nlohmann::json& f = with["files"][0];
  bool differs = false;
  for (const auto& finding : f["findings"]) {
    if (finding["rule"] != "GG8033") continue;
    differs = true;
    EXPECT_NE(finding["message"].get<std::string>().find("Be brief."), std::string::npos) << finding;
  }
  EXPECT_TRUE(differs) << f.dump();
  ASSERT_EQ(f["sibling_files"].size(), 3u);
  EXPECT_EQ(f["sibling_files"][0]["file"], "tokenizer_config.json");
  EXPECT_EQ(f["sibling_files"][0]["state"], "read");
  EXPECT_EQ(f["sibling_files"][1]["state"], "absent");  // a 404
  // Three more requests than without siblings, each counted.
  EXPECT_EQ(f["requests"].get<uint64_t>(), without["files"][0]["requests"].get<uint64_t>() + 3)
      << f["requests"] << " " << without["files"][0]["requests"];
  EXPECT_TRUE(without["files"][0]["sibling_files"].empty());
  for (const auto& finding : absent["files"][0]["findings"]) EXPECT_NE(finding["rule"], "GG8033") << finding;
  EXPECT_EQ(absent["files"][0]["sibling_files"][0]["state"], "absent");
  fs::remove_all(dir);
}

TEST_F(NginxTest, CorpusRealHasTheSameFindingsByUrl) {
  GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS();
  const fs::path corpus = testing::RealCorpusDir();
  ASSERT_TRUE(fs::exists("/usr/sbin/nginx")) << "nginx missing: scripts/install-deps.sh installs nginx-light";
  const fs::path dir = testing::FreshDir("ggufguard-nginx");
  int port = 0;
  std::string why;
  std::unique_ptr<Server> nginx = StartNginx(corpus, dir, &port, &why);
  ASSERT_NE(nginx, nullptr) << why;
  const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/";
  size_t files = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(corpus)) {
    if (!e.is_regular_file() || e.path().extension() != ".gguf") continue;
    ++files;
    const std::string rel = fs::relative(e.path(), corpus).string();
    absl::StatusOr<std::unique_ptr<FileSource>> local_source = FileSource::Open(e.path().string());
    ASSERT_TRUE(local_source.ok());
    absl::StatusOr<ValidatedFile> local = ValidateSource(**local_source, DefaultPolicy());
    for (bool hash : {false, true}) {
      RemoteValidateOptions o;
      o.stream_whole = hash;
      RemoteValidation remote = ValidateRemote(base + rel, rel, DefaultPolicy(), o);
      ASSERT_EQ(local.ok(), remote.file.ok()) << rel << ": " << remote.file.status();
      if (!local.ok()) continue;
      const Report& l = local->report();
      const Report& r = remote.file->report();
      EXPECT_EQ(l.valid(), r.valid()) << rel;
      EXPECT_EQ(l.file_size, r.file_size) << rel;
      ASSERT_EQ(l.findings.size(), r.findings.size()) << rel << "\n" << testing::Describe(r);
      for (size_t i = 0; i < l.findings.size(); ++i) {
        EXPECT_EQ(l.findings[i].rule, r.findings[i].rule) << rel;
        EXPECT_EQ(l.findings[i].offset, r.findings[i].offset) << rel;
        EXPECT_EQ(l.findings[i].message, r.findings[i].message) << rel;
      }
      if (hash) {
        absl::StatusOr<std::string> digest = HashSource(**local_source);
        ASSERT_TRUE(digest.ok());
        EXPECT_EQ(r.sha256, *digest) << rel;
      }
      EXPECT_GT(remote.stats.requests, 0u);
    }
  }
  EXPECT_GT(files, 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ggufguard
