// The command line is an API: exit codes, the text line format, the JSON
// document, determinism, and output that is safe to print whatever bytes the
// file holds. Most tests drive RunCli in-process; a few run the real binary
// to check process exit codes and standard input.
#include "ggufguard/cli/cli.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/findings/rule_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::kF32;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun RunTool(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunCli(args, out, err);
  return CliRun{code, out.str(), err.str()};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Test files written once per process under the test temp dir.
class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    valid_ = new std::string(testing::TempPath("cli_valid.gguf"));
    invalid_ = new std::string(testing::TempPath("cli_invalid.gguf"));
    warning_ = new std::string(testing::TempPath("cli_warning.gguf"));
    hostile_ = new std::string(testing::TempPath("cli_hostile.gguf"));
    missing_ = new std::string(testing::TempPath("cli_missing.gguf"));
    // The CLI runs every rule family, so its files are what a loader
    // expects: an architecture, standard keys, no tensors and an empty
    // vocabulary (tokenizer.ggml.model "no_vocab"), which llama.cpp loads
    // vocabulary-only (a model needs a full set of hyperparameters).
    testing::WriteFileBytes(*valid_, GgufBuilder()
                                         .AddKv("general.architecture", GgufValue::Str("llama"))
                                         .AddKv("general.name", GgufValue::Str("tiny"))
                                         .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
                                         .Build()
                                         .bytes);
    // Several structural findings at different offsets: three errors and a
    // warning.
    testing::WriteFileBytes(*invalid_, GgufBuilder()
                                           .AddKv("general.architecture", GgufValue::Str("llama"))
                                           .AddKv("test.flag", GgufValue::BoolByte(2))
                                           .AddKv("general.name", GgufValue::Str(std::string("a\0b", 3)))
                                           .AddKv("test.flag", GgufValue::Bool(true))
                                           .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
                                           .set_pad_header(true)
                                           .set_trailing_bytes({1, 2, 3})
                                           .Build()
                                           .bytes);
    // Valid under the default policy, not under strict (NUL in a string).
    testing::WriteFileBytes(*warning_, GgufBuilder()
                                           .AddKv("general.architecture", GgufValue::Str("llama"))
                                           .AddKv("general.name", GgufValue::Str(std::string("x\0y", 3)))
                                           .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
                                           .Build()
                                           .bytes);
    // A key with control bytes (an escape sequence that would clear a
    // terminal) and a 10 KB value full of them.
    std::string value;
    while (value.size() < 10 * 1024) value += "\x1b[2J\x07\r\n\t\x7f\xc3\xa9 ok ";
    testing::WriteFileBytes(*hostile_, GgufBuilder()
                                           .AddKv("evil\x1b]0;pwned\x07\x01.key", GgufValue::Str(value))
                                           .AddKv("general.name", GgufValue::Str(value))
                                           .AddTensor(std::string("t\x1b[31m"), {8}, kF32)
                                           .Build()
                                           .bytes);
  }
  static void TearDownTestSuite() {
    for (std::string* p : {valid_, invalid_, warning_, hostile_, missing_}) {
      std::filesystem::remove(*p);
      delete p;
    }
  }

  static std::string* valid_;
  static std::string* invalid_;
  static std::string* warning_;
  static std::string* hostile_;
  static std::string* missing_;
};

std::string* CliTest::valid_;
std::string* CliTest::invalid_;
std::string* CliTest::warning_;
std::string* CliTest::hostile_;
std::string* CliTest::missing_;

