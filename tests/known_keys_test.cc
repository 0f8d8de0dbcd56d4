// The known-key table and the 4004-4015 rules: each rule fires on a file
// that differs from the valid tiny model in one place, at the byte it names,
// and not on its valid neighbour.
#include "ggufguard/rules/known_keys.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::GgufBuilder;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

using ::ggufguard::testing::Check;

// The lookup for a file of architecture `arch`.
std::optional<KeyRule> Rule(std::string_view key, std::string_view arch) {
  return FindKeyRule(key, arch, FindArchInfo(arch));
}

TEST(KnownKeyTableTest, FindsGeneralArchitectureAndPatternKeys) {
  EXPECT_TRUE(Rule("general.name", ""));
  EXPECT_TRUE(Rule("tokenizer.ggml.seperator_token_id", ""));  // llama.cpp's spelling
  EXPECT_FALSE(Rule("tokenizer.ggml.separator_token_id", ""));
  EXPECT_TRUE(Rule("llama.context_length", "llama"));
  EXPECT_FALSE(Rule("llama.context_length", "qwen2"));  // another architecture's key
  EXPECT_FALSE(Rule("llama.context_length", ""));
  EXPECT_TRUE(Rule("command-r.attention.head_count", "command-r"));
  EXPECT_TRUE(Rule("general.base_model.0.name", ""));
  EXPECT_TRUE(Rule("general.base_model.12.repo_url", ""));
  EXPECT_FALSE(Rule("general.base_model.x.name", ""));
  EXPECT_FALSE(Rule("general.base_model.0", ""));
  EXPECT_TRUE(Rule("tokenizer.chat_template.tool_use", ""));
  EXPECT_FALSE(Rule("tokenizer.chat_template.", ""));
  EXPECT_TRUE(Rule("general.sampling.temp", ""));
  // an architecture the table does not know still has its keys looked up by suffix
  EXPECT_TRUE(Rule("newarch.context_length", "newarch"));
}

TEST(KnownKeyTableTest, DescribesAndAcceptsTypes) {
  std::optional<KeyRule> ffn = Rule("llama.feed_forward_length", "llama");
  ASSERT_TRUE(ffn);
  // get_key_or_arr into std::array<uint32_t>: a u32, or a bool/u32/i32 array
  EXPECT_EQ(DescribeTypes(*ffn), "u32 or array of u32/i32/bool");
  EXPECT_EQ(ffn->array_length, kPerLayerLength);
  Value v;
  v.type = ValueType::kUint32;
  EXPECT_TRUE(AcceptsValue(*ffn, v));
  v.type = ValueType::kInt32;
  EXPECT_FALSE(AcceptsValue(*ffn, v));
  v.type = ValueType::kArray;
  v.array.element_type = ValueType::kInt32;
  EXPECT_TRUE(AcceptsValue(*ffn, v));
  v.array.element_type = ValueType::kFloat32;  // GGML_ASSERT in get_arr
  EXPECT_FALSE(AcceptsValue(*ffn, v));
  EXPECT_EQ(DescribeTypes(*Rule("tokenizer.ggml.scores", "")), "array of f32");
}

TEST(KnownKeyTableTest, TransformerArchitectures) {
  EXPECT_TRUE(IsTransformerArch("llama"));
  EXPECT_TRUE(IsTransformerArch("command-r"));
  EXPECT_TRUE(IsTransformerArch("qwen3moe"));
  EXPECT_TRUE(IsTransformerArch("lfm2"));  // hybrid: attention and short convolutions
  EXPECT_FALSE(IsTransformerArch("clip"));
  EXPECT_FALSE(IsTransformerArch("mamba"));
  EXPECT_FALSE(IsTransformerArch("rwkv7"));
  EXPECT_FALSE(IsTransformerArch(""));
}

TEST(KnownKeysTest, TinyModelHasNoFindingUnderEitherPolicy) {
  BuiltFile f = MakeTinyModel().Build();
  for (const Policy& p : {DefaultPolicy(), StrictPolicy()}) {
    Report r = Check(f, p);
    EXPECT_TRUE(testing::FindingsBesidesProvenance(r).empty()) << p.name << testing::Describe(r);
    EXPECT_TRUE(r.valid());
  }
}

