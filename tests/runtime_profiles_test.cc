// Runtime profiles (issue 40): --profile ollama, vllm, mistral.rs, candle
// beside llama.cpp and gguf; per runtime a verdict in every report; a named
// runtime's refusal is an error, an unnamed one's only its verdict. Each
// refusal class of each runtime has a file that makes it refuse and a
// neighbour it loads, from the runtime's own sources (docs/runtimes.md).
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/findings/policy_file.h"
#include "ggufguard/ggufguard.h"
#include "ggufguard/findings/runtime_effects.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/cyclonedx.h"
#include "ggufguard/report/markdown.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/runtimes/runtime_tables.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasRule;
using testing::LacksRule;
using testing::TensorOptions;

Policy Named(std::vector<std::string> names, Policy base = DefaultPolicy()) {
  std::string bad;
  EXPECT_TRUE(NameProfiles(names, &base, &bad)) << bad;
  return base;
}

const RuntimeVerdict* VerdictOf(const Report& r, Profile runtime) {
  for (const RuntimeVerdict& v : r.runtimes) {
    if (v.runtime == runtime) return &v;
  }
  return nullptr;
}

GgufBuilder Model() {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"));
  return b;
}

// A llama vocabulary of n tokens; `extra` adds keys or replaces the model.
GgufBuilder Vocabulary(uint32_t n, std::vector<std::pair<std::string, GgufValue>> extra) {
  std::vector<std::string> tokens;
  for (uint32_t i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i));
  GgufValue model = GgufValue::Str("llama");
  std::vector<std::pair<std::string, GgufValue>> rest;
  for (auto& [k, v] : extra) {
    if (k == "tokenizer.ggml.model") {
      model = v;
    } else {
      rest.emplace_back(k, v);
    }
  }
  GgufBuilder b = Model();
  b.AddKv("tokenizer.ggml.model", model);
  b.AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
  for (auto& [k, v] : rest) b.AddKv(k, v);
  return b;
}

// ---------------------------------------------------------------- profiles

TEST(RuntimeProfilesTest, ProfileNamesRoundTripAndAllNamesEveryRuntime) {
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile p = static_cast<Profile>(i);
    EXPECT_EQ(ParseProfile(ProfileName(p)), p);
  }
  EXPECT_FALSE(ParseProfile("all").has_value());
  EXPECT_FALSE(ParseProfile("vLLM").has_value());
  const Policy all = Named({"all"});
  EXPECT_TRUE(all.profiles_named);
  EXPECT_EQ(all.RequiredRuntimes(), ProfileSet::Runtimes());
  EXPECT_FALSE(all.profiles().Has(Profile::kGguf));  // all is every runtime; gguf is no runtime
  Policy p = DefaultPolicy();
  std::string bad;
  EXPECT_FALSE(NameProfiles({"vllm", "ollama2"}, &p, &bad));
  EXPECT_EQ(bad, "ollama2");
  EXPECT_FALSE(NameProfiles({}, &p, &bad));
}

TEST(RuntimeProfilesTest, UnnamedJudgesEveryRuntimeAndRequiresNone) {
  const Policy d = DefaultPolicy();
  EXPECT_FALSE(d.profiles_named);
  EXPECT_TRUE(d.RequiredRuntimes().empty());
  EXPECT_EQ(d.JudgedRuntimes(), ProfileSet::Runtimes());
  const Policy two = Named({"ollama", "candle"});
  EXPECT_EQ(two.profile, Profile::kOllama);
  EXPECT_TRUE(two.RequiredRuntimes().Has(Profile::kCandle));
  EXPECT_FALSE(two.RequiredRuntimes().Has(Profile::kVllm));
  EXPECT_EQ(two.JudgedRuntimes(), two.RequiredRuntimes());
}

