// The generated llama.cpp knowledge (llama_tables.inc via known_keys.h): the
// invariants of the data, the keys the issue lists with their loader types,
// and the rules that read it per architecture (GG4004, GG4008, GG4010,
// GG4012, GG4016, GG9002), each on a triggering file and its valid neighbour.
// Realistic headers for a sample of architectures, written with the keys and
// types convert_hf_to_gguf.py writes, pass under default and strict, and each
// fails when a key its loader requires is dropped.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::Check;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

constexpr TypeSet kU32 = TypeBit(ValueType::kUint32);
constexpr TypeSet kI32 = TypeBit(ValueType::kInt32);
constexpr TypeSet kF32 = TypeBit(ValueType::kFloat32);
constexpr TypeSet kBool = TypeBit(ValueType::kBool);
constexpr TypeSet kStr = TypeBit(ValueType::kString);

GgufValue BoolArray(const std::vector<bool>& v) {
  std::vector<GgufValue> elems;
  for (bool b : v) elems.push_back(GgufValue::Bool(b));
  return GgufValue::Array(testing::ValueType::kBool, std::move(elems));
}

std::optional<KeyRule> Rule(std::string_view key, std::string_view arch) {
  return FindKeyRule(key, arch, FindArchInfo(arch));
}

std::set<std::string> Required(std::string_view arch) {
  std::set<std::string> out;
  const ArchInfo* info = FindArchInfo(arch);
  if (info != nullptr) ForEachRequiredKey(*info, [&](std::string_view k) { out.emplace(k); });
  return out;
}

// ---- invariants of the generated data -------------------------------------

TEST(KnowledgeTableTest, StatesItsUpstreamCommit) {
  const std::string_view commit = LlamaCppCommit();
  EXPECT_EQ(commit.size(), 40u);
  EXPECT_TRUE(std::all_of(commit.begin(), commit.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }));
}

TEST(KnowledgeTableTest, ReadListsAreSortedWithoutRepeatsAndTyped) {
  auto check = [](absl::Span<const KnownKey> reads, std::string_view what) {
    for (size_t i = 0; i < reads.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(reads[i - 1].name, reads[i].name) << what;
      }
      EXPECT_FALSE(reads[i].name.empty()) << what;
      EXPECT_NE(reads[i].scalar | reads[i].elements, 0) << what << " " << reads[i].name << " accepts nothing";
    }
  };
  check(CommonReads(), "common");
  for (std::string_view arch : {"llama", "qwen3", "deepseek2", "gemma4", "wavtokenizer-dec", "apertus"}) {
    const ArchInfo* info = FindArchInfo(arch);
    ASSERT_NE(info, nullptr) << arch;
    check(ArchReads(*info), arch);
  }
}

TEST(KnowledgeTableTest, CoversTheArchitecturesLlamaCppBuilds) {
  // Names the issue lists, and a spread of families.
  for (std::string_view arch :
       {"llama", "qwen3", "qwen3moe", "qwen3vl", "gemma3n", "gemma4", "glm4moe", "gpt-oss", "ernie4_5-moe",
        "hunyuan-moe", "mamba2", "rwkv7", "t5", "wavtokenizer-dec", "lfm2", "bert", "deepseek2", "command-r",
        "nemotron_h", "granitehybrid", "falcon-h1", "jamba", "qwen3next", "kimi-linear", "smollm3", "olmo2"}) {
    const ArchInfo* info = FindArchInfo(arch);
    ASSERT_NE(info, nullptr) << arch;
    EXPECT_EQ(info->kind, ArchKind::kModel) << arch;
    // every model architecture needs what llama_model_base::load_hparams reads
    // unconditionally, and what the vocabulary loader does
    std::set<std::string> req = Required(arch);
    for (const char* k : {"context_length", "embedding_length", "block_count", "=tokenizer.ggml.model"}) {
      EXPECT_TRUE(req.count(k)) << arch << " " << k;
    }
  }
  EXPECT_EQ(FindArchInfo("clip")->kind, ArchKind::kOtherFile);
  EXPECT_EQ(FindArchInfo("controlvector")->kind, ArchKind::kOtherFile);
  EXPECT_EQ(FindArchInfo("gptj")->kind, ArchKind::kNameOnly);  // named in LLM_ARCH_NAMES, no model class
  EXPECT_EQ(FindArchInfo("no-such-arch"), nullptr);
  EXPECT_EQ(FindArchInfo(""), nullptr);
  EXPECT_TRUE(Required("clip").empty());
}

