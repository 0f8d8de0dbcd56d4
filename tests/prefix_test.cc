// Every prefix of a valid file is a file that lost its end. Where the cut
// lands decides the one finding that must say so: in the header, truncated
// (GG1001); at or before the data section, missing tensor data (GG6008);
// inside a tensor's data, out of bounds (GG6002) for exactly the tensors the
// cut reaches. A cut in the final padding loses nothing (padding at the end is
// optional). ASan checks that no cut makes the parser read out of bounds.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::Describe;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasFinding;
using testing::TensorAt;
using Vt = testing::ValueType;
using testing::kF16;
using testing::kF32;
using testing::kQ4_0;

struct Sample {
  std::string name;
  BuiltFile file;
  std::vector<uint64_t> name_lengths;  // per tensor, to find its offset field
  uint64_t length_size = 8;
  Policy policy = testing::StructuralPolicy();
};

GgufBuilder ModelBuilder() {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("llama.block_count", GgufValue::U32(1))
      .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray({"<s>", "", "a", "bc"}))
      .AddKv("tokenizer.ggml.scores", GgufValue::F32Array({0.0f, -1.0f, -2.0f, -3.0f}))
      .AddKv("test.nested", GgufValue::Array(Vt::kArray, {GgufValue::I16Array({1, -1})}))
      .AddTensor("token_embd.weight", {4, 2}, kF16)
      .AddTensor("blk.0.ffn.weight", {32, 2}, kQ4_0)
      .AddTensor("output_norm.weight", {3}, kF32);
  return b;
}
const std::vector<uint64_t> kModelNames = {17, 16, 18};

std::vector<Sample> SmallSamples() {
  std::vector<Sample> s;
  s.push_back({"empty", GgufBuilder().Build(), {}});
  s.push_back(
      {"kvs_only",
       GgufBuilder().AddKv("general.name", GgufValue::Str("x")).AddKv("a.b", GgufValue::U8Array({1, 2})).Build(),
       {}});
  s.push_back({"model_unpadded_end", ModelBuilder().set_pad_end(false).Build(), kModelNames});
  s.push_back({"model_padded_end", ModelBuilder().Build(), kModelNames});
  s.push_back({"model_big_endian", ModelBuilder().set_big_endian(true).set_pad_end(false).Build(), kModelNames});
  s.push_back({"model_align_64", ModelBuilder().AddAlignmentKv(64).set_pad_end(false).Build(), kModelNames});
  s.push_back({"model_v1", ModelBuilder().set_version(1).set_pad_end(false).Build(), kModelNames, 4,
               testing::V1AllowedPolicy()});
  return s;
}

// About 200 KB: a 9,000-token vocabulary and a few tensors after it.
Sample LargeSample() {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  for (int i = 0; i < 9000; ++i) {
    tokens.push_back("tok" + std::to_string(i * 7919 % 100000));
    scores.push_back(-static_cast<float>(i));
  }
  BuiltFile f = GgufBuilder()
                    .AddKv("general.architecture", GgufValue::Str("llama"))
                    .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
                    .AddKv("tokenizer.ggml.scores", GgufValue::F32Array(scores))
                    .AddTensor("token_embd.weight", {64, 64}, kF16)
                    .AddTensor("blk.0.ffn.weight", {256, 8}, kQ4_0)
                    .AddTensor("output_norm.weight", {100}, kF32)
                    .set_pad_end(false)
                    .Build();
  return Sample{"large", std::move(f), kModelNames};
}

