// The parser: magics and versions, v1 and big-endian layouts parsed
// completely, the header view's offsets, the incomplete-prefix protocol the
// sources rely on, and declared sizes that must fail without allocating.
#include "ggufguard/parse/parser.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ggufguard/base/text.h"
#include "ggufguard/format/header.h"
#include "ggufguard/format/layout.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::Describe;
using testing::FindingsAre;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasFinding;
using testing::IsValid;
using testing::KvAt;
using testing::RuleAt;
using testing::TensorAt;
using testing::Validate;
using Vt = testing::ValueType;
using testing::kF16;
using testing::kF32;
using testing::kKvCountOffset;
using testing::kQ4_0;
using testing::kTensorCountOffset;
using testing::kVersionOffset;

// --- Magic ---

TEST(ParserMagicTest, LegacyMagicsAreNamed) {
  // GGML, GGMF, GGJT as written by little-endian ggml (the u32 read back
  // reversed), their byte-swapped forms, and the pre-release 'FUGG'.
  for (const char* magic : {"lmgg", "fmgg", "tjgg", "ggml", "ggmf", "ggjt", "FUGG"}) {
    BuiltFile f = GgufBuilder().set_magic(magic).AddKv("a.b", GgufValue::U8(1)).Build();
    const Report r = Validate(f);
    EXPECT_TRUE(FindingsAre(r, {{RuleId::kLegacyMagic, 0}})) << magic;
    EXPECT_FALSE(r.header_parsed);
    EXPECT_FALSE(r.valid());
  }
}

TEST(ParserMagicTest, AnythingElseIsBadMagic) {
  for (const std::string& magic :
       std::vector<std::string>{"GGUX", "gguf", std::string("\0\0\0\0", 4), "PK\x03\x04", "FUGH"}) {
    BuiltFile f = GgufBuilder().set_magic(magic).Build();
    EXPECT_TRUE(FindingsAre(Validate(f), {{RuleId::kBadMagic, 0}})) << EscapeForDisplay(magic);
  }
}

TEST(ParserMagicTest, ShortFilesAreTruncatedAtTheFieldTheyCut) {
  BuiltFile f = GgufBuilder().Build();  // 24 bytes: magic, version, two counts
  for (uint64_t size = 0; size < f.file_size; ++size) {
    std::vector<uint8_t> cut(f.bytes.begin(), f.bytes.begin() + size);
    const uint64_t field = size < 4 ? 0 : size < 8 ? kVersionOffset : size < 16 ? kTensorCountOffset : kKvCountOffset;
    const Report r = ValidateBytes(cut, testing::StructuralPolicy());
    EXPECT_TRUE(FindingsAre(r, {{RuleId::kTruncated, field}})) << "size " << size;
    EXPECT_FALSE(r.valid());
  }
  EXPECT_TRUE(IsValid(Validate(f)));
}

// --- Versions ---

TEST(ParserVersionTest, OnlyOneTwoThreeAreKnown) {
  for (uint32_t version : {0u, 4u, 5u, 0x00030003u, 0x00010001u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    BuiltFile f = GgufBuilder().set_version(version).AddKv("a.b", GgufValue::U8(1)).Build();
    const Report r = Validate(f);
    EXPECT_TRUE(FindingsAre(r, {{RuleId::kUnsupportedVersion, kVersionOffset}})) << std::hex << version;
    EXPECT_FALSE(r.header_parsed);
  }
  for (uint32_t version : {2u, 3u}) {
    BuiltFile f = GgufBuilder().set_version(version).AddKv("a.b", GgufValue::U8(1)).AddTensor("t", {2}, kF32).Build();
    const Report r = Validate(f);
    EXPECT_TRUE(IsValid(r)) << version;
    EXPECT_TRUE(r.findings.empty()) << Describe(r);
    EXPECT_EQ(r.header.version, version);
  }
}

TEST(ParserVersionTest, BigEndianVersion4IsStillUnsupported) {
  BuiltFile f = GgufBuilder().set_big_endian(true).set_version(4).Build();
  EXPECT_EQ(f.bytes[7], 4);
  EXPECT_TRUE(
      FindingsAre(Validate(f), {{RuleId::kUnsupportedVersion, kVersionOffset}, {RuleId::kBigEndian, kVersionOffset}}));
}

// A v1 file is rejected by default, but only after it has been parsed and
// checked completely: every KV and tensor info is in the view, at the
// writer's offsets, and the rules ran over it.
TEST(ParserVersionTest, V1IsParsedCompletely) {
  const std::vector<std::string> tokens = {"<s>", "</s>", "hello"};
  GgufBuilder b;
  b.set_version(1)
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
      .AddKv("llama.block_count", GgufValue::U32(2))
      .AddKv("llama.rope.freq_base", GgufValue::F32(10000.0f))
      .AddKv("tokenizer.ggml.add_bos_token", GgufValue::Bool(true))
      .AddTensor("token_embd.weight", {4, 3}, kF16)
      .AddTensor("output.weight", {32, 2}, kQ4_0);
  BuiltFile f = b.Build();
  const Report r = Validate(f);
  EXPECT_TRUE(FindingsAre(r, {{RuleId::kVersion1, kVersionOffset}}));
  EXPECT_EQ(r.findings[0].severity, Severity::kError);
  EXPECT_FALSE(r.valid());
  ASSERT_TRUE(r.header_parsed);
  const GgufHeader& h = r.header;
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.kv_count, 5u);
  EXPECT_EQ(h.tensor_count, 2u);
  ASSERT_EQ(h.kvs.size(), 5u);
  ASSERT_EQ(h.tensors.size(), 2u);
  for (size_t i = 0; i < h.kvs.size(); ++i) {
    const testing::KvFields kv = KvAt(f, i, /*length_size=*/4);
    EXPECT_EQ(h.kvs[i].offset(), kv.start) << i;
    EXPECT_EQ(h.kvs[i].key_offset(), kv.key) << i;
    EXPECT_EQ(h.kvs[i].type_offset(), kv.type) << i;
  }
  EXPECT_EQ(h.kvs[0].value().AsString(), "llama");
  EXPECT_EQ(h.kvs[0].value().offset, KvAt(f, 0, 4).string_bytes());
  EXPECT_EQ(h.kvs[1].value().array.count, 3u);
  EXPECT_EQ(h.kvs[1].value().array.length_size, 4u);
  EXPECT_EQ(h.kvs[1].value().array.elements_offset, KvAt(f, 1, 4).array_elements());
  EXPECT_EQ(h.kvs[2].value().AsUnsigned(), 2u);
  EXPECT_EQ(h.kvs[3].value().AsDouble(), 10000.0);
  EXPECT_EQ(h.kvs[4].value().AsUnsigned(), 1u);
  EXPECT_EQ(h.tensors[0].name, "token_embd.weight");
  EXPECT_EQ(h.tensors[0].n_dims, 2u);
  EXPECT_EQ(h.tensors[0].dims()[0], 4u);
  EXPECT_EQ(h.tensors[0].dims()[1], 3u);
  EXPECT_EQ(h.tensors[0].ggml_type, kF16);
  EXPECT_EQ(h.tensors[1].ggml_type, kQ4_0);
  for (size_t i = 0; i < 2; ++i) {
    const testing::TensorFields t = TensorAt(f, i, h.tensors[i].name.size(), 4);
    EXPECT_EQ(h.tensors[i].offset, t.start);
    EXPECT_EQ(h.tensors[i].name_offset(), t.name);
    EXPECT_EQ(h.tensors[i].type_offset(), t.type);
    EXPECT_EQ(h.tensors[i].relative_offset_field(), t.offset_field);
    EXPECT_EQ(h.tensors[i].byte_size, f.tensor_sizes[i]);
    EXPECT_EQ(h.tensors[i].absolute_offset, f.tensor_data_offsets[i]);
  }
  EXPECT_EQ(h.infos_end, f.header_end);
  EXPECT_EQ(h.data_offset, f.data_offset);
  EXPECT_TRUE(IsValid(Validate(f, testing::V1AllowedPolicy())));

  // The rules run over v1 files: a layout problem is still found.
  BuiltFile trailing = b.set_trailing_bytes({1, 2, 3}).Build();
  const Report rt = Validate(trailing, testing::V1AllowedPolicy());
  EXPECT_TRUE(HasFinding(rt, RuleId::kTrailingBytes, f.file_size));
}

