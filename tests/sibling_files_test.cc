// Sibling template files beside a GGUF (provenance/siblings.h,
// docs/provenance.md, GG8033-GG8035): parsing tokenizer_config.json,
// chat_template.json and chat_template.jinja; the bounded read; and `scan`
// of a directory end to end.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/io/source.h"
#include "ggufguard/provenance/siblings.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

struct Parsed {
  SiblingFile status;
  std::vector<SiblingTemplate> templates;
};

Parsed Parse(std::string_view file, std::string_view bytes) {
  Parsed p;
  p.status.file = std::string(file);
  ParseSiblingFile(file, bytes, &p.status, &p.templates);
  return p;
}

TEST(SiblingParseTest, TheFormsTransformersWrites) {
  Parsed p = Parse("tokenizer_config.json", R"({"added_tokens_decoder": {"0": {"content": "<s>"}},
                                               "chat_template": "{{ messages[0].content }}", "model_max_length": 8})");
  EXPECT_EQ(p.status.state, SiblingFile::State::kRead);
  ASSERT_EQ(p.templates.size(), 1u);
  EXPECT_EQ(p.templates[0].name, "default");
  EXPECT_EQ(p.templates[0].text, "{{ messages[0].content }}");

  p = Parse("tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": "A"},
                                         {"name": "tool use", "template": "B", "extra": [1, {"x": 2}]},
                                         {"name": "", "template": "skipped"}, {"name": "rag"}]})");
  EXPECT_EQ(p.status.state, SiblingFile::State::kRead);
  ASSERT_EQ(p.templates.size(), 2u);
  EXPECT_EQ(p.templates[1].name, "tool_use");  // as gguf-py names the key
  EXPECT_EQ(p.templates[1].text, "B");

  p = Parse("chat_template.json", R"({"chat_template": null})");
  EXPECT_EQ(p.status.state, SiblingFile::State::kRead);
  EXPECT_TRUE(p.templates.empty());

  p = Parse("chat_template.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}\n");
  ASSERT_EQ(p.templates.size(), 1u);
  EXPECT_EQ(p.templates[0].name, "default");
  // A nested "chat_template" is not the file's.
  p = Parse("tokenizer_config.json", R"({"processor": {"chat_template": "X"}})");
  EXPECT_EQ(p.status.state, SiblingFile::State::kRead);
  EXPECT_TRUE(p.templates.empty());
}

TEST(SiblingParseTest, WrongTypesAreInvalid) {
  for (const char* bad : {R"({"chat_template": 42})", R"({"chat_template": {"default": "x"}})",
                          R"({"chat_template": ["x"]})", R"({"chat_template": [{"name": "a", "template": 3}]})",
                          R"({"chat_template": [{"name": "a", "template": ["x"]}]})", R"({"chat_template": true})",
                          R"(["chat_template"])", R"("chat_template")", "17"}) {
    const Parsed p = Parse("tokenizer_config.json", bad);
    EXPECT_EQ(p.status.state, SiblingFile::State::kInvalid) << bad;
    EXPECT_FALSE(p.status.reason.empty()) << bad;
  }
}

TEST(SiblingParseTest, BadJsonSaysWhere) {
  const Parsed p = Parse("tokenizer_config.json", "{\"chat_template\": \"abc\", }");
  EXPECT_EQ(p.status.state, SiblingFile::State::kInvalid);
  EXPECT_NE(p.status.reason.find("not JSON at byte"), std::string::npos) << p.status.reason;
  EXPECT_EQ(Parse("tokenizer_config.json", "").status.state, SiblingFile::State::kInvalid);
  EXPECT_EQ(Parse("tokenizer_config.json", "{\"chat_template\": \"\xff\"}").status.state, SiblingFile::State::kInvalid);
  EXPECT_EQ(Parse("chat_template.jinja", "{{ x }}\xc3").status.state, SiblingFile::State::kInvalid);
}

TEST(SiblingParseTest, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const Parsed p = Parse("tokenizer_config.json", deep);
  EXPECT_EQ(p.status.state, SiblingFile::State::kInvalid);
  EXPECT_NE(p.status.reason.find("deeper than 64"), std::string::npos) << p.status.reason;
}

// Python's json (the converter's, transformers') takes the last of two
// equal keys; other readers take the first: a divergence, said.
TEST(SiblingParseTest, ATemplateGivenTwiceIsInvalidAndTheLastIsRead) {
  const Parsed p = Parse("tokenizer_config.json", R"({"chat_template": "first", "x": 1, "chat\u005ftemplate": "last"})");
  EXPECT_EQ(p.status.state, SiblingFile::State::kInvalid);
  EXPECT_NE(p.status.reason.find("2 times"), std::string::npos) << p.status.reason;
  ASSERT_EQ(p.templates.size(), 1u);
  EXPECT_EQ(p.templates[0].text, "last");
}

// A source that says it is large and counts what is read of it.
class HugeSource final : public ByteSource {
 public:
  explicit HugeSource(uint64_t* read) : read_(read) {}
  uint64_t size() const override { return uint64_t{1} << 40; }
  absl::Status ReadAt(uint64_t, absl::Span<uint8_t> out) override {
    *read_ += out.size();
    return absl::OkStatus();
  }