TEST(KnownKeysTest, KnownKeyWithWrongType) {
  TinyModel m = MakeTinyModel();
  m.Set("llama.block_count", GgufValue::I32(1));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kKnownKeyType, m.Kv(f, "llama.block_count").type));
  EXPECT_FALSE(r.valid());

  // An array whose elements llama.cpp would read as float: the OOB read.
  TinyModel scores = MakeTinyModel();
  scores.Set("tokenizer.ggml.scores", GgufValue::U8Array({0, 0, 0, 0, 0, 0, 0}));
  BuiltFile g = scores.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kKnownKeyType, scores.Kv(g, "tokenizer.ggml.scores").type));
}

TEST(KnownKeysTest, WrongTypedAlignmentIsLeftToItsOwnRule) {
  TinyModel m = MakeTinyModel();
  m.Set("general.alignment", GgufValue::U64(32));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kAlignmentType, m.Kv(f, "general.alignment").type));
  EXPECT_TRUE(LacksRule(r, RuleId::kKnownKeyType));
}

TEST(KnownKeysTest, UnknownKeyIsAnInfoFinding) {
  TinyModel m = MakeTinyModel();
  m.Set("llama.my_setting", GgufValue::U32(1)).Set("mistral.context_length", GgufValue::U32(8));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kUnknownKey, m.Kv(f, "llama.my_setting").start));
  EXPECT_TRUE(HasFinding(r, RuleId::kUnknownKey, m.Kv(f, "mistral.context_length").start));
  EXPECT_EQ(testing::CountRule(r, RuleId::kUnknownKey), 2u);
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
  EXPECT_TRUE(r.valid());
}

TEST(KnownKeysTest, MissingArchitecture) {
  TinyModel m = MakeTinyModel();
  m.Erase("general.architecture");
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kMissingArchitecture, f.kv_offsets[0]));
  EXPECT_TRUE(LacksRule(r, RuleId::kMissingHyperparameter));  // no architecture, no demands
  // The 24-byte empty file is valid.
  BuiltFile empty = GgufBuilder().Build();
  EXPECT_TRUE(IsValid(Check(empty)));
}

TEST(KnownKeysTest, ArchitectureName) {
  TinyModel m = MakeTinyModel();
  m.tensors.clear();
  m.Set("general.architecture", GgufValue::Str("llama/../x"));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kArchitectureName, m.Kv(f, "general.architecture").string_bytes() + 5));
  m.Set("general.architecture", GgufValue::Str(""));
  BuiltFile g = m.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kArchitectureName, m.Kv(g, "general.architecture").string_bytes()));
  m.Set("general.architecture", GgufValue::Str("nomic-bert_v2"));  // lenient grammar: - and _
  BuiltFile ok = m.Build();
  EXPECT_TRUE(LacksRule(Check(ok), RuleId::kArchitectureName));
}