TEST(KnowledgeTableTest, MemoryKindsFollowCreateMemory) {
  EXPECT_EQ(FindArchInfo("llama")->memory, ArchMemory::kKvCache);
  EXPECT_EQ(FindArchInfo("mamba2")->memory, ArchMemory::kRecurrent);
  EXPECT_EQ(FindArchInfo("rwkv7")->memory, ArchMemory::kRecurrent);
  EXPECT_EQ(FindArchInfo("lfm2")->memory, ArchMemory::kHybrid);
  EXPECT_EQ(FindArchInfo("jamba")->memory, ArchMemory::kHybrid);
  EXPECT_EQ(FindArchInfo("bert")->memory, ArchMemory::kNone);
  EXPECT_EQ(FindArchInfo("dream")->memory, ArchMemory::kNone);
  EXPECT_TRUE(FindArchInfo("qwen3")->token_embd_by_vocab);
  EXPECT_FALSE(FindArchInfo("bert")->output_by_vocab);  // an encoder has no output head
  EXPECT_EQ(FindArchInfo("wavtokenizer-dec")->n_embd_key, "features_length");
}

// Arch-specific requirements checked by hand against the loader source at the
// table's commit (src/models/<arch>.cpp load_arch_hparams).
TEST(KnowledgeTableTest, ArchitectureSpecificRequiredKeys) {
  const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> expected = {
      {"qwen3", {"attention.layer_norm_rms_epsilon", "attention.head_count"}},
      {"deepseek2", {"attention.kv_lora_rank", "expert_feed_forward_length", "expert_shared_count"}},
      {"mamba2", {"ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count"}},
      {"rwkv7", {"wkv.head_size", "attention.decay_lora_rank", "attention.iclr_lora_rank"}},
      {"t5", {"attention.relative_buckets_count"}},
      {"bert", {"attention.layer_norm_epsilon"}},
      {"lfm2", {"shortconv.l_cache"}},
      {"gemma4", {"attention.sliding_window", "attention.sliding_window_pattern", "embedding_length_per_layer_input",
                  "attention.key_length_swa", "attention.value_length_swa"}},
      {"qwen3vl", {"rope.dimension_sections"}},
      {"apertus", {"=xielu.alpha_n", "=xielu.eps"}},
      {"wavtokenizer-dec", {"features_length", "posnet.embedding_length", "convnext.block_count"}},
  };
  for (const auto& [arch, keys] : expected) {
    std::set<std::string> req = Required(arch);
    for (std::string_view k : keys) EXPECT_TRUE(req.count(std::string(k))) << arch << " should require " << k;
  }
  // read only inside a condition (non-lite models): not demanded
  EXPECT_FALSE(Required("deepseek2").count("attention.q_lora_rank"));
  // hybrid and recurrent models do not need attention heads
  EXPECT_FALSE(Required("mamba2").count("attention.head_count"));
  EXPECT_FALSE(Required("lfm2").count("attention.head_count"));
}