TEST(RuntimeProfilesTest, ARuleRunsWhenAnyNamedProfileRunsIt) {
  // GG6012 is ggml's generic reader only: gguf runs it, llama.cpp does not.
  EXPECT_FALSE(Named({"llama.cpp"}).Enabled(RuleId::kUnpaddedEnd));
  EXPECT_TRUE(Named({"llama.cpp", "gguf"}).Enabled(RuleId::kUnpaddedEnd));
  // The vocabulary rules are llama.cpp's (and ollama's, through llama-server).
  EXPECT_FALSE(Named({"vllm"}).Enabled(RuleId::kUnknownTokenizerModel));
  EXPECT_TRUE(Named({"ollama"}).Enabled(RuleId::kUnknownTokenizerModel));
  EXPECT_TRUE(Named({"candle", "llama.cpp"}).Enabled(RuleId::kUnknownTokenizerModel));
  // The runtime rules run under every profile (they make the verdicts).
  EXPECT_TRUE(Named({"gguf"}).Enabled(RuleId::kMistralRsSpecialToken));
}

TEST(RuntimeProfilesTest, PolicyFilesNameProfilesAsTheCommandLineDoes) {
  absl::StatusOr<Policy> one = ParsePolicyJson(R"({"profile": "vllm"})", "t.json");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->profiles_named);
  EXPECT_EQ(one->RequiredRuntimes(), ProfileSet(Profile::kVllm));
  absl::StatusOr<Policy> list = ParsePolicyJson(R"({"profile": ["ollama", "candle"]})", "t.json");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->RequiredRuntimes().Has(Profile::kOllama) && list->RequiredRuntimes().Has(Profile::kCandle));
  EXPECT_FALSE(ParsePolicyJson(R"({"profile": ["vllm", 3]})", "t.json").ok());
  EXPECT_FALSE(ParsePolicyJson(R"({"profile": "tgi"})", "t.json").ok());
  EXPECT_FALSE(ParsePolicyJson(R"({"profile": []})", "t.json").ok());
}

// ---------------------------------------------------------------- one class per row

struct RuntimeCase {
  std::string name;
  RuleId rule;
  RuntimeOutcome outcome;
  std::function<GgufBuilder()> refused;  // the runtime refuses (or crashes on) it
  std::function<GgufBuilder()> loaded;   // its neighbour, which the runtime loads
};

