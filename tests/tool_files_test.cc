// Issue 29: files real tools write, judged by what their loader reads.
// corpus/regressions/tool-*.gguf (tests/tools/make_corpus.cc, ToolFiles())
// must be accepted; each change that made ggufguard reject them is checked
// here with its neighbour that must still be rejected.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/findings/profile.h"
#include "ggufguard/validate.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::Describe;
using ::ggufguard::testing::GgufBuilder;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::LacksRule;

std::vector<uint8_t> ReadRegression(const std::string& file) {
  std::ifstream in(std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "regressions" / file, std::ios::binary);
  return std::vector<uint8_t>{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Policy WithProfile(Policy p, Profile profile) {
  p.profile = profile;
  return p;
}

TEST(ToolFilesTest, RealToolOutputIsAccepted) {
  const struct {
    const char* file;
    Profile profile;  // the one strict judges it under
  } kFiles[] = {
      {"tool-llama-model-saver.gguf", Profile::kLlamaCpp},
      {"tool-ggml-examples-gguf.gguf", Profile::kGguf},
      {"tool-stable-diffusion-cpp-weights.gguf", Profile::kGguf},
      {"tool-quantize-keep-split-shard-2.gguf", Profile::kLlamaCpp},
      {"tool-convert-hf-mmproj.gguf", Profile::kLlamaCpp},
  };
  for (const auto& [file, profile] : kFiles) {
    const std::vector<uint8_t> bytes = ReadRegression(file);
    ASSERT_FALSE(bytes.empty()) << file;
    for (const Policy& policy : {DefaultPolicy(), WithProfile(StrictPolicy(), profile)}) {
      const Report r = ValidateBytes(bytes, policy);
      EXPECT_TRUE(r.valid()) << file << " under " << policy.name << Describe(r);
      EXPECT_TRUE(LacksRule(r, RuleId::kMissingArchitecture)) << file;
    }
  }
}

// The saver's unread keys pass; the same values in keys llama reads do not.
TEST(ToolFilesTest, UnreadArchitectureKeysAreNotJudged) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto llama = [](GgufBuilder b) {
    b.AddKv("general.architecture", GgufValue::Str("llama"))
        .AddKv("llama.context_length", GgufValue::U32(64))
        .AddKv("llama.embedding_length", GgufValue::U32(8))
        .AddKv("llama.block_count", GgufValue::U32(1))
        .AddKv("llama.attention.head_count", GgufValue::U32(1))
        .AddKv("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(1e-5f));
    return b;
  };
  GgufBuilder unread;
  unread.AddKv("llama.kda.gate_lower_bound", GgufValue::F32(nan))
      .AddKv("xielu.beta", GgufValue::F32Array(std::vector<float>(512, 0.0f)))
      .AddKv("llama.swiglu_clamp_exp", GgufValue::F32Array({nan, 0.0f, 0.0f}));
  Report r = ValidateBytes(llama(unread).Build().bytes, StrictPolicy());
  EXPECT_TRUE(LacksRule(r, RuleId::kNonFiniteFloat));
  EXPECT_TRUE(LacksRule(r, RuleId::kPerLayerArrayLength));

  GgufBuilder read;
  read.AddKv("llama.rope.freq_base", GgufValue::F32(nan));
  r = ValidateBytes(llama(read).Build().bytes, DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kNonFiniteFloat));
  // apertus reads xielu.*: there the length is judged.
  GgufBuilder apertus;
  apertus.AddKv("general.architecture", GgufValue::Str("apertus"))
      .AddKv("apertus.block_count", GgufValue::U32(2))
      .AddKv("xielu.beta", GgufValue::F32Array(std::vector<float>(512, 0.0f)));
  r = ValidateBytes(apertus.Build().bytes, DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kPerLayerArrayLength));
}

TEST(ToolFilesTest, NonLlmFilesAreNamedAndTheGgufProfileJudgesThemAsContainers) {
  GgufBuilder example;
  example.AddKv("some.parameter.uint8", GgufValue::U8(1)).AddTensor("tensor_0", {4}, 0);
  Report r = ValidateBytes(example.Build().bytes, DefaultPolicy());
  EXPECT_TRUE(r.valid()) << Describe(r);
  EXPECT_TRUE(HasRule(r, RuleId::kNotALlamaModel));
  EXPECT_TRUE(LacksRule(r, RuleId::kMissingArchitecture));
  bool names_profile = false;
  for (const Finding& f : r.findings) names_profile |= f.message.find("--profile gguf") != std::string::npos;
  EXPECT_TRUE(names_profile) << Describe(r);
  EXPECT_FALSE(ValidateBytes(example.Build().bytes, StrictPolicy()).valid());
  r = ValidateBytes(example.Build().bytes, WithProfile(StrictPolicy(), Profile::kGguf));
  EXPECT_TRUE(r.valid()) << Describe(r);
  EXPECT_TRUE(LacksRule(r, RuleId::kUnknownKey));

  // A vocabulary without an architecture is an LLM file: GG4006 stays.
  GgufBuilder vocab;
  vocab.AddKv("tokenizer.ggml.model", GgufValue::Str("llama")).AddTensor("tensor_0", {4}, 0);
  r = ValidateBytes(vocab.Build().bytes, DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kMissingArchitecture));
  EXPECT_TRUE(LacksRule(r, RuleId::kNotALlamaModel));
  // The gguf profile still runs every structural rule.
  GgufBuilder broken;
  broken.AddKv("some.parameter.uint8", GgufValue::U8(1)).AddTensor("tensor_0", {4, 0}, 0);
  r = ValidateBytes(broken.Build().bytes, WithProfile(DefaultPolicy(), Profile::kGguf));
  EXPECT_TRUE(HasRule(r, RuleId::kZeroDim));
}