// --- Big-endian ---

// The same content written in both byte orders; `broken` adds problems of
// every family at the same places in both.
GgufBuilder Twin(bool big_endian, bool broken) {
  GgufBuilder b;
  b.set_big_endian(big_endian)
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddAlignmentKv(64)
      .AddKv("llama.block_count", GgufValue::U32(7))
      .AddKv("llama.rope.freq_base", GgufValue::F32(broken ? std::nanf("") : 10000.0f))
      .AddKv("test.i16", GgufValue::I16(-3))
      .AddKv("test.u64", GgufValue::U64(0x0102030405060708))
      .AddKv("test.f64", GgufValue::F64(-2.5))
      .AddKv("test.bool", broken ? GgufValue::BoolByte(7) : GgufValue::Bool(false))
      .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray({"<unk>", broken ? "b\xff" : "b", "c", ""}))
      .AddKv("tokenizer.ggml.scores", GgufValue::F32Array({0.0f, -1.0f, broken ? INFINITY : -2.0f, -3.0f}))
      .AddKv("tokenizer.ggml.token_type", GgufValue::I32Array({2, 1, 1, 1}))
      .AddKv("test.f64s", GgufValue::F64Array({1.0, broken ? -INFINITY : 2.0}))
      .AddKv("test.nested", GgufValue::Array(Vt::kArray, {GgufValue::U16Array({1, 2}), GgufValue::StrArray({"x"})}))
      .AddTensor("token_embd.weight", {4, 4}, kF32)
      .AddTensor("blk.0.attn_q.weight", {64, 2}, kQ4_0)
      .AddTensor("output_norm.weight", {4}, kF16, {.offset = broken ? uint64_t{1} : std::optional<uint64_t>()});
  if (broken) b.set_trailing_bytes({0xAB});
  return b;
}