TEST_F(CliTest, ExitCodes) {
  EXPECT_EQ(RunTool({"validate", *valid_}).code, kExitValid);
  EXPECT_EQ(RunTool({"validate", *invalid_}).code, kExitInvalid);
  EXPECT_EQ(RunTool({"validate", *valid_, *invalid_}).code, kExitInvalid);
  EXPECT_EQ(RunTool({"validate", *warning_}).code, kExitValid);
  EXPECT_EQ(RunTool({"validate", "--policy", "strict", *warning_}).code, kExitInvalid);
  EXPECT_EQ(RunTool({"validate", "--policy", "default", *warning_}).code, kExitValid);
  EXPECT_EQ(RunTool({"validate", "--", *valid_}).code, kExitValid);

  const CliRun missing = RunTool({"validate", *missing_});
  EXPECT_EQ(missing.code, kExitIo);
  EXPECT_NE(missing.out.find("I/O error"), std::string::npos) << missing.out;
  EXPECT_EQ(RunTool({"validate", *valid_, *invalid_, *missing_}).code, kExitIo);
  EXPECT_EQ(RunTool({"validate", ::testing::TempDir()}).code, kExitIo);  // a directory

  for (const std::vector<std::string>& usage : std::vector<std::vector<std::string>>{
           {},
           {"validate"},
           {"validate", "--frobnicate", *valid_},
           {"validate", "--format", "xml", *valid_},
           {"validate", "--format"},
           {"validate", "--policy", "lax", *valid_},
           {"validate", "--max-stdin-bytes", "lots", *valid_},
           {"validate", "--file-size", "100", *valid_},  // --file-size describes a --header-only prefix
           {"validate", "--header-only", "--file-size", "lots", *valid_},
           {"validate", "--header-only", "--hash", *valid_},  // a digest of a header is not the file's
           {"validate", "--header-only", "--deep", *valid_},  // the data is never read
           {"validate", "-", "-"},                            // standard input is read once
           {"frobnicate", *valid_},
       }) {
    const CliRun r = RunTool(usage);
    EXPECT_EQ(r.code, kExitUsage) << ::testing::PrintToString(usage);
    EXPECT_FALSE(r.err.empty());
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// --help after a command is a request, not an unknown option; --max-bytes
// bounds a path as it bounds a stream.
TEST_F(CliTest, HelpAndMaxBytesOfAPath) {
  for (const std::vector<std::string>& help : std::vector<std::vector<std::string>>{
           {"--help"}, {"validate", "--help"}, {"scan", "--help"}, {"validate", *valid_, "-h"}}) {
    const CliRun r = RunTool(help);
    EXPECT_EQ(r.code, kExitValid) << ::testing::PrintToString(help);
    EXPECT_NE(r.out.find("usage: ggufguard"), std::string::npos) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
  const uint64_t size = std::filesystem::file_size(*valid_);
  EXPECT_EQ(RunTool({"validate", "--max-bytes", std::to_string(size), *valid_}).code, kExitValid);
  const CliRun over = RunTool({"validate", "--max-bytes", std::to_string(size - 1), *valid_});
  EXPECT_EQ(over.code, kExitIo);
  EXPECT_NE(over.out.find("more than --max-bytes"), std::string::npos) << over.out;
}

// A FIFO (or a device) given as a path is refused at once: opened without
// blocking, it is seen not to be a regular file before anything waits on it.
TEST_F(CliTest, AFifoIsRefusedNotWaitedOn) {
  const std::string fifo = ::testing::TempDir() + "/cli_fifo.gguf";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"validate", fifo}, {"validate", "--header-only", fifo}, {"inspect", fifo}}) {
    const CliRun r = RunTool(args);
    EXPECT_EQ(r.code, kExitIo) << ::testing::PrintToString(args);
    EXPECT_NE((r.out + r.err).find("not a regular file"), std::string::npos) << r.out << r.err;
  }
  std::filesystem::remove(fifo);
}