TEST(ToolFilesTest, ProfilesSplitTheCatalog) {
  EXPECT_FALSE(JudgesLlmSemantics(RuleId::kAlignmentOutOfRange));
  EXPECT_FALSE(JudgesLlmSemantics(RuleId::kTensorOutOfBounds));
  EXPECT_FALSE(JudgesLlmSemantics(RuleId::kChatTemplateDunderAccess));
  EXPECT_FALSE(JudgesLlmSemantics(RuleId::kTensorAllocation));
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kUnknownKey));
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kSpecialTokenId));
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kKvCacheEstimate));
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kClipUnknownProjector));  // the clip loader is llama.cpp's
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kClipValueRefused));
  EXPECT_TRUE(JudgesLlmSemantics(RuleId::kDuplicateToken));
  // What only ggml's no_alloc=false reader refuses: the gguf profile alone.
  EXPECT_TRUE(ProfileRuns(Profile::kGguf, RuleId::kUnpaddedEnd));
  EXPECT_FALSE(ProfileRuns(Profile::kLlamaCpp, RuleId::kUnpaddedEnd));
  EXPECT_TRUE(ProfileRuns(Profile::kLlamaCpp, RuleId::kTensorOutOfBounds));
  EXPECT_EQ(ParseProfile("gguf"), Profile::kGguf);
  EXPECT_EQ(ParseProfile("llama.cpp"), Profile::kLlamaCpp);
  EXPECT_FALSE(ParseProfile("sd").has_value());
  absl::StatusOr<Policy> p = ParsePolicyJson(R"({"base": "strict", "profile": "gguf"})", "t.json");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->profile, Profile::kGguf);
  EXPECT_FALSE(ParsePolicyJson(R"({"profile": "sd"})", "t.json").ok());
}

// llama-quantize --keep-split: shard 2..N without quantization_version is
// fine under strict; a single file with quantized tensors and none is not.
TEST(ToolFilesTest, QuantizationVersionExemptsLaterShards) {
  GgufBuilder whole;
  whole.AddKv("general.architecture", GgufValue::Str("llama")).AddTensor("a.weight", {32}, 8);
  Report r = ValidateBytes(whole.Build().bytes, StrictPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kQuantizationVersion));
  r = ValidateBytes(ReadRegression("tool-quantize-keep-split-shard-2.gguf"), StrictPolicy());
  EXPECT_TRUE(LacksRule(r, RuleId::kQuantizationVersion));
}

// ggml's gguf_init_from_file_impl refuses both; the default policy must too.
TEST(ToolFilesTest, GgmlRefusalsAreErrorsUnderDefault) {
  using ::ggufguard::testing::TensorOptions;
  const uint64_t int64_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  auto one_tensor = [](uint64_t ne0) {
    GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("llama"))
        .AddTensor("a.weight", {1}, 24, TensorOptions{.written_dims = std::vector<uint64_t>{ne0}});  // I8
    return b.Build().bytes;
  };
  // INT64_MAX elements of one byte: the size fits 63 bits, ggml's element
  // test (INT64_MAX / ne[1] <= ne[0]) refuses it, from the header alone.
  Report r = ValidateBytes(one_tensor(int64_max), DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kTensorSizeOverflow));
  r = ValidateBytes(one_tensor(int64_max - 1), DefaultPolicy());
  EXPECT_TRUE(LacksRule(r, RuleId::kTensorSizeOverflow));

  GgufBuilder swapped;
  swapped.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddTensor("a.weight", {8}, 0, TensorOptions{.offset = 32})
      .AddTensor("b.weight", {8}, 0, TensorOptions{.offset = 0});
  r = ValidateBytes(swapped.Build().bytes, DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kTensorOutOfOrder));
  EXPECT_FALSE(r.valid());
  for (const Finding& f : r.findings) {
    if (f.rule == RuleId::kTensorOutOfOrder) {
      EXPECT_EQ(f.severity, Severity::kError);
    }
  }
}

}  // namespace
}  // namespace ggufguard