// The keys the issue lists as missing, with the types llama.cpp reads them as.
TEST(KnowledgeTableTest, KeysTheIssueListsHaveTheirLoaderTypes) {
  struct Expect {
    std::string_view key;
    std::string_view arch;
    TypeSet scalar;
    TypeSet elements;
  };
  const Expect cases[] = {
      {"glm4moe.nextn_predict_layers", "glm4moe", kU32, 0},
      {"llama.expert_group_count", "llama", kU32, 0},
      {"llama.expert_group_used_count", "llama", kU32, 0},
      {"llama.embedding_length_out", "llama", kU32, 0},
      {"gemma4.embedding_length_per_layer_input", "gemma4", kU32, 0},
      {"gemma4.attention.key_length_swa", "gemma4", kU32, 0},
      {"gemma4.attention.value_length_swa", "gemma4", kU32, 0},
      {"gemma3.rope.freq_base_swa", "gemma3", kF32, 0},
      {"llama.rope.dimension_count_swa", "llama", kU32, 0},
      {"gemma4.attention.shared_kv_layers", "gemma4", kU32, 0},
      {"t5.decoder_block_count", "t5", kU32, 0},
      {"qwen3next.full_attention_interval", "qwen3next", kU32, 0},
      {"glm-dsa.attention.indexer.head_count", "glm-dsa", kU32, 0},
      {"glm-dsa.attention.indexer.key_length", "glm-dsa", kU32, 0},
      {"glm-dsa.attention.indexer.top_k", "glm-dsa", kU32, 0},
      {"lfm2.shortconv.l_cache", "lfm2", kU32, 0},
      {"llama.classifier.output_labels", "llama", 0, kStr},
      {"adapter.type", "llama", kStr, 0},
      {"adapter.lora.alpha", "llama", kF32, 0},
      {"adapter.alora.invocation_tokens", "llama", 0, kU32},
      {"imatrix.chunk_count", "", kU32, 0},
      {"imatrix.chunk_size", "", kU32, 0},
      {"imatrix.datasets", "", 0, kStr},
      {"clip.projector_type", "clip", kStr, 0},
      {"clip.vision.image_size", "clip", kU32, 0},
      {"clip.vision.attention.layer_norm_epsilon", "clip", kF32, 0},
      {"clip.has_vision_encoder", "clip", kBool, 0},
      {"controlvector.layer_count", "controlvector", kI32, 0},
      {"tokenizer.ggml.precompiled_charsmap", "", 0, TypeBit(ValueType::kUint8) | TypeBit(ValueType::kInt8)},
      {"split.count", "", TypeBit(ValueType::kUint16), 0},
  };
  for (const Expect& e : cases) {
    std::optional<KeyRule> r = Rule(e.key, e.arch);
    ASSERT_TRUE(r) << e.key;
    EXPECT_EQ(r->scalar & e.scalar, e.scalar) << e.key << ": " << DescribeTypes(*r);
    EXPECT_EQ(r->elements & e.elements, e.elements) << e.key << ": " << DescribeTypes(*r);
  }
  // the vocabulary loader reads tokens with gguf_get_arr_str (asserts strings);
  // deepseek2's extra get_arr_n, which only counts them, must not widen that
  for (std::string_view arch : {"llama", "deepseek2"}) {
    EXPECT_EQ(Rule("tokenizer.ggml.tokens", arch)->elements, kStr) << arch;
    EXPECT_EQ(Rule("tokenizer.ggml.tokens", arch)->scalar, 0) << arch;
  }
  // exact where get_key is exact
  EXPECT_EQ(Rule("glm4moe.nextn_predict_layers", "glm4moe")->scalar, kU32);
  EXPECT_EQ(Rule("glm4moe.nextn_predict_layers", "glm4moe")->elements, 0);
  // attention.sliding_window_pattern: gemma4 reads it per layer (u32 or bool/u32/i32 array,
  // block_count long); gemma3 and olmo2 read a u32 period and skip an array
  std::optional<KeyRule> g4 = Rule("gemma4.attention.sliding_window_pattern", "gemma4");
  EXPECT_EQ(g4->scalar, kU32);
  EXPECT_EQ(g4->elements, kU32 | kI32 | kBool);
  EXPECT_EQ(g4->array_length, kPerLayerLength);
  EXPECT_EQ(Rule("olmo2.attention.sliding_window_pattern", "olmo2")->array_length, kAnyLength);
  // rope.dimension_sections: exactly 4
  std::optional<KeyRule> sections = Rule("qwen3vl.rope.dimension_sections", "qwen3vl");
  EXPECT_EQ(sections->array_length, 4u);
  EXPECT_EQ(sections->elements, kU32 | kI32 | kBool);
  // per-layer float arrays: f32 or an f32 array, never an integer array (GGML_ASSERT)
  std::optional<KeyRule> clamp = Rule("afmoe.swiglu_clamp_exp", "afmoe");
  EXPECT_EQ(clamp->scalar, kF32);
  EXPECT_EQ(clamp->elements, kF32);
  EXPECT_EQ(clamp->array_length, kPerLayerLength);
  std::optional<KeyRule> xielu = Rule("xielu.alpha_n", "apertus");
  EXPECT_EQ(xielu->elements, kF32);
  EXPECT_EQ(xielu->array_length, kPerLayerLength);
  // decoder_start_token_id: t5 reads a u32; for other architectures llama.cpp's
  // saver writes an i32 and nothing reads it
  EXPECT_EQ(Rule("t5.decoder_start_token_id", "t5")->scalar, kU32);
  EXPECT_TRUE(Rule("llama.decoder_start_token_id", "llama")->scalar & kI32);
}

// ---- rules on triggering files and their neighbours -------------------------