// The finding GG4008 gives for `key` ("'KEY' is missing: ..."), at the
// architecture's value.
::testing::AssertionResult ReportsMissing(const Report& r, std::string_view key, uint64_t at) {
  for (const Finding& f : r.findings) {
    if (f.rule == RuleId::kMissingHyperparameter && f.offset == at &&
        f.message.rfind("'" + std::string(key) + "' is missing: ", 0) == 0) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure() << "no GG4008 for " << key << " at " << at << ":\n" << testing::Describe(r);
}

TEST(KnownKeysTest, MissingKeysOfModelsNotOfVocabularies) {
  TinyModel m = MakeTinyModel();
  m.Erase("llama.attention.head_count");
  BuiltFile f = m.Build();
  Report r = Check(f);
  const uint64_t at = m.Kv(f, "general.architecture").string_bytes();
  EXPECT_TRUE(ReportsMissing(r, "llama.attention.head_count", at));
  EXPECT_EQ(testing::CountRule(r, RuleId::kMissingHyperparameter), 1u);

  m.tensors.clear();  // vocab-only: llama.cpp stops before the hyperparameters
  BuiltFile vocab = m.Build();
  EXPECT_TRUE(IsValid(Check(vocab)));

  // Without tokenizer.ggml.model it is no vocabulary (the vocabulary loader
  // requires the key), so it is held to a model's keys.
  m.Erase("tokenizer.ggml.model");
  BuiltFile neither = m.Build();
  Report rn = Check(neither);
  EXPECT_FALSE(IsValid(rn));
  EXPECT_TRUE(ReportsMissing(rn, "tokenizer.ggml.model", at));
  EXPECT_TRUE(ReportsMissing(rn, "llama.attention.head_count", at));
  EXPECT_EQ(testing::CountRule(rn, RuleId::kMissingHyperparameter), 2u);

  // A model with tensors needs it too: llama_model_load loads the vocabulary.
  TinyModel model = MakeTinyModel();
  model.Erase("tokenizer.ggml.model");
  BuiltFile no_model = model.Build();
  Report rm = Check(no_model);
  EXPECT_TRUE(ReportsMissing(rm, "tokenizer.ggml.model", model.Kv(no_model, "general.architecture").string_bytes()));
  EXPECT_EQ(testing::CountRule(rm, RuleId::kMissingHyperparameter), 1u);

  // Adapters name their base model's architecture and hold no model.
  for (bool tensors : {true, false}) {
    TinyModel adapter = MakeTinyModel();
    adapter.Erase("llama.attention.head_count").Erase("llama.context_length").Erase("tokenizer.ggml.model");
    adapter.Set("general.type", GgufValue::Str("adapter")).Set("adapter.type", GgufValue::Str("lora"));
    if (!tensors) adapter.tensors.clear();
    EXPECT_TRUE(LacksRule(Check(adapter.Build()), RuleId::kMissingHyperparameter)) << tensors;
  }
  GgufBuilder untyped;  // adapter.type alone says adapter too
  untyped.AddKv("general.architecture", GgufValue::Str("llama")).AddKv("adapter.type", GgufValue::Str("lora"));
  EXPECT_TRUE(LacksRule(Check(untyped.Build()), RuleId::kMissingHyperparameter));
}

// The first part of a split model without tensors (llama-gguf-split
// --no-tensor-first-split) holds the metadata the loader reads: a model's
// keys are required of it, vocabulary or not.
TEST(KnownKeysTest, MissingKeysOfASplitModelsFirstPart) {
  TinyModel m = MakeTinyModel();
  m.tensors.clear();
  m.Erase("llama.context_length");
  m.Set("split.no", GgufValue::U16(0))
      .Set("split.count", GgufValue::U16(2))
      .Set("split.tensors.count", GgufValue::I32(4));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(ReportsMissing(r, "llama.context_length", m.Kv(f, "general.architecture").string_bytes()));
  EXPECT_EQ(testing::CountRule(r, RuleId::kMissingHyperparameter), 1u);
  m.Set("llama.context_length", GgufValue::U32(64));
  EXPECT_TRUE(IsValid(Check(m.Build())));
}

// What counts as present is what llama.cpp's lookup finds: gguf_find_key
// compares C strings, and get_key demands the exact type.
TEST(KnownKeysTest, RequiredKeysAsTheLoaderLooksThemUp) {
  auto tensorless = [](std::vector<std::pair<std::string, GgufValue>> kvs) {
    GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("llama"));
    for (auto& [k, v] : kvs) b.AddKv(k, v);
    return b.Build();
  };
  // Of the wrong type: present (GG4004's business), so the file is a
  // vocabulary that llama.cpp refuses for the type.
  BuiltFile typed = tensorless({{"tokenizer.ggml.model", GgufValue::U32(1)}});
  Report rt = Check(typed);
  EXPECT_TRUE(HasFinding(rt, RuleId::kKnownKeyType, testing::KvAt(typed, 1).type));
  EXPECT_TRUE(LacksRule(rt, RuleId::kMissingHyperparameter));
  EXPECT_FALSE(IsValid(rt));
  TinyModel m = MakeTinyModel();
  m.Set("llama.context_length", GgufValue::I32(64));
  BuiltFile i32 = m.Build();
  EXPECT_TRUE(HasFinding(Check(i32), RuleId::kKnownKeyType, m.Kv(i32, "llama.context_length").type));
  EXPECT_TRUE(LacksRule(Check(i32), RuleId::kMissingHyperparameter));

  // "tokenizer.ggml.model\0x" is the key to C code: found (GG3009 for the NUL).
  BuiltFile tail = tensorless({{std::string("tokenizer.ggml.model\0x", 22), GgufValue::Str("no_vocab")}});
  Report rtail = Check(tail);
  EXPECT_TRUE(LacksRule(rtail, RuleId::kMissingHyperparameter));
  EXPECT_TRUE(testing::HasRule(rtail, RuleId::kKeyControlBytes));
  // "tokenizer.ggml\0.model" is "tokenizer.ggml" to it: the key is missing.
  BuiltFile cut = tensorless({{std::string("tokenizer.ggml\0.model", 21), GgufValue::Str("no_vocab")}});
  Report rcut = Check(cut);
  EXPECT_TRUE(ReportsMissing(rcut, "tokenizer.ggml.model", testing::KvAt(cut, 0).string_bytes()));
  EXPECT_TRUE(ReportsMissing(rcut, "llama.context_length", testing::KvAt(cut, 0).string_bytes()));
  // A shadow first: the loader reads the u32, not the string after it.
  BuiltFile shadow = tensorless({{std::string("tokenizer.ggml.model\0", 21), GgufValue::U32(1)},
                                 {"tokenizer.ggml.model", GgufValue::Str("no_vocab")}});
  Report rshadow = Check(shadow);
  EXPECT_TRUE(HasFinding(rshadow, RuleId::kKnownKeyType, testing::KvAt(shadow, 1).type));
  EXPECT_FALSE(IsValid(rshadow));

  // v1 files are judged the same once v1 is allowed.
  Policy v1 = DefaultPolicy();
  v1.severity_override[static_cast<uint16_t>(RuleId::kVersion1)] = Severity::kInfo;
  GgufBuilder old;
  old.set_version(1).AddKv("general.architecture", GgufValue::Str("llama"));
  BuiltFile bare = old.Build();
  Report rv1 = Check(bare, v1);
  EXPECT_FALSE(IsValid(rv1));
  EXPECT_TRUE(ReportsMissing(rv1, "tokenizer.ggml.model", testing::KvAt(bare, 0, 4).string_bytes()));
  old.AddKv("tokenizer.ggml.model", GgufValue::Str("llama"))
      .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(testing::TinyTokens()));
  EXPECT_TRUE(IsValid(Check(old.Build(), v1)));

  // An architecture llama.cpp does not know: nothing says what it needs (GG4016).
  GgufBuilder unknown;
  unknown.AddKv("general.architecture", GgufValue::Str("no-such-arch"));
  Report ru = Check(unknown.Build());
  EXPECT_TRUE(LacksRule(ru, RuleId::kMissingHyperparameter));
  EXPECT_TRUE(testing::HasRule(ru, RuleId::kUnknownArchitecture));
}