TEST(ParserBigEndianTest, ParsesLikeItsLittleEndianTwin) {
  for (bool broken : {false, true}) {
    BuiltFile le = Twin(false, broken).Build();
    BuiltFile be = Twin(true, broken).Build();
    ASSERT_EQ(le.file_size, be.file_size);
    ASSERT_NE(le.bytes, be.bytes);
    const Report rl = Validate(le);
    const Report rb = Validate(be);
    SCOPED_TRACE(broken ? "broken" : "clean");
    EXPECT_EQ(rb.header.byte_order, ByteOrder::kBig);
    EXPECT_EQ(rl.header.byte_order, ByteOrder::kLittle);
    EXPECT_TRUE(HasFinding(rb, RuleId::kBigEndian, kVersionOffset));
    EXPECT_EQ(testing::CountRule(rb, RuleId::kBigEndian), 1u);
    EXPECT_EQ(testing::RulesAtExcept(rb, RuleId::kBigEndian), testing::RulesAt(rl));
    EXPECT_EQ(rb.valid(), rl.valid());
    EXPECT_EQ(rl.valid(), !broken) << Describe(rl);
    if (broken) {
      // Several families fired, so the comparison above means something.
      EXPECT_GE(rl.findings.size(), 5u) << Describe(rl);
    }

    const GgufHeader& l = rl.header;
    const GgufHeader& b = rb.header;
    ASSERT_TRUE(rb.header_parsed);
    EXPECT_EQ(b.version, 3u);
    EXPECT_EQ(b.kv_count, l.kv_count);
    EXPECT_EQ(b.tensor_count, l.tensor_count);
    EXPECT_EQ(b.alignment, 64u);
    EXPECT_EQ(b.infos_end, l.infos_end);
    EXPECT_EQ(b.data_offset, l.data_offset);
    ASSERT_EQ(b.kvs.size(), l.kvs.size());
    for (size_t i = 0; i < l.kvs.size(); ++i) {
      SCOPED_TRACE(std::string(l.kvs[i].key()));
      EXPECT_EQ(b.kvs[i].key(), l.kvs[i].key());
      EXPECT_EQ(b.kvs[i].offset(), l.kvs[i].offset());
      EXPECT_EQ(b.kvs[i].type(), l.kvs[i].type());
      EXPECT_EQ(b.kvs[i].value().offset, l.kvs[i].value().offset);
      EXPECT_EQ(b.kvs[i].value().AsUnsigned(), l.kvs[i].value().AsUnsigned());
      EXPECT_EQ(b.kvs[i].value().AsSigned(), l.kvs[i].value().AsSigned());
      if (l.kvs[i].type() == ValueType::kString) {
        EXPECT_EQ(b.kvs[i].value().AsString(), l.kvs[i].value().AsString());
      }
      if (auto d = l.kvs[i].value().AsDouble(); d.has_value() && !std::isnan(*d)) {
        EXPECT_EQ(b.kvs[i].value().AsDouble(), d);
      }
      if (l.kvs[i].type() == ValueType::kArray) {
        EXPECT_EQ(b.kvs[i].value().array.count, l.kvs[i].value().array.count);
        EXPECT_EQ(b.kvs[i].value().array.element_type, l.kvs[i].value().array.element_type);
        EXPECT_EQ(b.kvs[i].value().array.elements_offset, l.kvs[i].value().array.elements_offset);
        EXPECT_EQ(b.kvs[i].value().array.element_bytes.size(), l.kvs[i].value().array.element_bytes.size());
      }
    }
    EXPECT_EQ(b.kvs[2].value().AsUnsigned(), 7u);
    EXPECT_EQ(b.kvs[4].value().AsSigned(), -3);
    EXPECT_EQ(b.kvs[5].value().AsUnsigned(), 0x0102030405060708u);
    EXPECT_EQ(b.kvs[6].value().AsDouble(), -2.5);
    EXPECT_EQ(b.kvs[10].value().array.ScalarAt<uint32_t>(0), 2u);
    ASSERT_EQ(b.tensors.size(), l.tensors.size());
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      SCOPED_TRACE(std::string(l.tensors[i].name));
      EXPECT_EQ(b.tensors[i].name, l.tensors[i].name);
      EXPECT_EQ(b.tensors[i].n_dims, l.tensors[i].n_dims);
      EXPECT_EQ(b.tensors[i].dims(), l.tensors[i].dims());
      EXPECT_EQ(b.tensors[i].ggml_type, l.tensors[i].ggml_type);
      EXPECT_EQ(b.tensors[i].relative_offset(), l.tensors[i].relative_offset());
      EXPECT_EQ(b.tensors[i].byte_size, l.tensors[i].byte_size);
      EXPECT_EQ(b.tensors[i].absolute_offset, l.tensors[i].absolute_offset);
    }
  }
}

// --- The view's offsets ---

TEST(ParserHeaderViewTest, OffsetsAreTheWritersOffsets) {
  BuiltFile f = GgufBuilder()
                    .AddKv("general.architecture", GgufValue::Str("llama"))
                    .AddKv("test.array", GgufValue::U32Array({1, 2, 3}))
                    .AddKv("test.f64", GgufValue::F64(0.5))
                    .AddTensor("a", {3, 2}, kF32)
                    .AddTensor("bb", {64}, kQ4_0)
                    .Build();
  const Report r = Validate(f);
  ASSERT_TRUE(IsValid(r));
  const GgufHeader& h = r.header;
  ASSERT_EQ(h.kvs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.kvs[i].offset(), KvAt(f, i).start);
    EXPECT_EQ(h.kvs[i].key_offset(), KvAt(f, i).key);
    EXPECT_EQ(h.kvs[i].type_offset(), KvAt(f, i).type);
  }
  EXPECT_EQ(h.kvs[0].value().offset, KvAt(f, 0).string_bytes());
  EXPECT_EQ(h.kvs[1].value().offset, KvAt(f, 1).array_elements());
  EXPECT_EQ(h.kvs[1].value().array.element_bytes.size(), 12u);
  EXPECT_EQ(h.kvs[2].value().offset, KvAt(f, 2).payload);
  EXPECT_EQ(h.Find("test.f64"), &h.kvs[2]);
  EXPECT_EQ(h.Find("test.f6"), nullptr);
  ASSERT_EQ(h.tensors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const testing::TensorFields t = TensorAt(f, i, i + 1);
    EXPECT_EQ(h.tensors[i].offset, t.start);
    EXPECT_EQ(h.tensors[i].name_offset(), t.name);
    EXPECT_EQ(h.tensors[i].type_offset(), t.type);
    EXPECT_EQ(h.tensors[i].relative_offset_field(), t.offset_field);
    EXPECT_EQ(h.tensors[i].relative_offset(), f.tensor_relative_offsets[i]);
  }
  EXPECT_EQ(h.infos_end, f.header_end);
  EXPECT_TRUE(h.data_offset_known);
  EXPECT_EQ(h.data_offset, f.data_offset);
}