std::vector<RuntimeCase> Cases() {
  return {
      {"OllamaTernaryType", RuleId::kOllamaTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {256}, 35); },  // TQ2_0: TypeSize has no case
       [] { return Model().AddTensor("a.weight", {256}, 12); }},  // Q4_K
      {"GgufPyOwnField", RuleId::kVllmReaderRefused, RuntimeOutcome::kRefuses,
       [] { return Model().AddKv("GGUF.kv_count", GgufValue::U64(2)); },
       [] { return Model().AddKv("gguf.kv_count", GgufValue::U64(2)); }},
      {"GgufPyUnknownType", RuleId::kVllmTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {64}, 42); },  // Q2_0: not in GGMLQuantizationType
       [] { return Model().AddTensor("a.weight", {64}, 8); }},  // Q8_0
      {"VllmUncomputableType", RuleId::kVllmTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {32}, 39); },  // MXFP4: gguf-py knows it, vLLM's layers do not
       [] { return Model().AddTensor("a.weight", {256}, 16); }},  // IQ2_XXS
      {"VllmDimensionPastInt", RuleId::kVllmDimensionInt32, RuntimeOutcome::kCrashes,
       [] {
         return Model().AddTensor("a.weight", {1}, 0,
                                  TensorOptions{.written_dims = std::vector<uint64_t>{uint64_t{1} << 31}});
       },
       [] {
         return Model().AddTensor("a.weight", {1}, 0,
                                  TensorOptions{.written_dims = std::vector<uint64_t>{(uint64_t{1} << 31) - 1}});
       }},
      {"MistralRsNoArchitecture", RuleId::kMistralRsArchitecture, RuntimeOutcome::kRefuses,
       [] { return GgufBuilder().AddKv("general.name", GgufValue::Str("x")); },
       [] { return Model().AddKv("general.name", GgufValue::Str("x")); }},
      {"MistralRsArchitectureNotAString", RuleId::kMistralRsArchitecture, RuntimeOutcome::kRefuses,
       [] { return GgufBuilder().AddKv("general.architecture", GgufValue::U32(1)); },
       [] { return GgufBuilder().AddKv("general.architecture", GgufValue::Str("phi3")); }},
      {"MistralRsEosUnset", RuleId::kMistralRsSpecialToken, RuntimeOutcome::kRefuses,
       [] { return Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(0xFFFFFFFFu)}}); },
       [] { return Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(7)}}); }},
      {"MistralRsBosPastVocabulary", RuleId::kMistralRsSpecialToken, RuntimeOutcome::kRefuses,
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(1)},
                               {"tokenizer.ggml.bos_token_id", GgufValue::U32(8)}});
       },
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(1)},
                               {"tokenizer.ggml.bos_token_id", GgufValue::U32(0)}});
       }},
      {"MistralRsNoEos", RuleId::kMistralRsSpecialToken, RuntimeOutcome::kRefuses,
       [] { return Vocabulary(8, {}); },
       [] { return Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(2)}}); }},
      {"MistralRsUnsizedType", RuleId::kMistralRsTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {64}, 42); },   // Q2_0
       [] { return Model().AddTensor("a.weight", {128}, 41); }},  // Q1_0
      {"MistralRsWordPiece", RuleId::kMistralRsTokenizer, RuntimeOutcome::kRefuses,
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.model", GgufValue::Str("bert")},
                               {"tokenizer.ggml.eos_token_id", GgufValue::U32(1)}});
       },
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.model", GgufValue::Str("gemma")},
                               {"tokenizer.ggml.eos_token_id", GgufValue::U32(1)}});
       }},
      {"MistralRsBpeWithoutPre", RuleId::kMistralRsTokenizer, RuntimeOutcome::kRefuses,
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.model", GgufValue::Str("gpt2")},
                               {"tokenizer.ggml.eos_token_id", GgufValue::U32(1)}});
       },
       [] {
         return Vocabulary(8, {{"tokenizer.ggml.model", GgufValue::Str("gpt2")},
                               {"tokenizer.ggml.pre", GgufValue::Str("llama-bpe")},
                               {"tokenizer.ggml.eos_token_id", GgufValue::U32(1)}});
       }},
      {"CandleUnknownType", RuleId::kCandleTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {256}, 23); },  // IQ4_XS
       [] { return Model().AddTensor("a.weight", {256}, 14); }},  // Q6_K
      {"CandleUnloadedType", RuleId::kCandleTensorType, RuntimeOutcome::kRefuses,
       [] { return Model().AddTensor("a.weight", {32}, 9); },   // Q8_1: its reader knows it, its loader does not
       [] { return Model().AddTensor("a.weight", {32}, 30); }},  // BF16
      {"CandleAlignmentZero", RuleId::kCandleAlignmentZero, RuntimeOutcome::kCrashes,
       [] { return Model().AddKv("general.alignment", GgufValue::U16(0)); },
       // Of a type candle does not read (u64), the key is ignored.
       [] { return Model().AddKv("general.alignment", GgufValue::U64(0)); }},
  };
}

class RuntimeCaseTest : public ::testing::TestWithParam<RuntimeCase> {};

TEST_P(RuntimeCaseTest, NamedItIsAnErrorUnnamedOnlyTheVerdict) {
  const RuntimeCase& c = GetParam();
  const Profile runtime = *RuntimeOfRule(c.rule);
  const std::string name(ProfileName(runtime));
  const Policy named = Named({name});
  const Report refused = testing::Check(c.refused().Build(), named);
  EXPECT_TRUE(HasRule(refused, c.rule)) << testing::Describe(refused);
  EXPECT_EQ(refused.verdict(), Report::Verdict::kInvalid);
  for (const Finding& f : refused.findings) {
    if (f.rule == c.rule) {
      EXPECT_EQ(f.severity, Severity::kError);
    }
  }
  const RuntimeVerdict* v = VerdictOf(refused, runtime);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->required);
  EXPECT_EQ(v->outcome, c.outcome);
  EXPECT_FALSE(v->reason.empty());

  // Unnamed: no finding (but the one rule that is memory corruption), and
  // the runtime's verdict still says it, or something worse or earlier
  // (these files are no whole models: llama.cpp's refusals, which ollama's
  // llama-server shares, may come first).
  const Report unnamed = testing::Check(c.refused().Build());
  EXPECT_EQ(static_cast<bool>(HasRule(unnamed, c.rule)), RuntimeRuleAlwaysReported(c.rule))
      << testing::Describe(unnamed);
  EXPECT_TRUE(std::any_of(unnamed.runtime_issues.begin(), unnamed.runtime_issues.end(),
                          [&](const RuntimeIssue& i) { return i.rule == c.rule && i.count >= 1; }));
  v = VerdictOf(unnamed, runtime);
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->required);
  EXPECT_GE(v->outcome, c.outcome);
  ASSERT_TRUE(v->rule.has_value());
  if (runtime != Profile::kOllama) {
    EXPECT_EQ(*v->rule, c.rule);
  }

  // The neighbour loads there.
  const Report loaded = testing::Check(c.loaded().Build(), named);
  EXPECT_TRUE(LacksRule(loaded, c.rule)) << testing::Describe(loaded);
  v = VerdictOf(loaded, runtime);
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->rule.has_value() && *v->rule == c.rule);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RuntimeCaseTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RuntimeCase>& i) { return i.param.name; });