// What a cut at `cut` must give, checked against both validation paths.
void CheckCut(const Sample& s, uint64_t cut) {
  const BuiltFile& f = s.file;
  const std::vector<uint8_t> bytes(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
  const Report r = ValidateBytes(bytes, s.policy);
  SCOPED_TRACE(s.name + " cut at " + std::to_string(cut) + " of " + std::to_string(f.file_size) + "\n" + Describe(r));

  uint64_t data_end = f.data_offset;  // where the last byte of tensor data ends
  for (size_t i = 0; i < f.tensor_sizes.size(); ++i) {
    data_end = std::max(data_end, f.tensor_data_offsets[i] + f.tensor_sizes[i]);
  }
  const bool has_tensors = !f.tensor_sizes.empty();

  if (cut < f.header_end) {
    ASSERT_FALSE(r.valid());
    EXPECT_FALSE(r.header_parsed);
    ASSERT_EQ(testing::CountSeverity(r, Severity::kError), 1u);
    EXPECT_EQ(testing::CountRule(r, RuleId::kTruncated), 1u);
    for (const Finding& x : r.findings) {
      if (x.rule == RuleId::kTruncated) {
        EXPECT_LE(x.offset, cut);
      }
    }
  } else if (has_tensors && cut <= f.data_offset) {
    ASSERT_FALSE(r.valid());
    EXPECT_TRUE(r.header_parsed);
    EXPECT_TRUE(HasFinding(r, RuleId::kMissingTensorData, cut));
    EXPECT_EQ(testing::CountSeverity(r, Severity::kError), 1u);
  } else if (has_tensors && cut < data_end) {
    ASSERT_FALSE(r.valid());
    EXPECT_TRUE(r.header_parsed);
    EXPECT_EQ(testing::CountRule(r, RuleId::kTruncated), 0u);
    EXPECT_EQ(testing::CountRule(r, RuleId::kMissingTensorData), 0u);
    size_t cut_tensors = 0;
    for (size_t i = 0; i < f.tensor_sizes.size(); ++i) {
      const uint64_t field = TensorAt(f, i, s.name_lengths[i], s.length_size).offset_field;
      const bool lost = f.tensor_data_offsets[i] + f.tensor_sizes[i] > cut;
      cut_tensors += lost;
      EXPECT_EQ(static_cast<bool>(HasFinding(r, RuleId::kTensorOutOfBounds, field)), lost) << "tensor " << i;
    }
    EXPECT_GE(cut_tensors, 1u);
    EXPECT_EQ(testing::CountSeverity(r, Severity::kError), cut_tensors);
  } else {
    // Only the optional final padding (or nothing) is missing.
    EXPECT_TRUE(r.valid());
    EXPECT_EQ(testing::CountRule(r, RuleId::kTruncated) + testing::CountRule(r, RuleId::kTensorOutOfBounds) +
                  testing::CountRule(r, RuleId::kMissingTensorData),
              0u);
  }

  std::optional<ValidatedFile> via_source = testing::ValidateThroughSource(bytes, s.policy);
  ASSERT_TRUE(via_source.has_value());
  EXPECT_EQ(testing::RulesAt(via_source->report()), testing::RulesAt(r));
  EXPECT_EQ(via_source->report().valid(), r.valid());
}

TEST(PrefixTest, EveryCutOfSmallFiles) {
  for (const Sample& s : SmallSamples()) {
    ASSERT_TRUE(testing::IsValid(ValidateBytes(s.file.bytes, s.policy))) << s.name;
    for (uint64_t cut = 0; cut <= s.file.file_size; ++cut) {
      CheckCut(s, cut);
      if (::testing::Test::HasFailure()) return;  // one broken cut says enough
    }
  }
}

// The cut lands in the final padding of a padded file: that alone is valid.
TEST(PrefixTest, CutInTheFinalPaddingIsValid) {
  BuiltFile f = ModelBuilder().Build();
  uint64_t data_end = f.tensor_data_offsets.back() + f.tensor_sizes.back();
  ASSERT_LT(data_end, f.file_size);
  for (uint64_t cut = data_end; cut < f.file_size; ++cut) {
    std::vector<uint8_t> bytes(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const Report r = ValidateBytes(bytes, testing::StructuralPolicy());
    EXPECT_TRUE(testing::IsValid(r)) << cut;
    EXPECT_TRUE(testing::RulesAtExcept(r, RuleId::kNestedArray).empty()) << Describe(r);
  }
}

TEST(PrefixTest, SpreadCutsOfALargeFile) {
  const Sample s = LargeSample();
  const BuiltFile& f = s.file;
  ASSERT_GT(f.file_size, 150u * 1024);
  ASSERT_LT(f.file_size, 260u * 1024);
  ASSERT_TRUE(testing::IsValid(ValidateBytes(f.bytes, s.policy)));

  std::set<uint64_t> cuts;
  constexpr uint64_t kSpread = 520;
  for (uint64_t k = 0; k <= kSpread; ++k) cuts.insert(f.file_size * k / kSpread);
  // And both sides of every boundary.
  std::vector<uint64_t> edges = {0, f.header_end, f.data_offset, f.file_size};
  for (uint64_t o : f.kv_offsets) edges.push_back(o);
  for (uint64_t o : f.kv_value_offsets) edges.push_back(o);
  for (uint64_t o : f.tensor_info_offsets) edges.push_back(o);
  for (size_t i = 0; i < f.tensor_sizes.size(); ++i) {
    edges.push_back(f.tensor_data_offsets[i]);
    edges.push_back(f.tensor_data_offsets[i] + f.tensor_sizes[i]);
  }
  for (uint64_t e : edges) {
    for (uint64_t d = 0; d < 3; ++d) {
      if (e >= d) cuts.insert(e - d);
      if (e + d <= f.file_size) cuts.insert(e + d);
    }
  }
  ASSERT_GE(cuts.size(), 500u);
  for (uint64_t cut : cuts) {
    CheckCut(s, cut);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace ggufguard