// The layout (format/layout.h) comes from the parser itself, before any rule
// runs: a header parsed without a file behind it already knows where each
// tensor's bytes lie, and marks unknown what it cannot compute.
TEST(ParserHeaderViewTest, TheParserDerivesTheLayout) {
  BuiltFile f = GgufBuilder()
                    .AddAlignmentKv(64)
                    .AddTensor("a", {3, 2}, kF32)
                    .AddTensor("bb", {64}, kQ4_0)
                    .AddTensor("odd", {33}, kQ4_0, {.byte_size = 18})        // a row of 33: not whole blocks
                    .AddTensor("unknown", {32}, kFirstUnknownGgmlType, {.byte_size = 32})
                    .Build();
  Policy policy;
  FindingSink sink(policy);
  ParseResult p = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/true}, sink);
  ASSERT_EQ(p.status, ParseStatus::kOk);
  const GgufHeader& h = p.header;
  EXPECT_EQ(h.alignment, 64u);
  ASSERT_TRUE(h.data_offset_known);
  EXPECT_EQ(h.data_offset, f.data_offset);
  EXPECT_EQ(h.data_offset % 64, 0u);
  ASSERT_EQ(h.tensors.size(), 4u);
  const uint64_t sizes[] = {3 * 2 * 4, 2 * 18};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(h.tensors[i].size_known) << i;
    EXPECT_EQ(h.tensors[i].byte_size, sizes[i]) << i;
    EXPECT_TRUE(h.tensors[i].absolute_known) << i;
    EXPECT_EQ(h.tensors[i].absolute_offset, f.tensor_data_offsets[i]) << i;
  }
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_FALSE(h.tensors[i].size_known) << i;
    EXPECT_TRUE(h.tensors[i].absolute_known) << i;  // the offset needs no size
  }
  EXPECT_EQ(ReadTensorSize(h.tensors[2]).problem, TensorSizeReading::Problem::kRowNotBlockMultiple);
  EXPECT_EQ(ReadTensorSize(h.tensors[3]).problem, TensorSizeReading::Problem::kUnknownTypeId);

  // An alignment a loader refuses leaves every data offset unknown.
  for (const GgufValue& bad : {GgufValue::U32(0), GgufValue::U32(48), GgufValue::U64(32)}) {
    BuiltFile g = GgufBuilder().AddKv("general.alignment", bad).AddTensor("a", {4}, kF32).Build();
    FindingSink s(policy);
    ParseResult q = ParseHeader(g.bytes, ParseOptions{policy.limits, /*complete=*/true}, s);
    ASSERT_EQ(q.status, ParseStatus::kOk);
    EXPECT_FALSE(ReadAlignment(q.header).usable());
    EXPECT_FALSE(q.header.data_offset_known);
    EXPECT_FALSE(q.header.tensors[0].absolute_known);
    EXPECT_TRUE(q.header.tensors[0].size_known);
  }
}

// The order the tensors' data lies in is part of the layout, sorted once for
// every reader (the layout rules, the stream's zero map, --deep): by start,
// ties in file order, over the tensors whose extent is known. Nothing is
// stored when that is file order. The data section's end is known only when
// every extent is.
// The token array's screen (StringArrayScreen) notes whether some token
// holds a 0 byte, which GG9054 must then read as llama.cpp's C string: from
// one count over the array while every token is shorter than 256 bytes
// (each length field's 0 bytes are then known), token by token past that.
// Exact either way, for either length width and byte order, wherever the
// 0 byte falls and whatever the length fields hold.
TEST(ParserTokenScreenTest, NotesAZeroByteInAnyTokenAndNoneInALengthField) {
  struct Case {
    std::vector<std::string> tokens;
    bool zero;
  };
  const std::string long_plain(300, 'x');
  std::string long_zero = long_plain;
  long_zero[299] = '\0';
  std::string length_256(256, 'y');  // a length field of 0x0100: one 0 byte fewer than a short one's
  const std::vector<Case> cases = {
      {{"a", "bc", "def"}, false},
      {{"a", "", "def"}, false},  // an empty token: its length field is all 0 bytes
      {{"a", std::string("b\0c", 3), "def"}, true},
      {{std::string("\0", 1)}, true},
      {{"a", "bc", std::string("de\0", 3)}, true},  // the array's last byte
      {{long_plain, "a", ""}, false},
      {{long_plain, "a", std::string("b\0", 2)}, true},
      {{"a", long_zero}, true},
      {{length_256, "", "z"}, false},
      {{std::string(255, 'w'), "", "z"}, false},
  };
  const Policy policy = DefaultPolicy();
  for (const uint32_t version : {1u, 3u}) {
    for (const bool big : {false, true}) {
      for (size_t i = 0; i < cases.size(); ++i) {
        GgufBuilder b;
        b.set_version(version).set_big_endian(big).AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(cases[i].tokens));
        const BuiltFile f = b.Build();
        StringArrayScreen screen(kTokenArrayKey);
        FindingSink sink(policy);
        const ParseResult p = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/true, &screen}, sink);
        ASSERT_EQ(p.status, ParseStatus::kOk) << version << big << i;
        ASSERT_TRUE(screen.kv_index().has_value()) << version << big << i;
        EXPECT_EQ(screen.count(), cases[i].tokens.size());
        EXPECT_EQ(screen.any_zero_byte(), cases[i].zero) << "version " << version << (big ? " big" : " little") << " case " << i;
      }
    }
  }
}