TEST(KnownKeysTest, BlockCountLimit) {
  TinyModel m = MakeTinyModel();
  m.Set("llama.block_count", GgufValue::U32(513));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kBlockCountLimit, m.Kv(f, "llama.block_count").payload));
  m.Set("llama.block_count", GgufValue::U32(512));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));
  // 0 aborts a model's load (GGML_ASSERT(n_layer_all > 0)), not a
  // vocabulary-only one.
  m.Set("llama.block_count", GgufValue::U32(0));
  BuiltFile zero = m.Build();
  EXPECT_TRUE(HasFinding(Check(zero), RuleId::kBlockCountLimit, m.Kv(zero, "llama.block_count").payload));
  m.tensors.clear();
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kBlockCountLimit));
}

TEST(KnownKeysTest, PerLayerArrayLength) {
  TinyModel m = MakeTinyModel();
  m.Set("llama.feed_forward_length", GgufValue::U32Array({16, 16}));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kPerLayerArrayLength,
                         m.Kv(f, "llama.feed_forward_length").array_elements()));
  m.Set("llama.feed_forward_length", GgufValue::I32Array({16}));
  m.Set("llama.attention.head_count_kv", GgufValue::U32Array({2}));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));
}

// cohere2moe reads attention.sliding_window_pattern per layer with
// hparams.n_layer() after reading nextn_predict_layers: one element per layer
// that is not a next-token-prediction layer (generated from its loader).
TEST(KnownKeysTest, PerLayerArrayLengthLessTheNextnLayers) {
  auto file = [](std::optional<uint32_t> nextn, size_t elements) {
    GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("cohere2moe")).AddKv("cohere2moe.block_count", GgufValue::U32(4));
    if (nextn) b.AddKv("cohere2moe.nextn_predict_layers", GgufValue::U32(*nextn));
    b.AddKv("cohere2moe.attention.sliding_window_pattern", GgufValue::BoolArray(std::vector<bool>(elements, true)));
    return b.Build();
  };
  auto pattern_at = [](const BuiltFile& f) {
    return ::ggufguard::testing::KvAt(f, f.kv_offsets.size() - 1).array_elements();
  };
  const BuiltFile four_of_three = file(1, 4);
  EXPECT_TRUE(HasFinding(Check(four_of_three), RuleId::kPerLayerArrayLength, pattern_at(four_of_three)));
  EXPECT_TRUE(LacksRule(Check(file(1, 3)), RuleId::kPerLayerArrayLength));
  EXPECT_TRUE(LacksRule(Check(file(std::nullopt, 4)), RuleId::kPerLayerArrayLength));  // absent: 0
  const BuiltFile three_of_four = file(std::nullopt, 3);
  EXPECT_TRUE(HasFinding(Check(three_of_four), RuleId::kPerLayerArrayLength, pattern_at(three_of_four)));
}

