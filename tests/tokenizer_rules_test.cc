// 7xxx: the vocabulary arrays, special token ids, byte tokens and merges.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::StringArrayElement;
using ::ggufguard::testing::TinyModel;
using ::ggufguard::testing::TinyTokens;

using ::ggufguard::testing::Check;

TEST(TokenizerRulesTest, ScoresAndTypesMustMatchTheTokens) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.scores", GgufValue::F32Array({0, 0, 0, 0, 0, 0}));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kVocabLengthMismatch, m.Kv(f, "tokenizer.ggml.scores").array_elements()));

  TinyModel types = MakeTinyModel();
  types.Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 1, 1}));
  BuiltFile g = types.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kVocabLengthMismatch,
                         types.Kv(g, "tokenizer.ggml.token_type").array_elements()));
}

TEST(TokenizerRulesTest, TokenTypeOutsideOneToSix) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 0}));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kTokenTypeValue, m.Kv(f, "tokenizer.ggml.token_type").array_elements() + 4 * 6));
  EXPECT_TRUE(r.valid());  // a warning by default
  EXPECT_FALSE(Check(f, StrictPolicy()).valid());
}

TEST(TokenizerRulesTest, BigEndianTokenTypesAreReadInTheirOrder) {
  TinyModel m = MakeTinyModel();
  BuiltFile ok = m.Builder().set_big_endian(true).Build();
  Report r = Check(ok, StrictPolicy());
  EXPECT_TRUE(r.valid()) << testing::Describe(r);
  EXPECT_TRUE(LacksRule(r, RuleId::kTokenTypeValue));
  EXPECT_TRUE(LacksRule(r, RuleId::kByteTokenFormat));

  m.Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 7, 1}));
  BuiltFile bad = m.Builder().set_big_endian(true).Build();
  EXPECT_TRUE(HasFinding(Check(bad), RuleId::kTokenTypeValue,
                         m.Kv(bad, "tokenizer.ggml.token_type").array_elements() + 4 * 5));
}

TEST(TokenizerRulesTest, SpecialTokenIdPastTheVocabulary) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.eos_token_id", GgufValue::U32(7));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kSpecialTokenId, m.Kv(f, "tokenizer.ggml.eos_token_id").payload));

  m.Set("tokenizer.ggml.eos_token_id", GgufValue::U32(6));
  m.Set("tokenizer.ggml.seperator_token_id", GgufValue::U32(6)).Set("tokenizer.ggml.fim_pre_token_id",
                                                                    GgufValue::U32(0));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok)));

  // A negative id of the wrong type: the type rule and the range rule.
  m.Set("tokenizer.ggml.padding_token_id", GgufValue::I32(-1));
  BuiltFile neg = m.Build();
  Report r = Check(neg);
  EXPECT_TRUE(HasFinding(r, RuleId::kSpecialTokenId, m.Kv(neg, "tokenizer.ggml.padding_token_id").payload));
  EXPECT_TRUE(HasFinding(r, RuleId::kKnownKeyType, m.Kv(neg, "tokenizer.ggml.padding_token_id").type));

  // llama.cpp's saver writes an unset id as u32 0xFFFFFFFF, and reads it
  // back as unset: not flagged. The same -1 as an i32 is (above).
  m.Set("tokenizer.ggml.padding_token_id", GgufValue::U32(0xFFFFFFFFu));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kSpecialTokenId));

  // T5's decoder start token is an {arch} key.
  TinyModel t5 = MakeTinyModel();
  t5.Set("llama.decoder_start_token_id", GgufValue::U32(100));
  BuiltFile g = t5.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kSpecialTokenId, t5.Kv(g, "llama.decoder_start_token_id").payload));
  // The saver writes it as i32 -1 for every architecture (unset).
  t5.Set("llama.decoder_start_token_id", GgufValue::I32(-1));
  EXPECT_TRUE(LacksRule(Check(t5.Build()), RuleId::kSpecialTokenId));
}

// Every copy of an id key is checked, not only the one llama.cpp resolves.
TEST(TokenizerRulesTest, ShadowedSpecialTokenIdIsCheckedToo) {
  TinyModel m = MakeTinyModel();
  m.kvs.emplace_back(std::string("tokenizer.ggml.bos_token_id\0", 28), GgufValue::U32(1000));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kSpecialTokenId, testing::KvAt(f, m.kvs.size() - 1).payload));
}