 private:
  uint64_t* read_;
};

TEST(SiblingReadTest, ASiblingOverTheBoundIsNotRead) {
  uint64_t read = 0;
  const BoundedRead r = ReadBounded(std::unique_ptr<ByteSource>(std::make_unique<HugeSource>(&read)), 4096);
  EXPECT_EQ(r.state, SiblingFile::State::kSkipped);
  EXPECT_NE(r.reason.find("1099511627776 bytes, more than"), std::string::npos) << r.reason;
  EXPECT_EQ(read, 0u);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(ReadBounded(absl::NotFoundError("gone"), 10).state, SiblingFile::State::kAbsent);
  const BoundedRead refused = ReadBounded(absl::FailedPreconditionError("x is a symbolic link"), 10);
  EXPECT_EQ(refused.state, SiblingFile::State::kSkipped);
  EXPECT_EQ(refused.reason, "x is a symbolic link");
}

TEST(SiblingReadTest, LocationsStayInTheDirectory) {
  EXPECT_EQ(SiblingLocation("dir/sub/model.gguf", "tokenizer_config.json"), "dir/sub/tokenizer_config.json");
  EXPECT_EQ(SiblingLocation("model.gguf", "chat_template.jinja"), "chat_template.jinja");
  EXPECT_EQ(SiblingLocation("hf://org/repo@v1/q4/model.gguf", "chat_template.json"), "hf://org/repo@v1/q4/chat_template.json");
}

// --- scan of a directory ----------------------------------------------------

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kTemplate = ReadText(fs::path(GGUFGUARD_SOURCE_DIR) / "tests/data/chat_templates/benign/chatml_basic.jinja");

class ScanSiblingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::FreshDir("siblings-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())));
    testing::TinyModel m = testing::MakeTinyModel();
    m.Set("tokenizer.chat_template", testing::GgufValue::Str(kTemplate));
    const testing::BuiltFile f = m.Build();
    testing::WriteFileBytes((dir_ / "model.gguf").string(), f.bytes);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name, std::ios::binary) << text; }

  // The file's JSON line, and the exit code.
  nlohmann::json Scan(std::vector<std::string> extra = {}, int* code = nullptr) {
    std::vector<std::string> args = {"scan", "--format", "jsonl"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(dir_.string());
    std::ostringstream out, err;
    const int c = RunCli(args, out, err);
    if (code != nullptr) *code = c;
    std::istringstream lines(out.str());
    std::string line;
    while (std::getline(lines, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("file", "").ends_with("model.gguf")) return j;
    }
    ADD_FAILURE() << out.str() << err.str();
    return {};
  }
  static std::vector<std::string> Rules(const nlohmann::json& j) {
    std::vector<std::string> out;
    for (const auto& f : j["findings"]) out.push_back(f["rule"]);
    return out;
  }
  static std::string State(const nlohmann::json& j, const std::string& file) {
    for (const auto& f : j["sibling_files"]) {
      if (f["file"] == file) return f["state"];
    }
    return "not looked for";
  }

  fs::path dir_;
};

TEST_F(ScanSiblingsTest, TheSameTemplateIsRecorded) {
  nlohmann::json cfg = {{"chat_template", kTemplate.substr(0, kTemplate.size() - 1)}};  // JSON strings have no final newline
  Write("tokenizer_config.json", cfg.dump());
  int code = -1;
  const nlohmann::json j = Scan({}, &code);
  EXPECT_EQ(code, kExitValid) << j.dump();
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8030"}));
  ASSERT_EQ(j["templates"][0]["siblings"].size(), 1u);
  EXPECT_EQ(j["templates"][0]["siblings"][0]["file"], "tokenizer_config.json");
  EXPECT_TRUE(j["templates"][0]["siblings"][0]["same"]);
  EXPECT_EQ(State(j, "tokenizer_config.json"), "read");
  EXPECT_EQ(State(j, "chat_template.jinja"), "absent");
}

TEST_F(ScanSiblingsTest, DifferingTemplateIsAWarningWithTheDifference) {
  std::string theirs = kTemplate;
  theirs.replace(theirs.find("{% endfor %}"), 0, "{{ 'Be brief.' }}");
  Write("tokenizer_config.json", nlohmann::json{{"chat_template", theirs}}.dump());
  int code = -1;
  const nlohmann::json j = Scan({}, &code);
  EXPECT_EQ(code, kExitValid) << j.dump();  // a warning
  ASSERT_EQ(Rules(j), (std::vector<std::string>{"GG8030", "GG8033"})) << j.dump();
  const nlohmann::json& f = j["findings"][1];
  EXPECT_NE(f["message"].get<std::string>().find("Be brief."), std::string::npos) << f["message"];
  EXPECT_NE(f["message"].get<std::string>().find("output removed"), std::string::npos) << f["message"];
  const nlohmann::json& s = j["templates"][0]["siblings"][0];
  EXPECT_FALSE(s["same"]);
  ASSERT_EQ(s["changes"].size(), 1u);
  EXPECT_EQ(s["changes"][0]["removed_kinds"], nlohmann::json::array({"output"}));
  // The finding is at the template byte where the difference is.
  EXPECT_EQ(f["offset"].get<uint64_t>(), j["templates"][0]["offset"].get<uint64_t>() + kTemplate.find("{% endfor %}"));
  // The same under strict: a GGUF made before its repository fixed its
  // template differs for a good reason.
  int strict = -1;
  Scan({"--policy", "strict"}, &strict);
  EXPECT_EQ(strict, kExitValid);
}