TEST(ParserHeaderViewTest, TheLayoutOrdersTheDataOnce) {
  auto parse = [](const BuiltFile& f) {
    Policy policy;
    FindingSink sink(policy);
    ParseResult p = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/true}, sink);
    EXPECT_EQ(p.status, ParseStatus::kOk);
    return p;
  };
  auto order = [](const GgufHeader& h) {
    std::vector<uint32_t> out;
    ForEachExtentByStart(h, [&](uint32_t i) {
      out.push_back(i);
      return true;
    });
    return out;
  };
  // In order: file order, nothing stored; the end is the last tensor's,
  // aligned up.
  BuiltFile in_order = GgufBuilder().AddTensor("a", {3}, kF32).AddTensor("b", {5}, kF32).Build();
  ParseResult p = parse(in_order);
  EXPECT_TRUE(p.header.extents_in_file_order);
  EXPECT_TRUE(p.header.extents_by_start.empty());
  EXPECT_EQ(order(p.header), (std::vector<uint32_t>{0, 1}));
  ASSERT_TRUE(p.header.data_end_known);
  EXPECT_EQ(p.header.data_end, p.header.data_offset + 32 + 32);  // 12 bytes padded to 32, then 20 to 32
  EXPECT_EQ(DataSectionEnd(p.header), std::optional<uint64_t>(p.header.data_end));

  // Out of order, with a tie and a tensor of unknown size: sorted by start,
  // the tie in file order, the unknown one left out, and no end.
  BuiltFile shuffled = GgufBuilder()
                           .AddTensor("c", {8}, kF32, {.offset = 64})
                           .AddTensor("a", {8}, kF32, {.offset = 0})
                           .AddTensor("odd", {33}, kQ4_0, {.offset = 32, .byte_size = 18})
                           .AddTensor("b", {8}, kF32, {.offset = 32})
                           .AddTensor("b2", {8}, kF32, {.offset = 32})
                           .Build();
  p = parse(shuffled);
  EXPECT_FALSE(p.header.extents_in_file_order);
  EXPECT_EQ(order(p.header), (std::vector<uint32_t>{1, 3, 4, 0}));
  EXPECT_FALSE(p.header.data_end_known);
  EXPECT_EQ(DataSectionEnd(p.header), std::nullopt);
  // Stopping early stops the walk.
  size_t visited = 0;
  ForEachExtentByStart(p.header, [&](uint32_t) { return ++visited < 2; });
  EXPECT_EQ(visited, 2u);
}

// --- The incomplete-prefix protocol ---

// Parsing any prefix of a header as a prefix (complete = false) asks for
// more bytes, reports nothing, and never asks for more than the header
// needs; the whole header parses.
TEST(ParserIncompleteTest, EveryPrefixAsksForMoreWithinTheHeader) {
  BuiltFile f =
      GgufBuilder()
          .AddKv("general.architecture", GgufValue::Str("llama"))
          .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray({"a", "bb", "", "ccc"}))
          .AddKv("test.nested", GgufValue::Array(Vt::kArray, {GgufValue::U8Array({1}), GgufValue::StrArray({"z"})}))
          .AddKv("test.u16", GgufValue::U16(5))
          .AddTensor("t", {2, 2}, kF32)
          .AddTensor("u", {3}, kF32)
          .Build();
  const Policy policy = testing::StructuralPolicy();
  const ParseOptions options{policy.limits, /*complete=*/false};
  for (uint64_t cut = 0; cut < f.header_end; ++cut) {
    FindingSink sink(policy);
    ParseResult p = ParseHeader(absl::MakeConstSpan(f.bytes).first(cut), options, sink);
    ASSERT_EQ(p.status, ParseStatus::kNeedMoreBytes) << "cut " << cut;
    EXPECT_GT(p.bytes_needed, cut);
    EXPECT_LE(p.bytes_needed, f.header_end) << "cut " << cut;
    // The nested array warning is the only finding this header has, and it
    // may be recorded before the bytes run out; nothing else may be.
    for (const Finding& x : sink.TakeSorted()) EXPECT_EQ(x.rule, RuleId::kNestedArray) << "cut " << cut;
  }
  for (uint64_t cut : {f.header_end, f.file_size}) {
    FindingSink sink(policy);
    ParseResult p = ParseHeader(absl::MakeConstSpan(f.bytes).first(cut), options, sink);
    EXPECT_EQ(p.status, ParseStatus::kOk);
    EXPECT_EQ(p.header.infos_end, f.header_end);
  }
}

// A prefix parses on past counts whose minimum it does not hold (to learn
// the KVs' average size), but an error it meets there is no verdict: the
// whole file may end before the counts' minimum, and then the verdict is
// the truncation at the counts (fuzzers found both orders disagreeing).
TEST(ParserIncompleteTest, ErrorPastUnprovenCountsAsksForTheCountsMinimum) {
  BuiltFile f = GgufBuilder()
                    .AddKv("a.b", GgufValue::U8(1))
                    .AddKv("c.d", GgufValue::StrWithLength("x", uint64_t{1} << 40))
                    .set_kv_count(2048)
                    .Build();
  const Policy policy = testing::StructuralPolicy();
  FindingSink whole_sink(policy);
  ParseResult whole = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/true}, whole_sink);
  ASSERT_EQ(whole.status, ParseStatus::kFailed);
  std::vector<Finding> whole_findings = whole_sink.TakeSorted();
  ASSERT_EQ(whole_findings.size(), 1u);
  EXPECT_EQ(whole_findings[0].rule, RuleId::kTruncated);
  EXPECT_EQ(whole_findings[0].offset, kKvCountOffset);

  FindingSink prefix_sink(policy);
  ParseResult prefix = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/false}, prefix_sink);
  ASSERT_EQ(prefix.status, ParseStatus::kNeedMoreBytes);
  // 24 bytes of file header, then 2048 KVs of at least their minimum size.
  EXPECT_GT(prefix.bytes_needed, uint64_t{24} + 2048 * 8);
  EXPECT_GE(prefix.bytes_expected, prefix.bytes_needed);
}

TEST(ParserIncompleteTest, ImpossibleSizeAsksForTheUnreachable) {
  BuiltFile f = GgufBuilder().AddKv("k", GgufValue::StrWithLength("x", UINT64_MAX)).Build();
  Policy policy = testing::StructuralPolicy();
  policy.limits.max_string_length = UINT64_MAX;
  FindingSink sink(policy);
  ParseResult p = ParseHeader(f.bytes, ParseOptions{policy.limits, /*complete=*/false}, sink);
  EXPECT_EQ(p.status, ParseStatus::kNeedMoreBytes);
  EXPECT_EQ(p.bytes_needed, UINT64_MAX);
}