TEST(TokenizerRulesTest, ByteTokensMustBeHexBytes) {
  for (const std::string& bad : {std::string("<0x4>"), std::string("<0xZZ>"), std::string("A"), std::string("")}) {
    std::vector<std::string> tokens = TinyTokens();
    tokens[3] = bad;
    TinyModel m = MakeTinyModel();
    m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
    BuiltFile f = m.Build();
    EXPECT_TRUE(HasFinding(Check(f), RuleId::kByteTokenFormat,
                           StringArrayElement(m.Kv(f, "tokenizer.ggml.tokens"), tokens, 3)))
        << bad;
  }
  // The last token, lower-case hex: the walk reaches it and accepts it.
  std::vector<std::string> tokens = TinyTokens();
  tokens[6] = "<0xff>";
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
  m.Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 6}));
  m.Set("tokenizer.ggml.merges", GgufValue::StrArray({}));
  BuiltFile ok = m.Build();
  EXPECT_TRUE(IsValid(Check(ok, StrictPolicy())));
  tokens[6] = "<0xfff>";
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
  BuiltFile last = m.Build();
  EXPECT_TRUE(HasFinding(Check(last), RuleId::kByteTokenFormat,
                         StringArrayElement(m.Kv(last, "tokenizer.ggml.tokens"), tokens, 6)));
}

// The token types are scanned in chunks of 1024 (tokenizer_rules.cc,
// ScanTypes): a bad BYTE token or type value is found wherever it sits
// against a chunk, also when an earlier chunk has a good BYTE token.
TEST(TokenizerRulesTest, LargeVocabularyIsCheckedInEveryChunk) {
  constexpr size_t kTokens = 2500;
  for (size_t at : {0, 1, 1023, 1024, 2047, 2048, 2499}) {
    std::vector<std::string> tokens;
    for (size_t i = 0; i < kTokens; ++i) tokens.push_back("t" + std::to_string(i));
    std::vector<int32_t> types(kTokens, 1);
    if (at != 0) {
      tokens[0] = "<0x41>";
      types[0] = 6;
    }
    tokens[at] = "<0xZZ>";
    types[at] = 6;
    TinyModel m = MakeTinyModel();
    m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
    m.Set("tokenizer.ggml.scores", GgufValue::F32Array(std::vector<float>(kTokens, 0)));
    m.Set("tokenizer.ggml.token_type", GgufValue::I32Array(types));
    BuiltFile f = m.Build();
    Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kByteTokenFormat, StringArrayElement(m.Kv(f, "tokenizer.ggml.tokens"), tokens, at)))
        << "BYTE token at " << at;
    EXPECT_EQ(testing::CountRule(r, RuleId::kByteTokenFormat), 1u) << at;
    EXPECT_TRUE(LacksRule(r, RuleId::kTokenTypeValue)) << at;

    types[at] = at % 2 == 0 ? 0 : 7;  // below and above 1..6
    m.Set("tokenizer.ggml.token_type", GgufValue::I32Array(types));
    BuiltFile g = m.Build();
    Report bad = Check(g);
    EXPECT_TRUE(HasFinding(bad, RuleId::kTokenTypeValue, m.Kv(g, "tokenizer.ggml.token_type").array_elements() + 4 * at))
        << "type " << types[at] << " at " << at;
    EXPECT_EQ(testing::CountRule(bad, RuleId::kTokenTypeValue), 1u) << at;
  }
}

TEST(TokenizerRulesTest, MergesArePairsOfTokensUnderStrictOrTheOption) {
  TinyModel m = MakeTinyModel();
  const std::vector<std::string> merges = {"a b", "a c", "ab", "<s> </s>"};
  m.Set("tokenizer.ggml.merges", GgufValue::StrArray(merges));
  BuiltFile f = m.Build();
  EXPECT_TRUE(LacksRule(Check(f), RuleId::kMergeNotTokens));  // off by default: it costs a hash set

  Report strict = Check(f, StrictPolicy());
  const testing::KvFields kv = m.Kv(f, "tokenizer.ggml.merges");
  EXPECT_TRUE(HasFinding(strict, RuleId::kMergeNotTokens, StringArrayElement(kv, merges, 1)));
  EXPECT_TRUE(HasFinding(strict, RuleId::kMergeNotTokens, StringArrayElement(kv, merges, 2)));
  EXPECT_EQ(testing::CountRule(strict, RuleId::kMergeNotTokens), 2u);
  EXPECT_FALSE(strict.valid());

  Policy opt = DefaultPolicy();
  opt.check_merges = true;
  Report r = Check(f, opt);
  EXPECT_EQ(testing::CountRule(r, RuleId::kMergeNotTokens), 2u);
  EXPECT_TRUE(r.valid());  // a warning under the default severities
}