// --header-only on a path reads only the header, and takes the file's size
// from the file: bytes after the data are still found (*invalid_ has
// three). --file-size gives a prefix's whole size.
TEST_F(CliTest, HeaderOnlyKnowsTheSizeOfAPath) {
  const CliRun head = RunTool({"validate", "--header-only", "--format", "json", *invalid_});
  EXPECT_EQ(head.code, kExitInvalid);
  const nlohmann::json file = nlohmann::json::parse(head.out)["files"][0];
  EXPECT_EQ(file["coverage"], "header-only");
  EXPECT_EQ(file["header"]["file_size"], std::filesystem::file_size(*invalid_));
  bool trailing = false;
  for (const nlohmann::json& f : file["findings"]) trailing |= f["rule"] == "GG6007";
  EXPECT_TRUE(trailing) << head.out;
  // No error in the header, but the data was not read: inconclusive, never
  // a pass, and the verdict line says what was not checked.
  const CliRun valid_head = RunTool({"validate", "--header-only", *valid_});
  EXPECT_EQ(valid_head.code, kExitInconclusive) << valid_head.out;
  EXPECT_NE(valid_head.out.find(": inconclusive ("), std::string::npos) << valid_head.out;
  EXPECT_NE(valid_head.out.find("not checked: bytes "), std::string::npos) << valid_head.out;
  const CliRun valid_head_json = RunTool({"validate", "--header-only", "--format", "json", *valid_});
  const nlohmann::json head_file = nlohmann::json::parse(valid_head_json.out)["files"][0];
  EXPECT_EQ(head_file["verdict"], "inconclusive");
  ASSERT_EQ(head_file["not_checked"].size(), 1u) << valid_head_json.out;
  EXPECT_NE(head_file["not_checked"][0].get<std::string>().find("--header-only"), std::string::npos);
  // The same file said to be longer: bytes after its header.
  const uint64_t size = std::filesystem::file_size(*valid_);
  const CliRun longer =
      RunTool({"validate", "--header-only", "--file-size", std::to_string(size + 64), "--format", "json", *valid_});
  EXPECT_EQ(longer.code, kExitInvalid) << longer.out;
  EXPECT_NE(longer.out.find("GG6007"), std::string::npos) << longer.out;
}