TEST(KnowledgeRulesTest, UnknownArchitecture) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str("no-such-arch"));
  BuiltFile f = m.Build();
  const uint64_t at = m.Kv(f, "general.architecture").string_bytes();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kUnknownArchitecture, at));
  EXPECT_TRUE(IsValid(r));  // a warning under default
  EXPECT_FALSE(IsValid(Check(f, StrictPolicy())));
  // no architecture-specific rule ran: the llama.* keys left are unknown keys
  EXPECT_TRUE(LacksRule(r, RuleId::kMissingHyperparameter));

  m.Set("general.architecture", GgufValue::Str("gptj"));  // named, but llama.cpp builds no model
  BuiltFile gptj = m.Build();
  EXPECT_TRUE(HasFinding(Check(gptj), RuleId::kUnknownArchitecture, m.Kv(gptj, "general.architecture").string_bytes()));

  BuiltFile known = MakeTinyModel().Build();
  EXPECT_TRUE(LacksRule(Check(known), RuleId::kUnknownArchitecture));
  EXPECT_TRUE(LacksRule(Check(known, StrictPolicy()), RuleId::kUnknownArchitecture));

  // other kinds of file with their own names, and an adapter for an unknown base
  for (const char* other : {"clip", "controlvector"}) {
    BuiltFile g = testing::GgufBuilder().AddKv("general.architecture", GgufValue::Str(other)).Build();
    EXPECT_TRUE(LacksRule(Check(g), RuleId::kUnknownArchitecture)) << other;
  }
  TinyModel adapter = MakeTinyModel();
  adapter.Set("general.architecture", GgufValue::Str("no-such-arch"))
      .Set("general.type", GgufValue::Str("adapter"))
      .Set("adapter.type", GgufValue::Str("lora"));
  EXPECT_TRUE(LacksRule(Check(adapter.Build()), RuleId::kUnknownArchitecture));
}

TEST(KnowledgeRulesTest, ArchitectureSpecificRequiredKey) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str("qwen3"));
  for (auto& kv : m.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "qwen3." + kv.first.substr(6);
  }
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));
  m.Erase("qwen3.attention.layer_norm_rms_epsilon");
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kMissingHyperparameter, m.Kv(f, "general.architecture").string_bytes()));
  EXPECT_EQ(testing::CountRule(r, RuleId::kMissingHyperparameter), 1u);
}

// ---- files without tensors, for every architecture of the table ------------
//
// llama_model_load (llama.cpp 3f545becc, src/llama.cpp) runs load_hparams
// and then the vocabulary loader for every file. A model's load requires
// {arch}.context_length, embedding_length and block_count of every
// architecture before the architecture's own load_arch_hparams
// (src/llama-model.cpp llama_model_base::load_hparams); a vocabulary-only
// load leaves load_hparams after general.name, but the vocabulary loader
// requires tokenizer.ggml.model either way (src/llama-vocab.cpp
// llama_vocab::impl::load). The loader oracle's llama.cpp (node-llama-cpp
// 3.21.1) refuses a file of each of the 145 architectures it builds that
// names its architecture and nothing else, in both kinds of load, and loads
// each one's vocabulary-only file that has a vocabulary and no
// hyperparameters.

// The keys GG4008 reports missing ("'KEY' is missing: ..."), each finding at
// the architecture's value.
std::set<std::string> ReportedMissing(const Report& r, uint64_t at) {
  std::set<std::string> out;
  for (const Finding& f : r.findings) {
    const size_t end = f.message.find("' is missing: ");
    if (f.rule != RuleId::kMissingHyperparameter || f.offset != at || f.message.rfind("'", 0) != 0 ||
        end == std::string::npos) {
      continue;
    }
    out.insert(f.message.substr(1, end - 1));
  }
  return out;
}

// The file's name for a key of the table ("suffix" of "{arch}.", or "=whole.name").
std::string KeyOf(std::string_view arch, const std::string& name) {
  return name[0] == '=' ? name.substr(1) : std::string(arch) + "." + name;
}

// A value of a type the architecture's loader reads `key` as; one element
// where only an array is read.
GgufValue ValueFor(const std::string& key, const ArchInfo& info) {
  const std::optional<KeyRule> rule = FindKeyRule(key, info.name, &info);
  EXPECT_TRUE(rule) << key;
  const TypeSet scalar = rule ? rule->scalar : kU32;
  if (scalar & kU32) return GgufValue::U32(1);
  if (scalar & kI32) return GgufValue::I32(1);
  if (scalar & kF32) return GgufValue::F32(0.5f);
  if (scalar & kBool) return GgufValue::Bool(true);
  if (scalar & kStr) return GgufValue::Str("x");
  if (rule->elements & kF32) return GgufValue::F32Array({0.5f});
  return GgufValue::U32Array({1});
}