// ---------------------------------------------------------------- what the tables stand for

TEST(RuntimeProfilesTest, OllamaRefusesAStringPastSixteenMiB) {
  // Too large to commit: built here (16 MiB + 1 byte, a few milliseconds).
  const std::string template_text(runtime_tables::kOllamaMaxStringLength + 1, 'x');
  const Report r = testing::Check(Model().AddKv("tokenizer.chat_template", GgufValue::Str(template_text)).Build(),
                                  Named({"ollama"}));
  EXPECT_TRUE(HasRule(r, RuleId::kOllamaReaderLimit)) << testing::Describe(r);
  const std::string fits(runtime_tables::kOllamaMaxStringLength, 'x');
  const Report ok = testing::Check(Model().AddKv("tokenizer.chat_template", GgufValue::Str(fits)).Build(),
                                   Named({"ollama"}));
  EXPECT_TRUE(LacksRule(ok, RuleId::kOllamaReaderLimit));
  const Report unnamed = testing::Check(Model().AddKv("tokenizer.chat_template", GgufValue::Str(template_text)).Build());
  const RuntimeVerdict* llama = VerdictOf(unnamed, Profile::kLlamaCpp);
  ASSERT_NE(llama, nullptr);
  EXPECT_NE(llama->rule, std::optional<RuleId>(RuleId::kOllamaReaderLimit));  // llama.cpp's limit is 1 GiB
}

TEST(RuntimeProfilesTest, OllamaRefusesAnElementOfAStringArrayPastSixteenMiB) {
  const std::vector<std::string> tokens = {"a", std::string(runtime_tables::kOllamaMaxStringLength + 1, 'b')};
  const Report r =
      testing::Check(Model().AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens)).Build(), Named({"ollama"}));
  ASSERT_TRUE(HasRule(r, RuleId::kOllamaReaderLimit)) << testing::Describe(r);
}

TEST(RuntimeProfilesTest, TheWorstOutcomeWinsThenTheFirstByte) {
  // candle refuses IQ4_XS and crashes on an alignment of 0: it crashes.
  const Report r = testing::Check(
      Model().AddKv("general.alignment", GgufValue::U8(0)).AddTensor("a.weight", {256}, 23).Build());
  const RuntimeVerdict* candle = VerdictOf(r, Profile::kCandle);
  ASSERT_NE(candle, nullptr);
  EXPECT_EQ(candle->outcome, RuntimeOutcome::kCrashes);
  EXPECT_EQ(candle->rule, std::optional<RuleId>(RuleId::kCandleAlignmentZero));
  // llama.cpp refuses the alignment (GG4002) and does not crash.
  const RuntimeVerdict* llama = VerdictOf(r, Profile::kLlamaCpp);
  ASSERT_NE(llama, nullptr);
  EXPECT_EQ(llama->outcome, RuntimeOutcome::kRefuses);
}