Policy GgufProfile(Policy p) {
  p.profile = Profile::kGguf;
  return p;
}

// A byte-level BPE vocabulary, as convert_hf_to_gguf.py writes one.
TinyModel Bpe(std::string_view pre) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.model", GgufValue::Str("gpt2"))
      .Set("tokenizer.ggml.pre", GgufValue::Str(std::string(pre)))
      .Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 1, 1, 1, 1}))
      // roberta-bpe and the jina pre-tokenizers add a separator.
      .Set("tokenizer.ggml.seperator_token_id", GgufValue::U32(2));
  return m;
}

TEST(TokenizerRulesTest, MissingTokensOrBpeMergesAreRefused) {
  TinyModel m = Bpe("gpt-2");
  m.Erase("tokenizer.ggml.merges");
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kTokenizerArrayMissing, m.Kv(f, "tokenizer.ggml.model").string_bytes()));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(LacksRule(Check(f, GgufProfile(StrictPolicy())), RuleId::kTokenizerArrayMissing));
  // Kimi-K2 has no merges, and llama.cpp lets it; gemma4 gets no such pass.
  m.Set("tokenizer.ggml.pre", GgufValue::Str("kimi-k2"));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kTokenizerArrayMissing));
  m.Set("tokenizer.ggml.model", GgufValue::Str("gemma4"));
  EXPECT_TRUE(HasRule(Check(m.Build()), RuleId::kTokenizerArrayMissing));
  // SentencePiece needs no merges; every vocabulary needs its tokens, but
  // "none" builds none.
  TinyModel spm = MakeTinyModel();
  spm.Erase("tokenizer.ggml.merges");
  EXPECT_TRUE(LacksRule(Check(spm.Build()), RuleId::kTokenizerArrayMissing));
  spm.Erase("tokenizer.ggml.tokens").Erase("tokenizer.ggml.scores").Erase("tokenizer.ggml.token_type");
  EXPECT_TRUE(HasRule(Check(spm.Build()), RuleId::kTokenizerArrayMissing));
  spm.Set("tokenizer.ggml.model", GgufValue::Str("none"));
  EXPECT_TRUE(LacksRule(Check(spm.Build()), RuleId::kTokenizerArrayMissing));
}

TEST(TokenizerRulesTest, T5CharsmapMustHoldTheBlobItsSizeFieldGives) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.model", GgufValue::Str("t5"))
      .Set("tokenizer.ggml.precompiled_charsmap", GgufValue::U8Array({1, 0, 0, 0, 0}));  // 1 + 4 >= 5
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kCharsmapSize, m.Kv(f, "tokenizer.ggml.precompiled_charsmap").array_elements()))
      << testing::Describe(r);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(LacksRule(Check(f, GgufProfile(StrictPolicy())), RuleId::kCharsmapSize));
  m.Set("tokenizer.ggml.precompiled_charsmap", GgufValue::U8Array({0, 0, 0}));  // no room for the size field
  EXPECT_TRUE(HasRule(Check(m.Build()), RuleId::kCharsmapSize));
  m.Set("tokenizer.ggml.precompiled_charsmap", GgufValue::I8Array({0, 1, 0, 0, 0}));  // 256 bytes, as i8
  EXPECT_TRUE(HasRule(Check(m.Build()), RuleId::kCharsmapSize));
  // Neighbours: one byte more than the blob and its size field; another
  // tokenizer, which never reads the map.
  m.Set("tokenizer.ggml.precompiled_charsmap", GgufValue::U8Array({1, 0, 0, 0, 7, 0}));
  EXPECT_TRUE(LacksRule(Check(m.Build(), StrictPolicy()), RuleId::kCharsmapSize));
  m.Set("tokenizer.ggml.precompiled_charsmap", GgufValue::U8Array({1, 0, 0, 0, 0}))
      .Set("tokenizer.ggml.model", GgufValue::Str("llama"));
  EXPECT_TRUE(LacksRule(Check(m.Build(), StrictPolicy()), RuleId::kCharsmapSize));
}

// The tiny model as a BPE (gpt2) vocabulary with pre-tokenizer `pre`, its
// bos and eos ids removed: gpt2's default bos/eos (11) are no tokens of 7.
TinyModel BpeWithoutIds(std::string_view pre) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.model", GgufValue::Str("gpt2")).Erase("tokenizer.ggml.bos_token_id").Erase(
      "tokenizer.ggml.eos_token_id");
  if (!pre.empty()) m.Set("tokenizer.ggml.pre", GgufValue::Str(std::string(pre)));
  return m;
}