// --- Declared sizes that lie ---

TEST(ParserDeclaredSizesTest, FailWithoutAllocating) {
  struct Lie {
    const char* what;
    BuiltFile file;
    RuleAt want;
    Policy policy = testing::StructuralPolicy();
  };
  Policy unlimited = testing::StructuralPolicy();
  unlimited.limits.max_string_length = UINT64_MAX;
  unlimited.limits.max_array_length = UINT64_MAX;
  unlimited.limits.max_kv_count = UINT64_MAX;
  unlimited.limits.max_tensor_count = UINT64_MAX;

  BuiltFile array_2_29 =
      GgufBuilder().AddKv("a.b", GgufValue::ArrayWithCount(Vt::kUint8, {GgufValue::U8(1)}, uint64_t{1} << 29)).Build();
  BuiltFile array_2_62 =
      GgufBuilder().AddKv("a.b", GgufValue::ArrayWithCount(Vt::kUint64, {}, uint64_t{1} << 62)).Build();
  BuiltFile strings_2_40 =
      GgufBuilder().AddKv("a.b", GgufValue::ArrayWithCount(Vt::kString, {}, uint64_t{1} << 40)).Build();
  BuiltFile nested_2_40 =
      GgufBuilder().AddKv("a.b", GgufValue::ArrayWithCount(Vt::kArray, {}, uint64_t{1} << 40)).Build();
  BuiltFile string_max = GgufBuilder().AddKv("a.b", GgufValue::StrWithLength("x", UINT64_MAX)).Build();
  BuiltFile key_2_40 = GgufBuilder().AddKvWithKeyLength("a.b", uint64_t{1} << 40, GgufValue::U8(1)).Build();
  BuiltFile name_2_40 = GgufBuilder().AddTensor("t", {4}, kF32, {.declared_name_length = uint64_t{1} << 40}).Build();
  BuiltFile array_str_len =
      GgufBuilder()
          .AddKv("a.b", GgufValue::Array(Vt::kString, {GgufValue::StrWithLength("x", uint64_t{1} << 31)}))
          .Build();

  std::vector<Lie> lies;
  lies.push_back(
      {"kv_count 1000 in 24 bytes", GgufBuilder().set_kv_count(1000).Build(), {RuleId::kTruncated, kKvCountOffset}});
  lies.push_back({"tensor_count 2^40",
                  GgufBuilder().set_tensor_count(uint64_t{1} << 40).Build(),
                  {RuleId::kTensorCountLimit, kTensorCountOffset}});
  lies.push_back({"kv_count 2^62 unlimited",
                  GgufBuilder().set_kv_count(uint64_t{1} << 62).Build(),
                  {RuleId::kTruncated, kKvCountOffset},
                  unlimited});
  lies.push_back({"u8 array of 2^29", array_2_29, {RuleId::kTruncated, KvAt(array_2_29, 0).array_count()}});
  lies.push_back(
      {"u64 array of 2^62, unlimited", array_2_62, {RuleId::kTruncated, KvAt(array_2_62, 0).array_count()}, unlimited});
  lies.push_back({"u64 array of 2^62", array_2_62, {RuleId::kArrayLengthLimit, KvAt(array_2_62, 0).array_count()}});
  lies.push_back({"string array of 2^40, unlimited",
                  strings_2_40,
                  {RuleId::kTruncated, KvAt(strings_2_40, 0).array_count()},
                  unlimited});
  lies.push_back({"array of 2^40 arrays, unlimited",
                  nested_2_40,
                  {RuleId::kTruncated, KvAt(nested_2_40, 0).array_count()},
                  unlimited});
  lies.push_back(
      {"string of 2^64-1, unlimited", string_max, {RuleId::kTruncated, KvAt(string_max, 0).payload}, unlimited});
  lies.push_back({"string of 2^64-1", string_max, {RuleId::kStringLengthLimit, KvAt(string_max, 0).payload}});
  lies.push_back({"key of 2^40", key_2_40, {RuleId::kStringLengthLimit, 24}});
  lies.push_back({"key of 2^40, unlimited", key_2_40, {RuleId::kTruncated, 24}, unlimited});
  lies.push_back({"tensor name of 2^40", name_2_40, {RuleId::kStringLengthLimit, name_2_40.tensor_info_offsets[0]}});
  lies.push_back(
      {"array string of 2^31", array_str_len, {RuleId::kStringLengthLimit, KvAt(array_str_len, 0).array_elements()}});
  for (const Lie& lie : lies) {
    const Report r = Validate(lie.file, lie.policy);
    EXPECT_TRUE(FindingsAre(r, {lie.want})) << lie.what;
    EXPECT_FALSE(r.header_parsed) << lie.what;
  }
}

TEST(ParserNestingTest, DefaultLimitIsFourArraysDeep) {
  BuiltFile ok = GgufBuilder().AddKv("a.b", testing::NestedArray(4, GgufValue::U8Array({1}))).Build();
  const Report r = Validate(ok);
  EXPECT_TRUE(FindingsAre(r, {{RuleId::kNestedArray, KvAt(ok, 0).payload}}));
  EXPECT_TRUE(IsValid(r));
}