TEST(RuntimeProfilesTest, ReadersDisagreeOnADuplicateKeyAsTheirSourcesSay) {
  const Report r = testing::Check(Model().AddKv("general.name", GgufValue::Str("a")).AddKv("general.name", GgufValue::Str("b")).Build());
  ASSERT_TRUE(HasRule(r, RuleId::kDuplicateKey));
  EXPECT_EQ(VerdictOf(r, Profile::kLlamaCpp)->outcome, RuntimeOutcome::kRefuses);
  EXPECT_EQ(VerdictOf(r, Profile::kVllm)->outcome, RuntimeOutcome::kRefuses);      // KeyError
  EXPECT_EQ(VerdictOf(r, Profile::kMistralRs)->outcome, RuntimeOutcome::kRefuses);  // "is duplicated"
  EXPECT_EQ(VerdictOf(r, Profile::kCandle)->outcome, RuntimeOutcome::kLoads);       // HashMap: the last wins
  EXPECT_NE(VerdictOf(r, Profile::kVllm)->reason.find("KeyError"), std::string::npos);
  EXPECT_NE(VerdictOf(r, Profile::kOllama)->reason.find("llama-server"), std::string::npos);
}

TEST(RuntimeProfilesTest, GgufPyHangsOnAnArrayLongerThanTheFile) {
  // llama.cpp #27188: gguf-py walks 2^63 elements past the end of the file.
  const Report r = testing::Check(
      Model().AddKv("x", GgufValue::ArrayWithCount(testing::ValueType::kUint8, {GgufValue::U8(1)}, uint64_t{1} << 63)).Build());
  EXPECT_EQ(VerdictOf(r, Profile::kVllm)->outcome, RuntimeOutcome::kHangs);
  EXPECT_EQ(VerdictOf(r, Profile::kCandle)->outcome, RuntimeOutcome::kRefuses);
}

// GG9213 at its limit: the estimate is the per-item costs of runtime_rules.cc
// (190 us a key, 40 an array scalar, 70 an array string), so with the limit
// lowered to 1 s two keys and 25,000 u8 elements (1.00038 s) are refused and
// 24,990 (0.99998 s) load; 14,281 strings refuse and 14,280 load. The
// finding points at the largest array.
TEST(RuntimeProfilesTest, GgufPyParserCostRefusesPastItsLimitAndLoadsJustBelow) {
  Policy vllm = Named({"vllm"});
  vllm.limits.max_gguf_py_parse_seconds = 1;
  auto scalars = [](size_t n) { return Model().AddKv("x", GgufValue::U8Array(std::vector<uint8_t>(n, 1))).Build(); };
  auto strings = [](size_t n) {
    return Model().AddKv("x", GgufValue::StrArray(std::vector<std::string>(n, "t"))).Build();
  };
  struct Case {
    testing::BuiltFile file;
    bool refused;
  };
  std::vector<Case> cases;
  cases.push_back({scalars(25000), true});
  cases.push_back({scalars(24990), false});
  cases.push_back({strings(14281), true});
  cases.push_back({strings(14280), false});
  for (size_t i = 0; i < cases.size(); ++i) {
    const Report r = testing::Check(cases[i].file, vllm);
    const RuntimeVerdict* v = VerdictOf(r, Profile::kVllm);
    ASSERT_NE(v, nullptr);
    if (cases[i].refused) {
      EXPECT_TRUE(HasRule(r, RuleId::kVllmParserCost)) << i << testing::Describe(r);
      const uint64_t array_at = cases[i].file.kv_offsets.at(1);  // the key "x": where its KV starts
      EXPECT_TRUE(testing::HasFinding(r, RuleId::kVllmParserCost, array_at)) << i << testing::Describe(r);
      EXPECT_EQ(r.verdict(), Report::Verdict::kInvalid) << i;
      ASSERT_TRUE(v->rule.has_value()) << i;
      EXPECT_EQ(*v->rule, RuleId::kVllmParserCost) << i;
      EXPECT_GE(v->outcome, RuntimeOutcome::kRefuses) << i;
    } else {
      EXPECT_TRUE(LacksRule(r, RuleId::kVllmParserCost)) << i << testing::Describe(r);
      EXPECT_FALSE(v->rule.has_value() && *v->rule == RuleId::kVllmParserCost) << i;
    }
  }
  // At the default limit (120 s) the largest of these is far below it.
  EXPECT_TRUE(LacksRule(testing::Check(scalars(25000), Named({"vllm"})), RuleId::kVllmParserCost));
}

// ---------------------------------------------------------------- llama.cpp named