TEST(KnownKeysTest, HyperparameterRanges) {
  struct Case {
    std::string key;
    GgufValue value;
  };
  const std::vector<Case> cases = {
      {"llama.attention.layer_norm_rms_epsilon", GgufValue::F32(0.0f)},
      {"llama.attention.layer_norm_rms_epsilon", GgufValue::F32(2.0f)},
      {"llama.rope.freq_base", GgufValue::F32(-1.0f)},
      {"llama.context_length", GgufValue::U32(0)},
      {"llama.attention.head_count", GgufValue::U32(0)},
      {"llama.attention.head_count_kv", GgufValue::U32(3)},  // 2 heads are not a multiple of 3
  };
  for (const Case& c : cases) {
    TinyModel m = MakeTinyModel();
    m.Set(c.key, c.value);
    BuiltFile f = m.Build();
    Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kHyperparameterRange, m.Kv(f, c.key).payload)) << c.key;
    EXPECT_TRUE(r.valid()) << c.key;  // a warning by default
    EXPECT_FALSE(Check(f, StrictPolicy()).valid()) << c.key;
  }
}

TEST(KnownKeysTest, EmbeddingShape) {
  TinyModel m = MakeTinyModel();
  m.TensorNamed("token_embd.weight").dims = {8, 6};  // one row short of the 7 tokens
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kEmbeddingShape, m.TensorOffset(f, "token_embd.weight")));

  TinyModel out = MakeTinyModel();
  out.TensorNamed("output.weight").dims = {4, 7};  // not embedding_length wide
  BuiltFile g = out.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kEmbeddingShape, out.TensorOffset(g, "output.weight")));
}

// A tiny model whose matrices are Q4_0 (rows of 32).
TinyModel QuantizedModel() {
  TinyModel m = MakeTinyModel();
  m.Set("llama.embedding_length", GgufValue::U32(32)).Set("general.file_type", GgufValue::U32(2));
  m.tensors = {{"token_embd.weight", {32, 7}, 2}, {"output_norm.weight", {32}, 0}, {"output.weight", {32, 7}, 2}};
  return m;
}