TEST(KnowledgeRulesTest, EveryArchitectureRejectsATensorlessFileWithoutTheKeysEveryModelNeeds) {
  size_t models = 0;
  for (const ArchInfo& info : AllArchInfos()) {
    const std::string arch(info.name);
    const BuiltFile f = testing::GgufBuilder().AddKv("general.architecture", GgufValue::Str(arch)).Build();
    const uint64_t at = testing::KvAt(f, 0).string_bytes();
    const Report r = Check(f);
    if (info.kind != ArchKind::kModel) {
      // clip projectors and control vectors are read by other code; gptj is GG4016's
      EXPECT_TRUE(LacksRule(r, RuleId::kMissingHyperparameter)) << arch;
      continue;
    }
    ++models;
    EXPECT_FALSE(IsValid(r)) << arch;
    const std::set<std::string> missing = ReportedMissing(r, at);
    for (const std::string& key : {arch + ".context_length", arch + ".embedding_length", arch + ".block_count",
                                   std::string("tokenizer.ggml.model")}) {
      EXPECT_TRUE(missing.count(key)) << arch << ": " << key << " not reported\n" << testing::Describe(r);
    }
    // ... and what its own loader requires, nothing else
    std::set<std::string> required;
    for (const std::string& name : Required(arch)) required.insert(KeyOf(arch, name));
    EXPECT_EQ(missing, required) << arch;
  }
  EXPECT_GE(models, 145u);  // the table at 3f545becc builds 145
}

// One key at a time: the first part of a split model holds the metadata
// (llama-gguf-split --no-tensor-first-split) and no tensors, and the loader
// reads the model's keys from it.
TEST(KnowledgeRulesTest, EveryArchitectureNeedsEachCommonKeyInASplitModelsFirstPart) {
  for (const ArchInfo& info : AllArchInfos()) {
    if (info.kind != ArchKind::kModel) continue;
    const std::string arch(info.name);
    std::vector<std::string> keys;
    for (const std::string& name : Required(arch)) keys.push_back(KeyOf(arch, name));
    for (const std::string& dropped : {arch + ".context_length", arch + ".embedding_length", arch + ".block_count",
                                       std::string("tokenizer.ggml.model")}) {
      testing::GgufBuilder b;
      b.AddKv("general.architecture", GgufValue::Str(arch));
      for (const std::string& key : keys) {
        if (key == dropped) continue;
        b.AddKv(key, key == "tokenizer.ggml.model" ? GgufValue::Str("no_vocab") : ValueFor(key, info));
      }
      b.AddKv("split.no", GgufValue::U16(0)).AddKv("split.count", GgufValue::U16(2))
          .AddKv("split.tensors.count", GgufValue::I32(1));
      const BuiltFile f = b.Build();
      const Report r = Check(f);
      EXPECT_EQ(ReportedMissing(r, testing::KvAt(f, 0).string_bytes()), std::set<std::string>{dropped})
          << arch << " without " << dropped << "\n" << testing::Describe(r);
      EXPECT_FALSE(IsValid(r)) << arch << " without " << dropped;
    }
  }
}

// What llama.cpp loads without tensors or hyperparameters: a vocabulary,
// for every architecture (the oracle's vocab_only load takes each).
TEST(KnowledgeRulesTest, EveryArchitecturesVocabularyOnlyFileIsAccepted) {
  const std::vector<std::string> tokens = testing::TinyTokens();
  for (const ArchInfo& info : AllArchInfos()) {
    if (info.kind != ArchKind::kModel) continue;
    for (const bool empty : {false, true}) {
      testing::GgufBuilder b;
      b.AddKv("general.architecture", GgufValue::Str(std::string(info.name)));
      if (empty) {
        b.AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"));
      } else {
        b.AddKv("tokenizer.ggml.model", GgufValue::Str("llama"))
            .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
            .AddKv("tokenizer.ggml.scores", GgufValue::F32Array({0, 0, 0, 0, -1, -2, -3}))
            .AddKv("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 1}));
      }
      const Report r = Check(b.Build());
      EXPECT_TRUE(IsValid(r)) << info.name << (empty ? " (no_vocab)" : "") << "\n" << testing::Describe(r);
      EXPECT_TRUE(LacksRule(r, RuleId::kMissingHyperparameter)) << info.name;
    }
  }
}

TEST(KnowledgeRulesTest, FixedLengthArray) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str("qwen2vl"));
  for (auto& kv : m.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "qwen2vl." + kv.first.substr(6);
  }
  m.Set("qwen2vl.rope.dimension_sections", GgufValue::I32Array({16, 24, 24}));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kPerLayerArrayLength,
                         m.Kv(f, "qwen2vl.rope.dimension_sections").array_elements()));
  m.Set("qwen2vl.rope.dimension_sections", GgufValue::I32Array({16, 24, 24, 0}));  // as convert writes it
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));
  EXPECT_TRUE(IsValid(Check(ok, StrictPolicy())));
}