TEST(ParserNestingTest, HardCapHoldsWhateverThePolicySays) {
  Policy deep = testing::StructuralPolicy();
  deep.limits.max_nesting_depth = 100000;
  BuiltFile f = GgufBuilder().AddKv("a.b", testing::NestedArray(200, GgufValue::U8Array({1}))).Build();
  const Report r = Validate(f, deep);
  EXPECT_TRUE(HasFinding(r, RuleId::kNestingDepthLimit, testing::NestedArrayAt(KvAt(f, 0), kHardMaxNestingDepth)));
  EXPECT_FALSE(r.valid());

  // Exactly at the cap is fine, and every level's contents are still checked.
  BuiltFile at_cap = GgufBuilder()
                         .AddKv("a.b", testing::NestedArray(kHardMaxNestingDepth,
                                                            GgufValue::Array(Vt::kBool, {GgufValue::BoolByte(3)})))
                         .Build();
  const Report rc = Validate(at_cap, deep);
  EXPECT_TRUE(
      FindingsAre(rc, {{RuleId::kNestedArray, KvAt(at_cap, 0).payload},
                       {RuleId::kInvalidBool, testing::NestedArrayAt(KvAt(at_cap, 0), kHardMaxNestingDepth + 1)}}));
}

// A sparse file of `size` bytes, `head` at its start and `tail` at its end,
// mapped read-only for as long as the object lives: headers near 4 GiB that
// cost no disk. The parser reads the length fields only.
class SparseMappedFile {
 public:
  SparseMappedFile(const std::vector<uint8_t>& head, const std::vector<uint8_t>& tail, uint64_t size) : size_(size) {
    char path[] = "/tmp/ggufguard-ceiling-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return;
    unlink(path);
    const bool written =
        write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size()) &&
        pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(size - tail.size())) ==
            static_cast<ssize_t>(tail.size()) &&
        ftruncate(fd, static_cast<off_t>(size)) == 0;
    void* map = written ? mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map != MAP_FAILED) map_ = static_cast<const uint8_t*>(map);
  }
  ~SparseMappedFile() {
    if (map_ != nullptr) munmap(const_cast<uint8_t*>(map_), size_);
  }
  SparseMappedFile(const SparseMappedFile&) = delete;
  SparseMappedFile& operator=(const SparseMappedFile&) = delete;
  bool ok() const { return map_ != nullptr; }
  absl::Span<const uint8_t> bytes() const { return {map_, size_}; }

 private:
  const uint8_t* map_ = nullptr;
  uint64_t size_;
};

void PutLittle(std::vector<uint8_t>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// The GGUF v3 fixed header: magic, version, tensor count, KV count.
std::vector<uint8_t> FixedHeader(uint64_t tensors, uint64_t kvs) {
  std::vector<uint8_t> head = {'G', 'G', 'U', 'F'};
  PutLittle(head, 3, 4);
  PutLittle(head, tensors, 8);
  PutLittle(head, kvs, 8);
  return head;
}

// What both ceiling tests expect one byte past KeyValue::kMaxHeaderPosition.
void ExpectRefusedPastTheCeiling(const ParseResult& r, const std::vector<Finding>& findings) {
  EXPECT_EQ(r.status, ParseStatus::kFailed);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, RuleId::kHeaderSizeLimit);
  EXPECT_EQ(findings[0].message, "header of at least 4294967296 bytes exceeds the limit of 4294967295");
}

ParseOptions UnlimitedHeader() {
  ParseOptions options;
  options.limits.max_header_bytes = UINT64_MAX;
  options.limits.max_string_length = UINT64_MAX;
  return options;
}

// The parsed view keeps 32-bit positions (KeyValue), so no header may reach
// past KeyValue::kMaxHeaderPosition, whatever limits a caller passes.
TEST(ParserHeaderLimitTest, HardCeilingHoldsWhateverTheLimitsSay) {
  // One string KV: 24 bytes of file header, 8 + 3 ("a.b") + 4 + 8 before the
  // string's bytes.
  constexpr uint64_t kValueAt = 24 + 8 + 3 + 4 + 8;
  const ParseOptions options = UnlimitedHeader();
  for (const uint64_t end : {KeyValue::kMaxHeaderPosition, KeyValue::kMaxHeaderPosition + 1}) {
    std::vector<uint8_t> head = FixedHeader(/*tensors=*/0, /*kvs=*/1);
    PutLittle(head, 3, 8);
    head.insert(head.end(), {'a', '.', 'b'});
    PutLittle(head, 8, 4);  // string
    PutLittle(head, end - kValueAt, 8);
    ASSERT_EQ(head.size(), kValueAt);
    const SparseMappedFile file(head, {}, end);
    ASSERT_TRUE(file.ok());
    const Policy policy = testing::StructuralPolicy();
    FindingSink sink(policy);
    const ParseResult r = ParseHeader(file.bytes(), options, sink);
    const std::vector<Finding> findings = sink.TakeSorted();
    if (end <= KeyValue::kMaxHeaderPosition) {
      EXPECT_EQ(r.status, ParseStatus::kOk);
      ASSERT_EQ(r.header.kvs.size(), 1u);
      EXPECT_EQ(r.header.kvs[0].key(), "a.b");
      EXPECT_EQ(r.header.kvs[0].value().offset, kValueAt);
      EXPECT_EQ(r.header.kvs[0].value().bytes.size(), end - kValueAt);
      EXPECT_TRUE(findings.empty());
    } else {
      ExpectRefusedPastTheCeiling(r, findings);
    }
  }
}