TEST(RuntimeProfilesTest, NamedLlamaCppMakesItsRefusalsErrors) {
  // A file with no architecture and no tokenizer: GG4018, a warning unnamed.
  const testing::BuiltFile empty_model = GgufBuilder().AddKv("general.name", GgufValue::Str("weights")).Build();
  const Report unnamed = testing::Check(empty_model);
  ASSERT_TRUE(HasRule(unnamed, RuleId::kNotALlamaModel));
  EXPECT_EQ(unnamed.verdict(), Report::Verdict::kValid);
  const Report named = testing::Check(empty_model, Named({"llama.cpp"}));
  EXPECT_EQ(named.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(testing::CountSeverity(named, Severity::kError), 1u) << testing::Describe(named);
  // Big-endian: a note unnamed, an error when llama.cpp is named, nothing
  // for vLLM (gguf-py swaps the bytes).
  const testing::BuiltFile big =
      GgufBuilder().AddKv("general.name", GgufValue::Str("b")).set_big_endian(true).Build();
  EXPECT_EQ(testing::Check(big).verdict(), Report::Verdict::kValid) << testing::Describe(testing::Check(big));
  const Report big_llama = testing::Check(big, Named({"llama.cpp"}));
  EXPECT_TRUE(HasRule(big_llama, RuleId::kBigEndian));
  for (const Finding& f : big_llama.findings) {
    if (f.rule == RuleId::kBigEndian) {
      EXPECT_EQ(f.severity, Severity::kError);
    }
  }
  EXPECT_EQ(big_llama.verdict(), Report::Verdict::kInvalid);
  const Report big_vllm = testing::Check(big, Named({"vllm"}));
  EXPECT_EQ(big_vllm.verdict(), Report::Verdict::kValid) << testing::Describe(big_vllm);
  EXPECT_EQ(VerdictOf(big_vllm, Profile::kVllm)->outcome, RuntimeOutcome::kLoads);
}

// ---------------------------------------------------------------- routes

TEST(RuntimeProfilesTest, DimensionPastIntIsFoundFromTheHeaderAlone) {
  // --header-only --file-size 9e18: the file is no longer inconclusive with
  // no finding; GG9212 makes it invalid (CVE-2026-53923).
  const testing::BuiltFile f =
      Model()
          .AddTensor("token_embd.weight", {64}, 1,
                     TensorOptions{.written_dims = std::vector<uint64_t>{64, (uint64_t{1} << 31) + 64}})
          .Build();
  MemoryStream in(f.bytes);
  StreamOptions options;
  options.hash = false;
  options.header_only = true;
  options.file_size = 9000000000000000000u;
  absl::StatusOr<ValidatedFile> v = ValidateStream(in, DefaultPolicy(), options);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(HasRule(v->report(), RuleId::kVllmDimensionInt32)) << testing::Describe(v->report());
  EXPECT_EQ(v->report().verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(VerdictOf(v->report(), Profile::kVllm)->outcome, RuntimeOutcome::kCrashes);
}

TEST(RuntimeProfilesTest, NothingFoundOnPartOfAFileIsInconclusive) {
  const testing::BuiltFile f = Model().AddTensor("a.weight", {32}, 0).Build();
  MemoryStream in(f.bytes);
  StreamOptions options;
  options.hash = false;
  options.header_only = true;
  absl::StatusOr<ValidatedFile> v = ValidateStream(in, DefaultPolicy(), options);
  ASSERT_TRUE(v.ok()) << v.status();
  const RuntimeVerdict* candle = VerdictOf(v->report(), Profile::kCandle);
  ASSERT_NE(candle, nullptr);
  EXPECT_EQ(RuntimeVerdictName(*candle, !v->report().not_checked.empty()), "inconclusive");
}

TEST(RuntimeProfilesTest, EveryFormatCarriesTheVerdicts) {
  const testing::BuiltFile f = Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(0xFFFFFFFFu)}}).Build();
  const Report r = testing::Check(f);
  const FileOutcome o{"eos.gguf", &r, ""};
  const std::string text = RenderTextFile(o);
  EXPECT_NE(text.find("eos.gguf: runtime mistral.rs refuses (GG9221 mistralrs-special-token at byte "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eos.gguf: runtime llama.cpp loads\n"), std::string::npos) << text;
  const nlohmann::json line = nlohmann::json::parse(RenderJsonLine(o));
  ASSERT_TRUE(line.contains("runtimes")) << line.dump();
  ASSERT_EQ(line["runtimes"].size(), 5u);
  bool saw = false;
  for (const auto& v : line["runtimes"]) {
    if (v["runtime"] == "mistral.rs") {
      saw = true;
      EXPECT_EQ(v["verdict"], "refuses");
      EXPECT_EQ(v["rule"], "GG9221");
      EXPECT_EQ(v["required"], false);
      EXPECT_NE(v["judged_at"].get<std::string>().find("EricLBuehler/mistral.rs"), std::string::npos);
    }
  }
  EXPECT_TRUE(saw);
  // A file every runtime loads, with no profile named, adds no line.
  std::optional<std::vector<uint8_t>> minimal = testing::ReadFileBytes(
      std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "valid" / "minimal-llama.gguf");
  ASSERT_TRUE(minimal.has_value());
  const Report clean = ValidateBytes(*minimal, DefaultPolicy());
  for (const RuntimeVerdict& v : clean.runtimes) EXPECT_EQ(v.outcome, RuntimeOutcome::kLoads) << ProfileName(v.runtime);
  EXPECT_EQ(RenderTextFile(FileOutcome{"ok.gguf", &clean, ""}).find("runtime "), std::string::npos);
  // Named, its runtimes are listed even when they load.
  const Report named = ValidateBytes(*minimal, Named({"vllm", "candle"}));
  const std::string named_text = RenderTextFile(FileOutcome{"ok.gguf", &named, ""});
  EXPECT_NE(named_text.find("ok.gguf: runtime (required) vllm loads\n"), std::string::npos) << named_text;
  EXPECT_EQ(named_text.find("llama.cpp"), std::string::npos) << named_text;
}

// SARIF, Markdown and CycloneDX carry the same verdicts as text and JSON:
// mistral.rs refuses with GG9221 at its byte, llama.cpp loads.
TEST(RuntimeProfilesTest, SarifMarkdownAndCycloneDxCarryTheVerdicts) {
  const testing::BuiltFile f = Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(0xFFFFFFFFu)}}).Build();
  const Report r = testing::Check(f);
  const FileOutcome o{"eos.gguf", &r, ""};
  const nlohmann::json sarif = nlohmann::json::parse(RenderSarif({o}, DefaultPolicy()));
  const nlohmann::json& runtimes = sarif["runs"][0]["artifacts"][0]["properties"]["runtimes"];
  ASSERT_EQ(runtimes.size(), 5u) << sarif.dump();
  bool sarif_saw = false;
  for (const auto& v : runtimes) {
    if (v["runtime"] != "mistral.rs") continue;
    sarif_saw = true;
    EXPECT_EQ(v["verdict"], "refuses");
    EXPECT_EQ(v["rule"], "GG9221");
  }
  EXPECT_TRUE(sarif_saw);

  // SARIF's artifact properties hold the JSON report's runtimes, whole.
  const nlohmann::json json = nlohmann::json::parse(RenderJson({o}, "default"));
  EXPECT_EQ(runtimes, json.at("files").at(0).at("runtimes")) << json.dump();

  const std::string md = testing::RenderThroughWriter(MakeMarkdownWriter, o);
  EXPECT_NE(md.find("- runtime: ` mistral.rs refuses (GG9221 mistralrs-special-token at byte "), std::string::npos) << md;
  EXPECT_NE(md.find("- runtime: ` llama.cpp loads `"), std::string::npos) << md;

  const std::string bom = testing::RenderThroughWriter(MakeCycloneDxWriter, o);
  std::string mistral, llama;
  for (const auto& [name, value] : testing::CycloneDxProperties(bom, "ggufguard:runtime:")) {
    if (name == "ggufguard:runtime:mistral.rs") mistral = value;
    if (name == "ggufguard:runtime:llama.cpp") llama = value;
  }
  EXPECT_EQ(mistral.rfind("mistral.rs refuses (GG9221", 0), 0u) << bom;
  EXPECT_EQ(llama, "llama.cpp loads") << bom;
}