TEST(KnowledgeRulesTest, PerArchitectureKeyTypes) {
  // olmo2 reads sliding_window_pattern as an optional u32 period and skips an
  // array: the bool[] convert writes for it loads
  TinyModel olmo = MakeTinyModel();
  olmo.Set("general.architecture", GgufValue::Str("olmo2"));
  for (auto& kv : olmo.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "olmo2." + kv.first.substr(6);
  }
  olmo.Set("olmo2.attention.sliding_window", GgufValue::U32(4096))
      .Set("olmo2.attention.sliding_window_pattern", BoolArray({true}));
  EXPECT_TRUE(IsValid(Check(olmo.Build())));
  // a per-layer float array written as integers trips GGML_ASSERT in get_arr
  TinyModel afmoe = MakeTinyModel();
  afmoe.Set("llama.swiglu_clamp_exp", GgufValue::F32Array({7.0f}));
  BuiltFile floats = afmoe.Build();
  EXPECT_TRUE(IsValid(Check(floats)));
  afmoe.Set("llama.swiglu_clamp_exp", GgufValue::U32Array({7}));
  BuiltFile ints = afmoe.Build();
  EXPECT_TRUE(HasFinding(Check(ints), RuleId::kKnownKeyType, afmoe.Kv(ints, "llama.swiglu_clamp_exp").type));
  // decoder_start_token_id as the saver writes it (i32 -1): fine for llama,
  // which does not read it; t5's get_key<uint32_t> refuses it
  TinyModel saver = MakeTinyModel();
  saver.Set("llama.decoder_start_token_id", GgufValue::I32(-1));
  EXPECT_TRUE(LacksRule(Check(saver.Build()), RuleId::kKnownKeyType));
  TinyModel t5 = MakeTinyModel();
  t5.Set("general.architecture", GgufValue::Str("t5"));
  for (auto& kv : t5.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "t5." + kv.first.substr(6);
  }
  t5.Set("t5.attention.relative_buckets_count", GgufValue::U32(32)).Set("t5.decoder_start_token_id", GgufValue::I32(0));
  BuiltFile t5_file = t5.Build();
  EXPECT_TRUE(HasFinding(Check(t5_file), RuleId::kKnownKeyType, t5.Kv(t5_file, "t5.decoder_start_token_id").type));
  t5.Set("t5.decoder_start_token_id", GgufValue::U32(0));
  EXPECT_TRUE(IsValid(Check(t5.Build())));
}

TEST(KnowledgeRulesTest, KvCacheFollowsTheArchitecturesMemory) {
  Policy p = DefaultPolicy();
  p.limits.max_kv_cache_bytes = 1000;
  // llama: 64 ctx x 1 layer x (8 + 8) x 2 bytes = 2048 bytes > 1000
  TinyModel m = MakeTinyModel();
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f, p), RuleId::kKvCacheEstimate, m.Kv(f, "llama.context_length").payload));
  // mamba2 keeps a fixed state whatever the context: no estimate
  TinyModel mamba = MakeTinyModel();
  mamba.Set("general.architecture", GgufValue::Str("mamba2"));
  for (auto& kv : mamba.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "mamba2." + kv.first.substr(6);
  }
  EXPECT_TRUE(LacksRule(Check(mamba.Build(), p), RuleId::kKvCacheEstimate));
  // lfm2 (hybrid): only layers with K/V heads hold a cache; two layers, one of them a convolution
  TinyModel lfm = MakeTinyModel();
  lfm.Set("general.architecture", GgufValue::Str("lfm2"));
  for (auto& kv : lfm.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "lfm2." + kv.first.substr(6);
  }
  lfm.Set("lfm2.block_count", GgufValue::U32(2)).Set("lfm2.attention.head_count_kv", GgufValue::U32Array({0, 2}));
  p.limits.max_kv_cache_bytes = 2048;  // one attention layer: exactly 2048
  EXPECT_TRUE(LacksRule(Check(lfm.Build(), p), RuleId::kKvCacheEstimate));
  lfm.Set("lfm2.attention.head_count_kv", GgufValue::U32Array({2, 2}));  // both attention: 4096
  BuiltFile both = lfm.Build();
  EXPECT_TRUE(HasFinding(Check(both, p), RuleId::kKvCacheEstimate, lfm.Kv(both, "lfm2.context_length").payload));
}

// ---- realistic headers ------------------------------------------------------