TEST_F(ScanSiblingsTest, AnyMatchingSiblingIsEnough) {
  Write("tokenizer_config.json", nlohmann::json{{"chat_template", "{{ 'old' }}"}}.dump());
  Write("chat_template.jinja", kTemplate);
  const nlohmann::json j = Scan();
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8030"})) << j.dump();
  EXPECT_EQ(j["templates"][0]["siblings"][0]["file"], "chat_template.jinja");
}

TEST_F(ScanSiblingsTest, NamedTemplatesAreComparedByName) {
  testing::TinyModel m = testing::MakeTinyModel();
  m.Set("tokenizer.chat_template", testing::GgufValue::Str(kTemplate));
  m.Set("tokenizer.chat_template.tool_use", testing::GgufValue::Str("{{ tools | tojson }}"));
  testing::WriteFileBytes((dir_ / "model.gguf").string(), m.Build().bytes);
  Write("tokenizer_config.json",
        nlohmann::json{{"chat_template", {{{"name", "default"}, {"template", kTemplate}},
                                          {{"name", "tool use"}, {"template", "{{ tools }}"}}}}}
            .dump());
  const nlohmann::json j = Scan();
  ASSERT_EQ(j["templates"].size(), 2u);
  EXPECT_TRUE(j["templates"][0]["siblings"][0]["same"]);
  EXPECT_FALSE(j["templates"][1]["siblings"][0]["same"]);
  EXPECT_EQ(j["templates"][1]["siblings"][0]["name"], "tool_use");
  int differs = 0;
  for (const auto& f : j["findings"]) differs += f["rule"] == "GG8033";
  EXPECT_EQ(differs, 1);
}

TEST_F(ScanSiblingsTest, BadJsonIsAWarningAndTheOthersAreStillRead) {
  Write("tokenizer_config.json", "{\"chat_template\": ");
  Write("chat_template.jinja", kTemplate);
  const nlohmann::json j = Scan();
  EXPECT_EQ(State(j, "tokenizer_config.json"), "invalid");
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8034", "GG8030"})) << j.dump();
  EXPECT_TRUE(j["templates"][0]["siblings"][0]["same"]);
}

TEST_F(ScanSiblingsTest, LinkedSiblingIsSkipped) {
  fs::create_symlink("/etc/passwd", dir_ / "tokenizer_config.json");
  nlohmann::json j = Scan();
  EXPECT_EQ(State(j, "tokenizer_config.json"), "skipped");
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8035", "GG8030"})) << j.dump();
  // Followed with --follow-symlinks (as the GGUF files are): /etc/passwd
  // is no JSON.
  j = Scan({"--follow-symlinks"});
  EXPECT_EQ(State(j, "tokenizer_config.json"), "invalid");
}

TEST_F(ScanSiblingsTest, AFifoIsNeverWaitedOn) {
  ASSERT_EQ(::mkfifo((dir_ / "chat_template.jinja").c_str(), 0600), 0);
  const nlohmann::json j = Scan();
  EXPECT_EQ(State(j, "chat_template.jinja"), "skipped");
}

TEST_F(ScanSiblingsTest, ASiblingOverThePolicyLimitIsNotRead) {
  Write("tokenizer_config.json", nlohmann::json{{"chat_template", std::string(2000, 'x')}}.dump());
  Write("policy.json", R"({"base": "default", "limits": {"max_sibling_file_bytes": 1000}})");
  const nlohmann::json j = Scan({"--policy", (dir_ / "policy.json").string()});
  EXPECT_EQ(State(j, "tokenizer_config.json"), "skipped");
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8035", "GG8030"})) << j.dump();
}

TEST_F(ScanSiblingsTest, NoSiblingsReadsNone) {
  Write("tokenizer_config.json", "not json");
  const nlohmann::json j = Scan({"--no-siblings"});
  EXPECT_TRUE(j["sibling_files"].empty());
  EXPECT_EQ(Rules(j), (std::vector<std::string>{"GG8030"}));
}

TEST_F(ScanSiblingsTest, AFileWithoutATemplateLooksForNone) {
  testing::TinyModel m = testing::MakeTinyModel();
  m.Erase("tokenizer.chat_template");
  testing::WriteFileBytes((dir_ / "model.gguf").string(), m.Build().bytes);
  Write("tokenizer_config.json", "not json");
  const nlohmann::json j = Scan();
  EXPECT_TRUE(j["sibling_files"].empty());
  EXPECT_TRUE(j["findings"].empty()) << j.dump();
}

}  // namespace
}  // namespace ggufguard