// The same ceiling for tensor infos (TensorInfo keeps a 32-bit offset and
// reads its dimensions and data offset back from the buffer): one info
// whose name fills the sparse file up to its last 24 bytes.
TEST(ParserHeaderLimitTest, HardCeilingHoldsForTensorInfos) {
  const ParseOptions options = UnlimitedHeader();
  constexpr uint64_t kNameAt = 24 + 8;
  constexpr uint64_t kAfterName = 4 + 8 + 4 + 8;  // n_dims, one dimension, type, data offset
  for (const uint64_t end : {KeyValue::kMaxHeaderPosition, KeyValue::kMaxHeaderPosition + 1}) {
    std::vector<uint8_t> head = FixedHeader(/*tensors=*/1, /*kvs=*/0), tail;
    const uint64_t name_size = end - kNameAt - kAfterName;
    PutLittle(head, name_size, 8);
    PutLittle(tail, 1, 4);     // n_dims
    PutLittle(tail, 7, 8);     // ne[0]
    PutLittle(tail, 0, 4);     // F32
    PutLittle(tail, 0x40, 8);  // data offset
    ASSERT_EQ(tail.size(), kAfterName);
    const SparseMappedFile file(head, tail, end);
    ASSERT_TRUE(file.ok());
    const Policy policy = testing::StructuralPolicy();
    FindingSink sink(policy);
    const ParseResult r = ParseHeader(file.bytes(), options, sink);
    const std::vector<Finding> findings = sink.TakeSorted();
    if (end <= KeyValue::kMaxHeaderPosition) {
      EXPECT_EQ(r.status, ParseStatus::kOk);
      ASSERT_EQ(r.header.tensors.size(), 1u);
      const TensorInfo& t = r.header.tensors[0];
      EXPECT_EQ(t.offset, 24u);
      EXPECT_EQ(t.name.size(), name_size);
      EXPECT_EQ(t.n_dims, 1u);
      EXPECT_EQ(t.dims(), (std::array<uint64_t, kMaxDims>{7, 1, 1, 1}));
      EXPECT_EQ(t.type_offset(), end - 12);
      EXPECT_EQ(t.relative_offset_field(), end - 8);
      EXPECT_EQ(t.relative_offset(), 0x40u);
      EXPECT_EQ(r.header.infos_end, end);
      EXPECT_TRUE(findings.empty());
    } else {
      ExpectRefusedPastTheCeiling(r, findings);
    }
  }
}

TEST(ParserValueTypesTest, UnknownTypesStopParsing) {
  BuiltFile scalar =
      GgufBuilder().AddKv("a.b", GgufValue::Raw(13, {1, 2, 3, 4})).AddKv("c.d", GgufValue::U8(1)).Build();
  const Report rs = Validate(scalar);
  EXPECT_TRUE(FindingsAre(rs, {{RuleId::kInvalidValueType, KvAt(scalar, 0).type}}));
  EXPECT_FALSE(rs.header_parsed);
  EXPECT_EQ(rs.header.kvs.size(), 0u);

  BuiltFile array = GgufBuilder()
                        .AddKv("c.d", GgufValue::U8(1))
                        .AddKv("a.b", GgufValue::ArrayWithElemType(13, {GgufValue::U8(1)}))
                        .Build();
  const Report ra = Validate(array);
  EXPECT_TRUE(FindingsAre(ra, {{RuleId::kInvalidArrayType, KvAt(array, 1).array_elem_type()}}));
  EXPECT_EQ(ra.header.kvs.size(), 1u);  // what was read before parsing stopped
}

TEST(ParserValueTypesTest, EveryKnownTypeRoundTrips) {
  BuiltFile f = GgufBuilder()
                    .AddKv("t.u8", GgufValue::U8(200))
                    .AddKv("t.i8", GgufValue::I8(-100))
                    .AddKv("t.u16", GgufValue::U16(60000))
                    .AddKv("t.i16", GgufValue::I16(-30000))
                    .AddKv("t.u32", GgufValue::U32(4000000000u))
                    .AddKv("t.i32", GgufValue::I32(-2000000000))
                    .AddKv("t.f32", GgufValue::F32(0.25f))
                    .AddKv("t.bool", GgufValue::Bool(true))
                    .AddKv("t.str", GgufValue::Str("s"))
                    .AddKv("t.arr", GgufValue::I8Array({-1, 1}))
                    .AddKv("t.u64", GgufValue::U64(UINT64_MAX))
                    .AddKv("t.i64", GgufValue::I64(INT64_MIN))
                    .AddKv("t.f64", GgufValue::F64(-0.125))
                    .Build();
  const Report r = Validate(f);
  ASSERT_TRUE(IsValid(r));
  const auto& kv = r.header.kvs;
  ASSERT_EQ(kv.size(), 13u);
  for (uint32_t i = 0; i < 13; ++i) EXPECT_EQ(static_cast<uint32_t>(kv[i].type()), i);
  EXPECT_EQ(kv[0].value().AsUnsigned(), 200u);
  EXPECT_EQ(kv[1].value().AsSigned(), -100);
  EXPECT_FALSE(kv[1].value().AsUnsigned().has_value());
  EXPECT_EQ(kv[2].value().AsUnsigned(), 60000u);
  EXPECT_EQ(kv[3].value().AsSigned(), -30000);
  EXPECT_EQ(kv[4].value().AsUnsigned(), 4000000000u);
  EXPECT_EQ(kv[5].value().AsSigned(), -2000000000);
  EXPECT_EQ(kv[6].value().AsDouble(), 0.25);
  EXPECT_EQ(kv[7].value().AsUnsigned(), 1u);
  EXPECT_EQ(kv[8].value().AsString(), "s");
  EXPECT_EQ(kv[9].value().array.count, 2u);
  EXPECT_EQ(kv[10].value().AsUnsigned(), UINT64_MAX);
  EXPECT_FALSE(kv[10].value().AsSigned().has_value());
  EXPECT_EQ(kv[11].value().AsSigned(), INT64_MIN);
  EXPECT_EQ(kv[12].value().AsDouble(), -0.125);
  // split.no and split.count are read only as exactly a u16: a u8 or a u32
  // holding the same number is another type (GG4004's).
  EXPECT_EQ(ExactU16(&kv[2]), 60000u);
  for (uint32_t i : {0u, 4u, 7u, 10u}) EXPECT_FALSE(ExactU16(&kv[i]).has_value()) << i;
  EXPECT_FALSE(ExactU16(nullptr).has_value());
}

}  // namespace
}  // namespace ggufguard