// The runtime-* reproducers of corpus/regressions (README.md there): an
// error under their runtime's profile; unnamed, only GG9212 is a finding.
TEST(RuntimeProfilesTest, TheRuntimeRegressionsAreRejectedUnderTheirProfile) {
  struct Case {
    const char* file;
    RuleId rule;
    const char* profile;
  };
  for (const Case& c : {Case{"runtime-mistralrs-2282-eos-token-id-unset.gguf", RuleId::kMistralRsSpecialToken,
                             "mistral.rs"},
                        Case{"runtime-vllm-cve-2026-53923-dimension-int32.gguf", RuleId::kVllmDimensionInt32, "vllm"}}) {
    SCOPED_TRACE(c.file);
    std::optional<std::vector<uint8_t>> bytes =
        testing::ReadFileBytes(std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "regressions" / c.file);
    ASSERT_TRUE(bytes.has_value());
    const Report named = ValidateBytes(*bytes, Named({c.profile}));
    EXPECT_TRUE(HasRule(named, c.rule));
    EXPECT_EQ(named.verdict(), Report::Verdict::kInvalid);
    const Report unnamed = ValidateBytes(*bytes, DefaultPolicy());
    EXPECT_EQ(static_cast<bool>(HasRule(unnamed, c.rule)), RuntimeRuleAlwaysReported(c.rule));
    const RuntimeVerdict* v = VerdictOf(unnamed, *RuntimeOfRule(c.rule));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->rule, std::optional<RuleId>(c.rule));
  }
}