TEST_F(CliTest, TextLinesFollowTheFormat) {
  const CliRun r = RunTool({"validate", *invalid_, *valid_});
  ASSERT_EQ(r.code, kExitInvalid);
  // POSIX extended regexes (gMock's), anchored by MatchesRegex.
  const auto finding = ::testing::MatchesRegex("[^:]+:[0-9]+: (error|warning|info) GG[0-9]{4} [a-z0-9-]+: .+");
  const auto verdict =
      ::testing::MatchesRegex("[^:]+: (valid|invalid) \\([0-9]+ errors, [0-9]+ warnings, [0-9]+ notes\\)");
  // What a runtime would do (docs/runtimes.md), when one would not load a file.
  const auto runtime = ::testing::MatchesRegex(
      "[^:]+: runtime (\\(required\\) )?(llama\\.cpp|ollama|vllm|mistral\\.rs|candle) "
      "(loads|inconclusive|(refuses|hangs|crashes) \\(GG[0-9]{4} [a-z0-9-]+ at byte [0-9]+\\): .+)");
  int findings = 0, verdicts = 0;
  std::vector<std::string> seen_rules;
  for (const std::string& line : Lines(r.out)) {
    const std::string label = line.substr(0, line.find(':'));
    if (::testing::Value(line, finding)) {
      EXPECT_EQ(label, *invalid_) << line;
      if (line.find(": info GG") != std::string::npos) continue;  // notes of other families (unknown keys)
      ++findings;
      seen_rules.push_back(line.substr(line.find(" GG") + 1, 6));
    } else if (::testing::Value(line, verdict)) {
      ++verdicts;
    } else if (::testing::Value(line, runtime)) {
      EXPECT_EQ(label, *invalid_) << line;  // the valid file loads everywhere: no runtime line
    } else {
      ADD_FAILURE() << "line in neither format: " << line;
    }
  }
  EXPECT_EQ(verdicts, 2);
  // Bool byte 2, NUL in a string, the duplicate key, trailing bytes.
  EXPECT_EQ(findings, 4) << r.out;
  for (const char* code : {"GG3005", "GG3013", "GG3011", "GG6007"}) {
    EXPECT_NE(std::find(seen_rules.begin(), seen_rules.end(), code), seen_rules.end()) << code;
  }
  EXPECT_NE(r.out.find(*invalid_ + ": invalid (3 errors, 1 warnings, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(*valid_ + ": valid (0 errors, 0 warnings, "), std::string::npos) << r.out;
}

TEST_F(CliTest, JsonDocument) {
  const CliRun r = RunTool({"validate", "--format", "json", *invalid_, *valid_, *missing_});
  ASSERT_EQ(r.code, kExitIo);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("policy"), "default");
  EXPECT_EQ(doc.at("tool").at("name"), "ggufguard");
  ASSERT_EQ(doc.at("files").size(), 3u);
  const auto& invalid = doc["files"][0];
  EXPECT_EQ(invalid.at("file"), *invalid_);
  EXPECT_EQ(invalid.at("verdict"), "invalid");
  EXPECT_EQ(invalid.at("header_parsed"), true);
  EXPECT_EQ(invalid.at("header").at("version"), 3);
  EXPECT_EQ(invalid.at("summary").at("errors"), 3);
  EXPECT_EQ(invalid.at("summary").at("warnings"), 1);
  const auto& findings = invalid.at("findings");
  ASSERT_GE(findings.size(), 4u);
  uint64_t last = 0;
  for (const auto& f : findings) {
    const uint64_t offset = f.at("offset").get<uint64_t>();
    EXPECT_GE(offset, last) << "findings must be sorted by offset";
    last = offset;
    EXPECT_THAT(f.at("rule").get<std::string>(), ::testing::MatchesRegex("GG[0-9]{4}"));
    EXPECT_NE(FindRuleByCode(f.at("rule").get<std::string>()), nullptr);
    EXPECT_EQ(f.at("name"), FindRuleByCode(f.at("rule").get<std::string>())->name);
    EXPECT_TRUE(f.at("severity") == "error" || f.at("severity") == "warning" || f.at("severity") == "info") << f;
    EXPECT_FALSE(f.at("message").get<std::string>().empty());
  }
  EXPECT_EQ(doc["files"][1].at("verdict"), "valid");
  EXPECT_EQ(doc["files"][1].at("summary").at("errors"), 0);
  EXPECT_EQ(doc["files"][2].at("verdict"), "io-error");
  EXPECT_FALSE(doc["files"][2].at("error").get<std::string>().empty());

  const nlohmann::json strict =
      nlohmann::json::parse(RunTool({"validate", "--format", "json", "--policy", "strict", *warning_}).out);
  EXPECT_EQ(strict.at("policy"), "strict");
  EXPECT_EQ(strict["files"][0].at("verdict"), "invalid");
}

int System(const std::string& command);

// The executable run as a process of its own. Each process draws its own
// secret for the key index's hash (ProcessHashSeed), and Abseil seeds its
// tables from addresses that ASLR moves, so two processes hash every key
// differently: output that followed a hash order would differ between them.
CliRun RunProcess(const std::vector<std::string>& args, int run) {
  std::string command = GGUFGUARD_CLI_PATH;
  for (const std::string& a : args) command += " '" + a + "'";  // test paths hold no quote
  const std::string out = testing::TempPath("cli_process_" + std::to_string(run) + ".out");
  const int code = System(command + " > '" + out + "' 2>/dev/null");
  const std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(out);
  std::filesystem::remove(out);
  return CliRun{code, bytes ? std::string(bytes->begin(), bytes->end()) : std::string(), ""};
}

TEST_F(CliTest, OutputIsByteIdenticalAcrossProcesses) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate", *invalid_, *valid_, *hostile_},
           {"validate", "--format", "json", *invalid_, *valid_, *hostile_, *missing_},
           {"validate", "--format", "sarif", *invalid_, *hostile_},
           {"inspect", *hostile_},
           {"rules"},
       }) {
    const CliRun in_process = RunTool(args);
    EXPECT_FALSE(in_process.out.empty());
    for (int run = 0; run < 3; ++run) {
      const CliRun p = RunProcess(args, run);
      EXPECT_EQ(p.out, in_process.out) << ::testing::PrintToString(args) << " run " << run;
      EXPECT_EQ(p.code, in_process.code) << ::testing::PrintToString(args);
    }
  }
}

TEST_F(CliTest, RulesListsEveryRule) {
  const CliRun r = RunTool({"rules"});
  EXPECT_EQ(r.code, kExitValid);
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_EQ(lines.size(), AllRules().size());
  for (const RuleInfo& rule : AllRules()) {
    const std::string prefix = RuleCode(rule.id) + "  " + std::string(rule.name) + "  ";
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }))
        << prefix;
  }
}