// GG7006: llama.cpp's vocabulary loader throws "unknown tokenizer" for any
// other name; the names it knows (sampled) and the pre-tokenizer's name
// where the model's belongs are the neighbours.
TEST(VocabularyLoadRulesTest, UnknownTokenizerModel) {
  for (const char* bad : {"deepseek_coder", "GPT2", "gpt2 ", "", "llama\n"}) {
    TinyModel m = MakeTinyModel();
    m.Set("tokenizer.ggml.model", GgufValue::Str(bad));
    BuiltFile f = m.Build();
    const Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kUnknownTokenizerModel, m.Kv(f, "tokenizer.ggml.model").string_bytes()))
        << bad << testing::Describe(r);
    EXPECT_FALSE(r.valid()) << bad;
    EXPECT_TRUE(LacksRule(Check(f, GgufProfile(DefaultPolicy())), RuleId::kUnknownTokenizerModel)) << bad;
  }
  for (const char* good : {"llama", "gpt2", "bert", "t5", "rwkv", "plamo2", "gemma4", "no_vocab", "none",
                           "hybriddna", "whitespace"}) {
    TinyModel m = MakeTinyModel();
    m.Set("tokenizer.ggml.model", GgufValue::Str(good));
    EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kUnknownTokenizerModel)) << good;
  }
}

// GG7007: a BPE vocabulary's unknown pre-tokenizer throws; models that take
// no pre-tokenizer from the file ignore the key.
TEST(VocabularyLoadRulesTest, UnknownPreTokenizer) {
  TinyModel m = BpeWithoutIds("stablelm");
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kUnknownPreTokenizer, m.Kv(f, "tokenizer.ggml.pre").string_bytes()))
      << testing::Describe(r);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(LacksRule(Check(f, GgufProfile(DefaultPolicy())), RuleId::kUnknownPreTokenizer));
  for (const char* pre : {"stablelm2", "default", "", "qwen2", "deepseek-coder", "a.x-4.0", "mellum2"}) {
    EXPECT_TRUE(LacksRule(Check(BpeWithoutIds(pre).Build()), RuleId::kUnknownPreTokenizer)) << pre;
  }
  EXPECT_TRUE(LacksRule(Check(BpeWithoutIds("").Erase("tokenizer.ggml.pre").Build()), RuleId::kUnknownPreTokenizer));
  for (const char* model : {"llama", "gemma4", "t5"}) {
    TinyModel other = BpeWithoutIds("stablelm");
    other.Set("tokenizer.ggml.model", GgufValue::Str(model));
    EXPECT_TRUE(LacksRule(Check(other.Build()), RuleId::kUnknownPreTokenizer)) << model;
  }
}

// GG7011: the RWKV tokenizer spins forever on "\n" when tokens start with a
// newline (unescaped) but none is one.
TinyModel Rwkv(std::vector<std::string> tokens, std::vector<int32_t> types) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.model", GgufValue::Str("rwkv"))
      .Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
      .Set("tokenizer.ggml.token_type", GgufValue::I32Array(types))
      .Erase("tokenizer.ggml.merges");
  return m;
}

TEST(VocabularyLoadRulesTest, RwkvVocabularyWithoutANewlineTokenHangs) {
  const std::vector<int32_t> normal = {2, 3, 3, 1, 1, 1, 1};
  for (const char* first : {"\\n\\n", "\\n ", "\\x0a\\x0a", "\n\n", "\\nabc"}) {
    TinyModel m = Rwkv({"<unk>", "<s>", "</s>", first, "a", "b", "c"}, normal);
    BuiltFile f = m.Build();
    const Report r = Check(f);
    // Token 3's bytes: past three length fields and "<unk>", "<s>", "</s>".
    const uint64_t token3 = m.Kv(f, "tokenizer.ggml.tokens").array_elements() + 3 * 8 + 12 + 8;
    EXPECT_TRUE(HasFinding(r, RuleId::kRwkvNewlineHang, token3)) << first << testing::Describe(r);
    EXPECT_FALSE(r.valid()) << first;
    EXPECT_TRUE(LacksRule(Check(f, GgufProfile(DefaultPolicy())), RuleId::kRwkvNewlineHang)) << first;
  }
  // The neighbours: a newline token (escaped or raw, in any place), no
  // token starting with one, another vocabulary.
  for (const std::vector<std::string>& tokens :
       std::vector<std::vector<std::string>>{{"<unk>", "<s>", "</s>", "\\n\\n", "a", "b", "\\n"},
                                             {"<unk>", "<s>", "</s>", "\\n\\n", "\\x0a", "b", "c"},
                                             {"<unk>", "<s>", "</s>", "\n", "\\n\\n", "b", "c"},
                                             {"<unk>", "<s>", "</s>", "a\\n", "\\\\n", "\\t\\n", "c"}}) {
    EXPECT_TRUE(LacksRule(Check(Rwkv(tokens, normal).Build()), RuleId::kRwkvNewlineHang)) << tokens[3];
  }
  TinyModel llama = Rwkv({"<unk>", "<s>", "</s>", "\\n\\n", "a", "b", "c"}, normal);
  llama.Set("tokenizer.ggml.model", GgufValue::Str("llama"));
  EXPECT_TRUE(LacksRule(Check(llama.Build()), RuleId::kRwkvNewlineHang));
}