TEST(RuntimeProfilesTest, TheCApiHandsOutEachVerdict) {
  const testing::BuiltFile f = Vocabulary(8, {{"tokenizer.ggml.eos_token_id", GgufValue::U32(0xFFFFFFFFu)}}).Build();
  ggufguard_policy* policy = nullptr;
  const std::string json = R"({"profile": ["llama.cpp", "mistral.rs"]})";
  ASSERT_EQ(ggufguard_policy_from_json(json.data(), json.size(), &policy), GGUFGUARD_OK);
  ggufguard_report* report = nullptr;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), policy, &report), GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_runtime_count(report), 2u);
  ggufguard_runtime_verdict v;
  ASSERT_EQ(ggufguard_runtime_at(report, 0, &v), GGUFGUARD_OK);
  EXPECT_STREQ(v.runtime, "llama.cpp");
  EXPECT_STREQ(v.verdict, "loads");
  EXPECT_EQ(v.rule, nullptr);
  EXPECT_EQ(v.required, 1);
  ASSERT_EQ(ggufguard_runtime_at(report, 1, &v), GGUFGUARD_OK);
  EXPECT_STREQ(v.runtime, "mistral.rs");
  EXPECT_STREQ(v.verdict, "refuses");
  EXPECT_STREQ(v.rule, "GG9221");
  EXPECT_NE(std::string(v.reason).find("4294967295"), std::string::npos);
  EXPECT_EQ(ggufguard_runtime_at(report, 2, &v), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_report_verdict(report), GGUFGUARD_VERDICT_INVALID);
  ggufguard_report_free(report);
  ggufguard_policy_free(policy);
}

// ---------------------------------------------------------------- CLI

int RunCliExit(const std::string& args) {
  const std::string command = std::string(GGUFGUARD_CLI_PATH) + " " + args + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RuntimeProfilesTest, TheExitCodeFollowsTheWorstProfileNamed) {
  const std::string file =
      std::string(GGUFGUARD_SOURCE_DIR) + "/corpus/regressions/runtime-mistralrs-2282-eos-token-id-unset.gguf";
  EXPECT_EQ(RunCliExit("validate " + file), 0);
  EXPECT_EQ(RunCliExit("validate --profile llama.cpp " + file), 0);
  EXPECT_EQ(RunCliExit("validate --profile mistral.rs " + file), 1);
  EXPECT_EQ(RunCliExit("validate --profile llama.cpp --profile mistral.rs " + file), 1);
  EXPECT_EQ(RunCliExit("validate --profile all " + file), 1);
  EXPECT_EQ(RunCliExit("validate --profile vllm --profile candle " + file), 0);
  EXPECT_EQ(RunCliExit("validate --profile nope " + file), 2);
}

}  // namespace
}  // namespace ggufguard