// Every byte the CLI prints is printable ASCII or a newline.
::testing::AssertionResult TerminalSafe(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c != '\n' && (c < 0x20 || c >= 0x7F)) {
      return ::testing::AssertionFailure() << "raw byte 0x" << std::hex << int{c} << " at " << std::dec << i;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_F(CliTest, InspectEscapesAndCutsHostileBytes) {
  const CliRun r = RunTool({"inspect", *hostile_});
  EXPECT_EQ(r.code, kExitInvalid);  // control bytes in a key are an error
  EXPECT_TRUE(TerminalSafe(r.out));
  EXPECT_TRUE(TerminalSafe(r.err));
  EXPECT_NE(r.out.find("evil\\x1b]0;pwned\\x07\\x01.key"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\\x1b[2J\\x07\\x0d\\x0a"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("t\\x1b[31m"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("..."), std::string::npos);
  // Two 10 KB values, cut: the whole listing stays small.
  EXPECT_LT(r.out.size(), 8192u) << r.out;
  EXPECT_NE(r.out.find("GG3009 key-control-bytes"), std::string::npos) << r.out;

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"validate", *hostile_}, {"validate", "--format", "json", *hostile_}}) {
    const CliRun v = RunTool(args);
    EXPECT_TRUE(TerminalSafe(v.out)) << ::testing::PrintToString(args);
    EXPECT_LT(v.out.size(), 16384u);
  }
}

TEST_F(CliTest, InspectShowsTheHeader) {
  const CliRun r = RunTool({"inspect", *valid_});
  EXPECT_EQ(r.code, kExitValid);
  EXPECT_NE(r.out.find("version: 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("general.architecture = 'llama'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": valid (0 errors"), std::string::npos) << r.out;
}

// --- The real binary ---

int System(const std::string& command) {
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status)) << command;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(CliTest, ProcessExitCodesAndStandardInput) {
  const std::string cli = GGUFGUARD_CLI_PATH;
  ASSERT_TRUE(std::filesystem::exists(cli)) << cli;
  const std::string quiet = " >/dev/null 2>&1";
  EXPECT_EQ(System(cli + " validate '" + *valid_ + "'" + quiet), 0);
  EXPECT_EQ(System(cli + " validate '" + *invalid_ + "'" + quiet), 1);
  EXPECT_EQ(System(cli + quiet), 2);
  EXPECT_EQ(System(cli + " validate '" + *missing_ + "'" + quiet), 3);
  EXPECT_EQ(System("cat '" + *valid_ + "' | " + cli + " validate -" + quiet), 0);
  EXPECT_EQ(System("cat '" + *invalid_ + "' | " + cli + " validate -" + quiet), 1);
  EXPECT_EQ(System("cat '" + *valid_ + "' | " + cli + " validate --max-stdin-bytes 10 -" + quiet), 3);

  // Standard input reports what a path reports, under the label "-".
  const std::string from_stdin = testing::TempPath("cli_stdin.json");
  const std::string from_path = testing::TempPath("cli_path.json");
  System("cat '" + *invalid_ + "' | " + cli + " validate --format json - > '" + from_stdin + "'");
  System(cli + " validate --format json '" + *invalid_ + "' > '" + from_path + "'");
  const auto a = testing::ReadFileBytes(from_stdin);
  const auto b = testing::ReadFileBytes(from_path);
  ASSERT_TRUE(a.has_value() && b.has_value());
  nlohmann::json ja = nlohmann::json::parse(a->begin(), a->end());
  nlohmann::json jb = nlohmann::json::parse(b->begin(), b->end());
  EXPECT_EQ(ja["files"][0]["file"], "-");
  EXPECT_EQ(ja["files"][0]["findings"], jb["files"][0]["findings"]);
  EXPECT_EQ(ja["files"][0]["verdict"], "invalid");
  std::filesystem::remove(from_stdin);
  std::filesystem::remove(from_path);
}

// --base (docs/adapters.md), on the pairs make_corpus writes to
// corpus/adapters/ and the split model in corpus/split/.
std::string CorpusPath(const std::string& relative) {
  return (std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / relative).string();
}

TEST_F(CliTest, BaseJudgesEachAdapterAgainstTheModel) {
  const std::string base = CorpusPath("adapters/base-minimal-llama.gguf");
  const std::string shape = CorpusPath("adapters/lora-shape.gguf");
  EXPECT_EQ(RunTool({"validate", shape}).code, 0);  // alone, nothing is wrong with it
  CliRun r = RunTool({"validate", "--base", base, shape, CorpusPath("adapters/lora.gguf"),
                      CorpusPath("adapters/control-vector.gguf"), base});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GG9155"), std::string::npos) << r.out;
  for (const char* valid : {"adapters/lora.gguf", "adapters/control-vector.gguf"}) {
    CliRun one = RunTool({"validate", "--format", "json", "--base", base, CorpusPath(valid)});
    EXPECT_EQ(one.code, 0) << valid << one.out << one.err;
  }
  CliRun json = RunTool({"validate", "--format", "json", "--base", base, CorpusPath("adapters/lora-expert-count.gguf")});
  EXPECT_EQ(json.code, 1);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_EQ(doc["files"][0]["findings"][0]["rule"], "GG9156") << json.out;
  // A suppression reaches the base judge's findings too.
  const std::string suppressions = testing::TempPath("cli_base_suppressions.json");
  std::ofstream(suppressions) << R"({"suppressions": [{"rule": "GG9156", "path": "*lora-expert-count.gguf",)"
                              << R"( "reason": "known", "expires": "2099-01-01"}]})";
  EXPECT_EQ(RunTool({"validate", "--suppressions", suppressions, "--base", base,
                     CorpusPath("adapters/lora-expert-count.gguf")})
                .code,
            0);
  std::filesystem::remove(suppressions);
}

TEST_F(CliTest, BaseSplitModelIsReadShardByShard) {
  const std::string first = CorpusPath("split/minimal-llama-00001-of-00003.gguf");
  // blk.0 lies in shard 2: only blk.1, blk.2 and blk.40 are missing from
  // this 1-layer model.
  CliRun r = RunTool({"validate", "--base", first, CorpusPath("adapters/lora-tensor-missing.gguf")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("blk.1.attn_q.weight"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("'blk.0."), std::string::npos) << r.out;
  // Shard 1 alone under another name: its tensors are not the model's.
  const std::string alone = testing::TempPath("cli_base_first_shard.gguf");
  std::filesystem::copy_file(first, alone, std::filesystem::copy_options::overwrite_existing);
  CliRun inconclusive = RunTool({"validate", "--base", alone, CorpusPath("adapters/lora.gguf")});
  EXPECT_EQ(inconclusive.code, 5) << inconclusive.out << inconclusive.err;
  std::filesystem::remove(alone);
}

TEST_F(CliTest, BaseThatCannotBeReadIsAnIoErrorAndStdinIsRefused) {
  CliRun r = RunTool({"validate", "--base", *missing_, CorpusPath("adapters/lora.gguf")});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("--base"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // A shard's name brings in its set, but the file named must be there.
  const std::string no_shard = testing::TempPath("cli_no_base-00001-of-00002.gguf");
  CliRun shard = RunTool({"validate", "--base", no_shard, CorpusPath("adapters/lora.gguf")});
  EXPECT_EQ(shard.code, 3) << shard.out << shard.err;
  EXPECT_EQ(shard.out, "");
  EXPECT_EQ(RunTool({"validate", "--base", "-", CorpusPath("adapters/lora.gguf")}).code, 2);
  EXPECT_EQ(RunTool({"validate", CorpusPath("adapters/lora.gguf"), "--base"}).code, 2);
  // A base that names no architecture cannot be judged against.
  CliRun no_arch = RunTool({"validate", "--base", *hostile_, CorpusPath("adapters/lora.gguf")});
  EXPECT_EQ(no_arch.code, 5) << no_arch.out << no_arch.err;
}

}  // namespace
}  // namespace ggufguard