// GG7008: a token added to every prompt whose id resolves to none throws in
// check_add_special_token.
TEST(VocabularyLoadRulesTest, AddedSpecialTokenWithoutAnId) {
  // llama-bpe adds bos; gpt2's default bos 11 is no token of 7.
  TinyModel m = BpeWithoutIds("llama-bpe");
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kAddSpecialTokenUnset, m.Kv(f, "tokenizer.ggml.model").string_bytes()))
      << testing::Describe(r);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(LacksRule(Check(f, GgufProfile(DefaultPolicy())), RuleId::kAddSpecialTokenUnset));
  // The neighbours: a bos id inside the vocabulary, or bos not added.
  EXPECT_TRUE(LacksRule(Check(BpeWithoutIds("llama-bpe").Set("tokenizer.ggml.bos_token_id", GgufValue::U32(3)).Build()),
                        RuleId::kAddSpecialTokenUnset));
  TinyModel no_add = BpeWithoutIds("llama-bpe");
  no_add.Set("tokenizer.ggml.add_bos_token", GgufValue::Bool(false));
  EXPECT_TRUE(LacksRule(Check(no_add.Build()), RuleId::kAddSpecialTokenUnset));
  EXPECT_TRUE(LacksRule(Check(BpeWithoutIds("gpt-2").Build()), RuleId::kAddSpecialTokenUnset));  // adds nothing
  // An id outside the vocabulary is ignored by the loader: still none.
  TinyModel outside = BpeWithoutIds("llama-bpe");
  outside.Set("tokenizer.ggml.bos_token_id", GgufValue::U32(99));
  BuiltFile g = outside.Build();
  EXPECT_TRUE(HasFinding(Check(g), RuleId::kAddSpecialTokenUnset,
                         outside.Kv(g, "tokenizer.ggml.bos_token_id").payload));
  // The file's add flag: eos added, no eos id.
  TinyModel eos = BpeWithoutIds("gpt-2");
  eos.Set("tokenizer.ggml.add_eos_token", GgufValue::Bool(true));
  BuiltFile h = eos.Build();
  EXPECT_TRUE(HasFinding(Check(h), RuleId::kAddSpecialTokenUnset, eos.Kv(h, "tokenizer.ggml.add_eos_token").payload));
  // glm4 has no default bos; Gemma 4 always adds bos.
  TinyModel glm = BpeWithoutIds("glm4");
  glm.Set("tokenizer.ggml.add_bos_token", GgufValue::Bool(true)).Set("tokenizer.ggml.bos_token_id",
                                                                      GgufValue::U32(99));
  EXPECT_FALSE(LacksRule(Check(glm.Build()), RuleId::kAddSpecialTokenUnset));
  TinyModel gemma = BpeWithoutIds("");
  gemma.Set("tokenizer.ggml.model", GgufValue::Str("gemma4")).Set("tokenizer.ggml.add_bos_token",
                                                                   GgufValue::Bool(false));
  EXPECT_FALSE(LacksRule(Check(gemma.Build()), RuleId::kAddSpecialTokenUnset));
  gemma.Set("tokenizer.ggml.bos_token_id", GgufValue::U32(1));
  EXPECT_TRUE(LacksRule(Check(gemma.Build()), RuleId::kAddSpecialTokenUnset));
  // SentencePiece adds bos, default 1: a token of 7.
  TinyModel spm = MakeTinyModel();
  spm.Erase("tokenizer.ggml.bos_token_id");
  EXPECT_TRUE(LacksRule(Check(spm.Build()), RuleId::kAddSpecialTokenUnset));
}

}  // namespace
}  // namespace ggufguard