// A small model of `arch` with the keys and types convert_hf_to_gguf.py (and
// its conversion/ modules) write: the common hyperparameters, the tiny
// vocabulary and tensors, and `extra` for the architecture.
TinyModel Converted(const std::string& arch, std::vector<std::pair<std::string, GgufValue>> extra,
                    bool rms_norm = true) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str(arch));
  for (auto& kv : m.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = arch + "." + kv.first.substr(6);
  }
  if (!rms_norm) {
    m.Erase(arch + ".attention.layer_norm_rms_epsilon");
    m.Set(arch + ".attention.layer_norm_epsilon", GgufValue::F32(1e-12f));
  }
  for (auto& [key, value] : extra) m.Set(arch + "." + key, std::move(value));
  return m;
}

struct Sample {
  std::string arch;
  std::vector<std::pair<std::string, GgufValue>> extra;
  bool rms_norm = true;
};

std::vector<Sample> Samples() {
  using V = GgufValue;
  return {
      {"qwen3", {{"attention.key_length", V::U32(4)}, {"attention.value_length", V::U32(4)}}},
      {"qwen3moe", {{"expert_count", V::U32(4)}, {"expert_used_count", V::U32(2)},
                    {"expert_feed_forward_length", V::U32(16)}}},
      {"qwen2", {}},
      {"llama", {{"rope.dimension_count", V::U32(4)}, {"vocab_size", V::U32(7)}}},
      {"phi3", {{"rope.dimension_count", V::U32(4)}, {"attention.sliding_window", V::U32(2048)}}},
      {"gemma3", {{"attention.sliding_window", V::U32(512)}, {"attention.key_length", V::U32(4)},
                  {"attention.value_length", V::U32(4)}, {"rope.scaling.type", V::Str("linear")},
                  {"rope.scaling.factor", V::F32(8.0f)}}},
      {"gemma3n", {{"attention.sliding_window", V::U32(512)}, {"attention.sliding_window_pattern", BoolArray({true})},
                   {"embedding_length_per_layer_input", V::U32(4)}, {"altup.active_idx", V::U32(0)},
                   {"altup.num_inputs", V::U32(4)}, {"activation_sparsity_scale", V::F32Array({1.6f})},
                   {"attention.shared_kv_layers", V::U32(0)}}},
      {"gemma4", {{"attention.sliding_window", V::U32(512)}, {"attention.sliding_window_pattern", BoolArray({true})},
                  {"embedding_length_per_layer_input", V::U32(4)}, {"attention.key_length_swa", V::U32(4)},
                  {"attention.value_length_swa", V::U32(4)}, {"attention.shared_kv_layers", V::U32(0)},
                  {"final_logit_softcapping", V::F32(30.0f)}}},
      {"glm4moe", {{"expert_count", V::U32(4)}, {"expert_used_count", V::U32(2)}, {"expert_shared_count", V::U32(1)},
                   {"expert_feed_forward_length", V::U32(16)}, {"leading_dense_block_count", V::U32(1)},
                   {"nextn_predict_layers", V::U32(0)}, {"expert_weights_scale", V::F32(2.5f)},
                   {"expert_weights_norm", V::Bool(true)}, {"expert_gating_func", V::U32(2)},
                   {"rope.dimension_count", V::U32(2)}}},
      {"gpt-oss", {{"expert_count", V::U32(4)}, {"expert_used_count", V::U32(2)},
                   {"expert_feed_forward_length", V::U32(16)}, {"attention.sliding_window", V::U32(128)},
                   {"attention.key_length", V::U32(4)}, {"attention.value_length", V::U32(4)}}},
      {"deepseek2", {{"leading_dense_block_count", V::U32(1)}, {"attention.q_lora_rank", V::U32(4)},
                     {"attention.kv_lora_rank", V::U32(4)}, {"attention.key_length_mla", V::U32(4)},
                     {"attention.value_length_mla", V::U32(4)}, {"expert_feed_forward_length", V::U32(16)},
                     {"expert_count", V::U32(4)}, {"expert_shared_count", V::U32(1)},
                     {"expert_used_count", V::U32(2)}, {"expert_weights_scale", V::F32(1.0f)},
                     {"expert_weights_norm", V::Bool(false)}, {"expert_gating_func", V::U32(1)},
                     {"rope.scaling.yarn_log_multiplier", V::F32(0.1f)}}},
      {"mamba2", {{"feed_forward_length", V::U32(0)}, {"attention.head_count", V::U32(0)},
                  {"ssm.conv_kernel", V::U32(4)}, {"ssm.inner_size", V::U32(16)}, {"ssm.state_size", V::U32(8)},
                  {"ssm.time_step_rank", V::U32(2)}, {"ssm.group_count", V::U32(1)}}},
      {"rwkv7", {{"attention.head_count", V::U32(0)}, {"wkv.head_size", V::U32(4)},
                 {"attention.decay_lora_rank", V::U32(4)}, {"attention.iclr_lora_rank", V::U32(4)},
                 {"attention.value_residual_mix_lora_rank", V::U32(4)}, {"attention.gate_lora_rank", V::U32(4)},
                 {"token_shift_count", V::U32(1)}},
       false},
      {"t5", {{"attention.relative_buckets_count", V::U32(32)}, {"attention.key_length", V::U32(4)},
              {"attention.value_length", V::U32(4)}, {"decoder_start_token_id", V::U32(0)}}},
      {"bert", {{"attention.causal", V::Bool(false)}, {"pooling_type", V::U32(2)}}, false},
      {"nomic-bert", {{"attention.causal", V::Bool(false)}, {"pooling_type", V::U32(1)}}, false},
      {"lfm2", {{"shortconv.l_cache", V::U32(3)}, {"attention.head_count_kv", V::U32Array({2})}}},
      {"qwen3vl", {{"rope.dimension_sections", V::I32Array({2, 1, 1, 0})}, {"n_deepstack_layers", V::U32(0)}}},
      {"ernie4_5-moe", {{"expert_count", V::U32(4)}, {"expert_used_count", V::U32(2)},
                        {"expert_feed_forward_length", V::U32(16)}, {"interleave_moe_layer_step", V::U32(1)},
                        {"leading_dense_block_count", V::U32(0)}}},
      {"hunyuan-moe", {{"expert_count", V::U32(4)}, {"expert_used_count", V::U32(2)},
                       {"expert_feed_forward_length", V::U32(16)},
                       {"expert_shared_feed_forward_length", V::U32(16)}}},
      {"command-r", {{"logit_scale", V::F32(0.0625f)}}, false},
      {"granitehybrid", {{"ssm.conv_kernel", V::U32(4)}, {"ssm.inner_size", V::U32(16)},
                         {"ssm.state_size", V::U32(8)}, {"ssm.time_step_rank", V::U32(2)},
                         {"ssm.group_count", V::U32(1)}, {"attention.head_count_kv", V::U32Array({2})},
                         {"embedding_scale", V::F32(12.0f)}, {"residual_scale", V::F32(0.22f)},
                         {"logit_scale", V::F32(8.0f)}, {"attention.scale", V::F32(0.0078125f)}}},
      {"qwen3next", {{"ssm.conv_kernel", V::U32(4)}, {"ssm.inner_size", V::U32(16)}, {"ssm.state_size", V::U32(8)},
                     {"ssm.time_step_rank", V::U32(2)}, {"ssm.group_count", V::U32(1)},
                     {"full_attention_interval", V::U32(4)}, {"expert_count", V::U32(4)},
                     {"expert_used_count", V::U32(2)}, {"expert_feed_forward_length", V::U32(16)},
                     {"expert_shared_feed_forward_length", V::U32(16)}}},
  };
}