TEST(KnownKeysTest, QuantizationVersion) {
  TinyModel m = QuantizedModel();
  BuiltFile f = m.Build();
  Report r = Check(f);
  const uint64_t type_field = testing::TensorAt(f, 0, std::string("token_embd.weight").size()).type;
  EXPECT_TRUE(HasFinding(r, RuleId::kQuantizationVersion, type_field));
  EXPECT_TRUE(r.valid());  // a warning by default, an error under strict
  EXPECT_FALSE(Check(f, StrictPolicy()).valid());

  m.Set("general.quantization_version", GgufValue::U32(1));
  BuiltFile old = m.Build();
  EXPECT_TRUE(HasFinding(Check(old), RuleId::kQuantizationVersion,
                         m.Kv(old, "general.quantization_version").payload));

  m.Set("general.quantization_version", GgufValue::U32(2));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(testing::FindingsBesidesProvenance(Check(ok, StrictPolicy())).empty())
      << testing::Describe(Check(ok, StrictPolicy()));
}

TEST(KnownKeysTest, FileTypeMismatch) {
  TinyModel m = MakeTinyModel();
  m.TensorNamed("output.weight").type = 1;  // F16 in an ALL_F32 file
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kFileTypeMismatch, m.Kv(f, "general.file_type").payload));

  m.Set("general.file_type", GgufValue::U32(1));  // MOSTLY_F16 with F32 norms: fine
  BuiltFile mostly_f16 = m.Build();
  EXPECT_TRUE(LacksRule(Check(mostly_f16), RuleId::kFileTypeMismatch));

  m.Set("general.file_type", GgufValue::U32(15));  // Q4_K_M, but nothing is quantized
  BuiltFile q = m.Build();
  EXPECT_TRUE(HasFinding(Check(q), RuleId::kFileTypeMismatch, m.Kv(q, "general.file_type").payload));

  TinyModel quantized = QuantizedModel();
  quantized.Set("general.quantization_version", GgufValue::U32(2)).Set("general.file_type", GgufValue::U32(1));
  BuiltFile lie = quantized.Build();
  EXPECT_TRUE(HasFinding(Check(lie), RuleId::kFileTypeMismatch, quantized.Kv(lie, "general.file_type").payload));
}

TEST(KnownKeysTest, SplitKeys) {
  TinyModel m = MakeTinyModel();
  m.Set("split.no", GgufValue::U16(2)).Set("split.count", GgufValue::U16(2)).Set("split.tensors.count",
                                                                                  GgufValue::I32(10));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kSplitKeys, m.Kv(f, "split.no").payload));

  m.Set("split.no", GgufValue::U16(1));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));

  m.Set("split.tensors.count", GgufValue::I32(3));  // fewer than this part's 4 tensors
  BuiltFile few = m.Build();
  EXPECT_TRUE(HasFinding(Check(few), RuleId::kSplitKeys, m.Kv(few, "split.tensors.count").payload));

  TinyModel lone = MakeTinyModel();
  lone.Set("split.no", GgufValue::U16(0));
  BuiltFile g = lone.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kSplitKeys, lone.Kv(g, "split.no").start));
}

// llama.cpp resolves a key by C string: a "k\0x" copy before "k" is what it
// reads, so that copy is what the hyperparameter rules check.
TEST(KnownKeysTest, RulesReadTheCStringResolution) {
  TinyModel m = MakeTinyModel();
  m.kvs.insert(m.kvs.begin() + 1, {std::string("llama.block_count\0x", 19), GgufValue::U32(600)});
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kBlockCountLimit, testing::KvAt(f, 1).payload));
  EXPECT_TRUE(testing::HasRule(r, RuleId::kKeyCollision));

  GgufHeader h = r.header;
  KeyIndex keys(h);
  ASSERT_NE(keys.FindArch("block_count"), nullptr);
  EXPECT_EQ(keys.FindArch("block_count")->offset(), f.kv_offsets[1]);
  EXPECT_EQ(keys.arch(), "llama");
  EXPECT_EQ(VocabularySize(keys), 7u);
}

}  // namespace
}  // namespace ggufguard