TEST(KnowledgeRealisticTest, ConvertedHeadersPassUnderDefaultAndStrict) {
  for (const Sample& s : Samples()) {
    BuiltFile f = Converted(s.arch, s.extra, s.rms_norm).Build();
    Report def = Check(f);
    EXPECT_TRUE(IsValid(def)) << s.arch << "\n" << testing::Describe(def);
    EXPECT_TRUE(LacksRule(def, RuleId::kUnknownArchitecture)) << s.arch;
    // Architecture names with '-' (gpt-oss, command-r) included: their
    // "{arch}." keys are spelled as the name is.
    Report strict = Check(f, StrictPolicy());
    EXPECT_TRUE(IsValid(strict)) << s.arch << " (strict)\n" << testing::Describe(strict);
  }
}

TEST(KnowledgeRealisticTest, DroppingARequiredKeyIsRejected) {
  for (const Sample& s : Samples()) {
    const TinyModel base = Converted(s.arch, s.extra, s.rms_norm);
    std::set<std::string> req = Required(s.arch);
    ASSERT_FALSE(req.empty()) << s.arch;
    for (const std::string& name : req) {
      const std::string key = name[0] == '=' ? name.substr(1) : s.arch + "." + name;
      TinyModel m = base;
      m.Erase(key);
      BuiltFile f = m.Build();
      Report r = Check(f);
      EXPECT_TRUE(HasFinding(r, RuleId::kMissingHyperparameter, m.Kv(f, "general.architecture").string_bytes()))
          << s.arch << " without " << key;
      EXPECT_FALSE(IsValid(r)) << s.arch << " without " << key;
    }
  }
}

}  // namespace
}  // namespace ggufguard
