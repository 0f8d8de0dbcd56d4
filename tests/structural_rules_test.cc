// Every structural rule (limits, header, metadata encoding, alignment, tensor
// infos, data layout): a file that breaks it, the exact byte its finding must
// point at (computed from the writer's offsets), and a neighbour that differs
// minimally and must not trigger it.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/io/source.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::DataFill;
using testing::Describe;
using testing::FindingsAre;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasFinding;
using testing::IsValid;
using testing::KvAt;
using testing::LacksRule;
using testing::RulesAt;
using testing::StringArrayElement;
using testing::TensorAt;
using testing::TensorOptions;
using testing::Validate;
using Vt = testing::ValueType;
using testing::kF32;
using testing::kI8;
using testing::kKvCountOffset;
using testing::kQ4_0;
using testing::kQ8_1;
using testing::kQ8_K;
using testing::kTensorCountOffset;
using testing::kVersionOffset;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// What one case checks: `bad` has a finding of the rule at `offset`, `good`
// has none of that rule and is valid, both under `policy`.
struct Case {
  BuiltFile bad;
  uint64_t offset = 0;
  BuiltFile good;
  Policy policy = testing::StructuralPolicy();
};

struct RuleCase {
  std::string name;  // test name: GGnnnn_What
  RuleId rule;
  std::function<Case()> make;
};

// For gtest's messages: the case's name, not its bytes.
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

// --- Builders shared by the cases ---

// A realistic little file: an architecture, the KV under test, one tensor.
// The KV under test is KV 1.
GgufBuilder WithKvBuilder(std::string key, GgufValue value) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv(std::move(key), std::move(value))
      .AddTensor("token_embd.weight", {8, 2}, kF32);
  return b;
}
BuiltFile WithKv(std::string key, GgufValue value) { return WithKvBuilder(std::move(key), std::move(value)).Build(); }
BuiltFile WithValue(GgufValue value) { return WithKv("test.value", std::move(value)); }

// Two KVs with the given keys (KV 1 and KV 2 after the architecture).
BuiltFile WithKeys(std::string first, std::string second) {
  return GgufBuilder()
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv(std::move(first), GgufValue::Str("a"))
      .AddKv(std::move(second), GgufValue::Str("b"))
      .AddTensor("t", {4}, kF32)
      .Build();
}

// One tensor described by the arguments, after one KV.
BuiltFile WithTensor(std::string name, std::vector<uint64_t> dims, uint32_t type, TensorOptions options = {}) {
  return GgufBuilder()
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddTensor(std::move(name), std::move(dims), type, std::move(options))
      .Build();
}

// Two 16-byte F32 tensors with per-tensor options.
BuiltFile TwoTensors(TensorOptions a = {}, TensorOptions b = {}, std::string name_b = "b") {
  return GgufBuilder()
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddTensor("a", {4}, kF32, std::move(a))
      .AddTensor(std::move(name_b), {4}, kF32, std::move(b))
      .Build();
}

// A file whose strings are all at most 8 bytes, for a max_string_length of 8.
BuiltFile ShortStrings(std::string key, GgufValue value, std::string tensor) {
  return GgufBuilder().AddKv(std::move(key), std::move(value)).AddTensor(std::move(tensor), {4}, kF32).Build();
}

// A v1 file with the KV under test as KV 0.
BuiltFile V1WithValue(GgufValue value) {
  return GgufBuilder().set_version(1).AddKv("test.value", std::move(value)).AddTensor("t", {4}, kF32).Build();
}

Policy WithLimits(const std::function<void(Limits&)>& set) {
  Policy p = testing::StructuralPolicy();
  set(p.limits);
  return p;
}

BuiltFile Patched(BuiltFile f, uint64_t offset, uint8_t byte) {
  testing::PutU8(f.bytes, offset, byte);
  return f;
}

// --- The cases ---

std::vector<RuleCase> Cases() {
  std::vector<RuleCase> c;
  auto add = [&](std::string name, RuleId rule, std::function<Case()> make) {
    c.push_back(RuleCase{RuleCode(rule) + "_" + name, rule, std::move(make)});
  };

  // 1xxx limits and truncation.
  add("CutInKvCount", RuleId::kTruncated, [] {
    BuiltFile good = WithValue(GgufValue::U32(1));
    return Case{WithKvBuilder("test.value", GgufValue::U32(1)).set_truncate_to(kKvCountOffset + 3).Build(),
                kKvCountOffset, good};
  });
  add("CutInStringValue", RuleId::kTruncated, [] {
    BuiltFile good = WithValue(GgufValue::Str("0123456789"));
    uint64_t cut = KvAt(good, 1).string_bytes() + 3;
    return Case{WithKvBuilder("test.value", GgufValue::Str("0123456789")).set_truncate_to(cut).Build(),
                KvAt(good, 1).payload, good};
  });
  add("CutInStringArray", RuleId::kTruncated, [] {
    const std::vector<std::string> s = {"ab", "cd", "efgh"};
    BuiltFile good = WithValue(GgufValue::StrArray(s));
    uint64_t third = StringArrayElement(KvAt(good, 1), s, 2);
    return Case{WithKvBuilder("test.value", GgufValue::StrArray(s)).set_truncate_to(third + 2).Build(), third - 8,
                good};
  });
  add("StringLengthPastTheEnd", RuleId::kTruncated, [] {
    BuiltFile bad = WithValue(GgufValue::StrWithLength("ab", 100000));
    return Case{bad, KvAt(bad, 1).payload, WithValue(GgufValue::Str("ab"))};
  });
  add("CutInTensorType", RuleId::kTruncated, [] {
    BuiltFile good = WithTensor("t", {4}, kF32);
    uint64_t type = TensorAt(good, 0, 1).type;
    return Case{GgufBuilder()
                    .AddKv("general.architecture", GgufValue::Str("llama"))
                    .AddTensor("t", {4}, kF32)
                    .set_truncate_to(type + 2)
                    .Build(),
                type, good};
  });
  add("PolicyTensorCount", RuleId::kTensorCountLimit, [] {
    return Case{TwoTensors(), kTensorCountOffset, WithTensor("a", {4}, kF32),
                WithLimits([](Limits& l) { l.max_tensor_count = 1; })};
  });
  add("DeclaredTensorCount", RuleId::kTensorCountLimit, [] {
    return Case{GgufBuilder().set_tensor_count(uint64_t{1} << 40).Build(), kTensorCountOffset, GgufBuilder().Build()};
  });
  add("PolicyKvCount", RuleId::kKvCountLimit, [] {
    return Case{WithKeys("general.name", "general.type"), kKvCountOffset, WithValue(GgufValue::U8(1)),
                WithLimits([](Limits& l) { l.max_kv_count = 2; })};
  });
  add("DeclaredKvCount", RuleId::kKvCountLimit, [] {
    return Case{GgufBuilder().set_kv_count(UINT64_MAX).Build(), kKvCountOffset, GgufBuilder().Build()};
  });
  auto eight = [](Limits& l) { l.max_string_length = 8; };
  add("Key", RuleId::kStringLengthLimit, [eight] {
    BuiltFile bad = ShortStrings("abcd.efgh", GgufValue::U8(1), "t");
    return Case{bad, bad.kv_offsets[0], ShortStrings("abcd.efg", GgufValue::U8(1), "t"), WithLimits(eight)};
  });
  add("Value", RuleId::kStringLengthLimit, [eight] {
    BuiltFile bad = ShortStrings("a.b", GgufValue::Str("123456789"), "t");
    return Case{bad, KvAt(bad, 0).payload, ShortStrings("a.b", GgufValue::Str("12345678"), "t"), WithLimits(eight)};
  });
  add("ArrayElement", RuleId::kStringLengthLimit, [eight] {
    const std::vector<std::string> s = {"a", "123456789"};
    BuiltFile bad = ShortStrings("a.b", GgufValue::StrArray(s), "t");
    return Case{bad, StringArrayElement(KvAt(bad, 0), s, 1) - 8,
                ShortStrings("a.b", GgufValue::StrArray({"a", "12345678"}), "t"), WithLimits(eight)};
  });
  add("TensorName", RuleId::kStringLengthLimit, [eight] {
    BuiltFile bad = ShortStrings("a.b", GgufValue::U8(1), "t23456789");
    return Case{bad, bad.tensor_info_offsets[0], ShortStrings("a.b", GgufValue::U8(1), "t2345678"), WithLimits(eight)};
  });
  auto three = [](Limits& l) { l.max_array_length = 3; };
  add("U8Array", RuleId::kArrayLengthLimit, [three] {
    BuiltFile bad = WithValue(GgufValue::U8Array({1, 2, 3, 4}));
    return Case{bad, KvAt(bad, 1).array_count(), WithValue(GgufValue::U8Array({1, 2, 3})), WithLimits(three)};
  });
  add("StringArray", RuleId::kArrayLengthLimit, [three] {
    BuiltFile bad = WithValue(GgufValue::StrArray({"a", "b", "c", "d"}));
    return Case{bad, KvAt(bad, 1).array_count(), WithValue(GgufValue::StrArray({"a", "b", "c"})), WithLimits(three)};
  });
  add("PolicyDepth1", RuleId::kNestingDepthLimit, [] {
    BuiltFile bad = WithValue(testing::NestedArray(2, GgufValue::U8Array({1})));
    return Case{bad, testing::NestedArrayAt(KvAt(bad, 1), 1),
                WithValue(testing::NestedArray(1, GgufValue::U8Array({1}))),
                WithLimits([](Limits& l) { l.max_nesting_depth = 1; })};
  });
  add("DefaultDepth4", RuleId::kNestingDepthLimit, [] {
    BuiltFile bad = WithValue(testing::NestedArray(5, GgufValue::U8Array({1})));
    return Case{bad, testing::NestedArrayAt(KvAt(bad, 1), 4),
                WithValue(testing::NestedArray(4, GgufValue::U8Array({1})))};
  });
  add("PolicyHeaderBytes", RuleId::kHeaderSizeLimit, [] {
    BuiltFile good = WithValue(GgufValue::Str("abc"));
    Policy p = WithLimits([&](Limits& l) { l.max_header_bytes = good.header_end; });
    return Case{WithValue(GgufValue::Str("abcd")), 0, good, p};
  });

  // 2xxx file header.
  add("NotGguf", RuleId::kBadMagic, [] {
    return Case{WithKvBuilder("general.name", GgufValue::Str("x")).set_magic("GGUX").Build(), 0,
                WithKv("general.name", GgufValue::Str("x"))};
  });
  add("Ggml", RuleId::kLegacyMagic, [] {
    return Case{GgufBuilder().set_magic("lmgg").Build(), 0, GgufBuilder().Build()};
  });
  add("Fugg", RuleId::kLegacyMagic, [] {
    return Case{GgufBuilder().set_magic("FUGG").Build(), 0, GgufBuilder().Build()};
  });
  add("Version4", RuleId::kUnsupportedVersion, [] {
    return Case{GgufBuilder().set_version(4).Build(), kVersionOffset, GgufBuilder().set_version(3).Build()};
  });
  add("Version0", RuleId::kUnsupportedVersion, [] {
    return Case{GgufBuilder().set_version(0).Build(), kVersionOffset, GgufBuilder().set_version(3).Build()};
  });
  add("ByteOrderNonsense", RuleId::kUnsupportedVersion, [] {
    return Case{GgufBuilder().set_version(0x00030003).Build(), kVersionOffset, GgufBuilder().Build()};
  });
  add("V1", RuleId::kVersion1, [] {
    return Case{GgufBuilder().set_version(1).AddKv("a.b", GgufValue::U32(1)).AddTensor("t", {4}, kF32).Build(),
                kVersionOffset,
                GgufBuilder().set_version(2).AddKv("a.b", GgufValue::U32(1)).AddTensor("t", {4}, kF32).Build()};
  });
  add("BigEndian", RuleId::kBigEndian, [] {
    auto b = [](bool be) {
      return WithKvBuilder("test.value", GgufValue::StrArray({"x", "yz"})).set_big_endian(be).Build();
    };
    return Case{b(true), kVersionOffset, b(false)};
  });

  // 3xxx metadata encoding.
  add("Type13", RuleId::kInvalidValueType, [] {
    BuiltFile bad = WithValue(GgufValue::Raw(13, {}));
    return Case{bad, KvAt(bad, 1).type, WithValue(GgufValue::U32(13))};
  });
  add("TypeU32Max", RuleId::kInvalidValueType, [] {
    BuiltFile bad = WithValue(GgufValue::Raw(UINT32_MAX, {0, 0, 0, 0}));
    return Case{bad, KvAt(bad, 1).type, WithValue(GgufValue::U32(0))};
  });
  add("ElementType13", RuleId::kInvalidArrayType, [] {
    BuiltFile bad = WithValue(GgufValue::ArrayWithElemType(13, {}));
    return Case{bad, KvAt(bad, 1).array_elem_type(), WithValue(GgufValue::U8Array({}))};
  });
  add("InnerElementType13", RuleId::kInvalidArrayType, [] {
    BuiltFile bad = WithValue(testing::NestedArray(1, GgufValue::ArrayWithElemType(13, {})));
    return Case{bad, testing::NestedArrayAt(KvAt(bad, 1), 1),
                WithValue(testing::NestedArray(1, GgufValue::U8Array({})))};
  });
  add("ArrayOfArrays", RuleId::kNestedArray, [] {
    BuiltFile bad = WithValue(GgufValue::Array(Vt::kArray, {GgufValue::U8Array({1, 2}), GgufValue::U8Array({3})}));
    // The catalog's severity (an error), not the structural tests' warning.
    Policy policy = testing::StructuralPolicy();
    policy.severity_override[static_cast<uint16_t>(RuleId::kNestedArray)].reset();
    return Case{bad, KvAt(bad, 1).array_elem_type(), WithValue(GgufValue::U8Array({1, 2, 3})), policy};
  });
  add("Key", RuleId::kInvalidUtf8, [] {
    BuiltFile bad = WithKv("general.n\xffme", GgufValue::Str("x"));
    return Case{bad, KvAt(bad, 1).key + 9, WithKv("general.name", GgufValue::Str("x"))};
  });
  add("Value", RuleId::kInvalidUtf8, [] {
    BuiltFile bad =
        WithValue(GgufValue::Str("ab\xc3\x28"
                                 "cd"));
    return Case{bad, KvAt(bad, 1).string_bytes() + 2,
                WithValue(GgufValue::Str("ab\xc3\xa9"
                                         "cd"))};
  });
  add("ValueOverlong", RuleId::kInvalidUtf8, [] {
    BuiltFile bad = WithValue(GgufValue::Str("\xc0\xaf"));
    return Case{bad, KvAt(bad, 1).string_bytes(), WithValue(GgufValue::Str("\xc2\xaf"))};
  });
  add("ValueSurrogate", RuleId::kInvalidUtf8, [] {
    BuiltFile bad = WithValue(GgufValue::Str("x\xed\xa0\x80"));
    return Case{bad, KvAt(bad, 1).string_bytes() + 1, WithValue(GgufValue::Str("x\xed\x9f\xbf"))};
  });
  // All strings short: the bulk check of the whole array (fast path) must
  // find the same element and byte as a string-by-string walk.
  add("ArrayFastPath", RuleId::kInvalidUtf8, [] {
    const std::vector<std::string> s = {"alpha", "b\xe2\x82", "gamma"};
    BuiltFile bad = WithValue(GgufValue::StrArray(s));
    return Case{bad, StringArrayElement(KvAt(bad, 1), s, 1) + 1,
                WithValue(GgufValue::StrArray({"alpha", "b\xe2\x82\xac", "gamma"}))};
  });
  add("ArraySlowPath", RuleId::kInvalidUtf8, [] {
    const std::vector<std::string> s = {"alpha", "b\xe2\x82", "gamma", std::string(200, 'z')};
    BuiltFile bad = WithValue(GgufValue::StrArray(s));
    return Case{bad, StringArrayElement(KvAt(bad, 1), s, 1) + 1,
                WithValue(GgufValue::StrArray({"alpha", "b\xe2\x82\xac", "gamma", std::string(200, 'z')}))};
  });
  add("InnerStringArray", RuleId::kInvalidUtf8, [] {
    BuiltFile bad =
        WithValue(GgufValue::Array(Vt::kArray, {GgufValue::StrArray({"ok"}), GgufValue::StrArray({"x\xff"})}));
    // Outer elements start after elem type + count; the first inner array is
    // 4 + 8 + (8 + 2) bytes; the second's string starts 4 + 8 + 8 into it.
    uint64_t second_inner = KvAt(bad, 1).array_elements() + 4 + 8 + 8 + 2;
    return Case{bad, second_inner + 4 + 8 + 8 + 1,
                WithValue(GgufValue::Array(Vt::kArray, {GgufValue::StrArray({"ok"}), GgufValue::StrArray({"x"})}))};
  });
  add("Scalar2", RuleId::kInvalidBool, [] {
    BuiltFile bad = WithValue(GgufValue::BoolByte(2));
    return Case{bad, KvAt(bad, 1).payload, WithValue(GgufValue::Bool(true))};
  });
  add("ArrayElement2", RuleId::kInvalidBool, [] {
    BuiltFile bad = WithValue(GgufValue::Array(Vt::kBool, {GgufValue::Bool(true), GgufValue::BoolByte(2)}));
    return Case{bad, KvAt(bad, 1).array_elements() + 1, WithValue(GgufValue::BoolArray({true, true}))};
  });
  add("InnerArrayFF", RuleId::kInvalidBool, [] {
    BuiltFile bad = WithValue(testing::NestedArray(1, GgufValue::Array(Vt::kBool, {GgufValue::BoolByte(0xFF)})));
    return Case{bad, testing::NestedArrayAt(KvAt(bad, 1), 2),
                WithValue(testing::NestedArray(1, GgufValue::BoolArray({false})))};
  });
  add("F32NaN", RuleId::kNonFiniteFloat, [] {
    BuiltFile bad = WithValue(GgufValue::F32(static_cast<float>(kNaN)));
    return Case{bad, KvAt(bad, 1).payload, WithValue(GgufValue::F32(1e-5f))};
  });
  add("F64Inf", RuleId::kNonFiniteFloat, [] {
    BuiltFile bad = WithValue(GgufValue::F64(kInf));
    return Case{bad, KvAt(bad, 1).payload, WithValue(GgufValue::F64(1e308))};
  });
  add("F32ArrayMinusInf", RuleId::kNonFiniteFloat, [] {
    BuiltFile bad = WithValue(GgufValue::F32Array({1.0f, 2.0f, -static_cast<float>(kInf)}));
    return Case{bad, KvAt(bad, 1).array_elements() + 2 * 4, WithValue(GgufValue::F32Array({1.0f, 2.0f, -3.0f}))};
  });
  add("F64ArrayNaN", RuleId::kNonFiniteFloat, [] {
    BuiltFile bad = WithValue(GgufValue::F64Array({0.0, kNaN}));
    return Case{bad, KvAt(bad, 1).array_elements() + 8, WithValue(GgufValue::F64Array({0.0, -0.0}))};
  });
  add("EmptyKey", RuleId::kEmptyKey, [] {
    BuiltFile bad = WithKv("", GgufValue::U8(1));
    return Case{bad, bad.kv_offsets[1], WithKv("x", GgufValue::U8(1))};
  });
  add("EmptySegmentLenient", RuleId::kKeyGrammar, [] {
    BuiltFile bad = WithKv("general..name", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 8, WithKv("general.x.name", GgufValue::U8(1))};
  });
  add("TrailingDotLenient", RuleId::kKeyGrammar, [] {
    BuiltFile bad = WithKv("general.", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 8, WithKv("general", GgufValue::U8(1))};
  });
  add("SpaceLenient", RuleId::kKeyGrammar, [] {
    BuiltFile bad = WithKv("general.na me", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 10, WithKv("general.na-me", GgufValue::U8(1))};
  });
  add("UpperCaseStrict", RuleId::kKeyGrammar, [] {
    BuiltFile bad = WithKv("general.Name", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 8, WithKv("general.name", GgufValue::U8(1)), testing::StructuralStrictPolicy()};
  });
  add("DashStrict", RuleId::kKeyGrammar, [] {
    BuiltFile bad = WithKv("command-r.context_length", GgufValue::U32(8));
    return Case{bad, KvAt(bad, 1).key + 7, WithKv("command_r.context_length", GgufValue::U32(8)),
                testing::StructuralStrictPolicy()};
  });
  add("ControlByte", RuleId::kKeyControlBytes, [] {
    BuiltFile bad = WithKv("gen\x01ral.name", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 3, WithKv("general.name", GgufValue::U8(1))};
  });
  add("NonAscii", RuleId::kKeyControlBytes, [] {
    BuiltFile bad = WithKv("g\xc3\xa9n.x", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 1, WithKv("gen.x", GgufValue::U8(1))};
  });
  add("Del", RuleId::kKeyControlBytes, [] {
    BuiltFile bad = WithKv("gen.x\x7f", GgufValue::U8(1));
    return Case{bad, KvAt(bad, 1).key + 5, WithKv("gen.x", GgufValue::U8(1))};
  });
  add("Key65536", RuleId::kKeyTooLong, [] {
    BuiltFile bad = WithKv(std::string(65536, 'k'), GgufValue::U8(1));
    return Case{bad, bad.kv_offsets[1], WithKv(std::string(65535, 'k'), GgufValue::U8(1))};
  });
  add("SameKeyTwice", RuleId::kDuplicateKey, [] {
    BuiltFile bad = WithKeys("general.name", "general.name");
    return Case{bad, bad.kv_offsets[2], WithKeys("general.name", "general.names")};
  });
  add("NulSuffix", RuleId::kKeyCollision, [] {
    BuiltFile bad = WithKeys("general.name", std::string("general.name\0x", 14));
    return Case{bad, bad.kv_offsets[2], WithKeys("general.name", "general.namex")};
  });
  add("NulSuffixFirst", RuleId::kKeyCollision, [] {
    BuiltFile bad = WithKeys(std::string("general.name\0", 13), "general.name");
    return Case{bad, bad.kv_offsets[2], WithKeys("general.names", "general.name")};
  });
  add("TrailingSpace", RuleId::kKeyCollision, [] {
    BuiltFile bad = WithKeys("general.name", "general.name ");
    return Case{bad, bad.kv_offsets[2], WithKeys("general.name", "general.name_")};
  });
  add("UpperCase", RuleId::kKeyCollision, [] {
    BuiltFile bad = WithKeys("general.name", "General.Name");
    return Case{bad, bad.kv_offsets[2], WithKeys("general.name", "General.Nam")};
  });
  add("Value", RuleId::kNulInString, [] {
    BuiltFile bad = WithValue(GgufValue::Str(std::string("ab\0cd", 5)));
    return Case{bad, KvAt(bad, 1).string_bytes() + 2, WithValue(GgufValue::Str("ab cd"))};
  });
  add("ArrayFastPath", RuleId::kNulInString, [] {
    const std::vector<std::string> s = {"a", "", std::string("b\0", 2), "c"};
    BuiltFile bad = WithValue(GgufValue::StrArray(s));
    return Case{bad, StringArrayElement(KvAt(bad, 1), s, 2) + 1, WithValue(GgufValue::StrArray({"a", "", "b0", "c"}))};
  });
  add("ArraySlowPath", RuleId::kNulInString, [] {
    const std::vector<std::string> s = {"a", "", std::string("b\0", 2), std::string(128, 'c')};
    BuiltFile bad = WithValue(GgufValue::StrArray(s));
    return Case{bad, StringArrayElement(KvAt(bad, 1), s, 2) + 1,
                WithValue(GgufValue::StrArray({"a", "", "b0", std::string(128, 'c')}))};
  });
  add("U64InV1", RuleId::kValueTypeVersion, [] {
    BuiltFile bad = V1WithValue(GgufValue::U64(1));
    return Case{bad, KvAt(bad, 0, 4).type, V1WithValue(GgufValue::U32(1)), testing::V1AllowedPolicy()};
  });
  add("F64InV1", RuleId::kValueTypeVersion, [] {
    BuiltFile bad = V1WithValue(GgufValue::F64(1));
    return Case{bad, KvAt(bad, 0, 4).type, V1WithValue(GgufValue::F32(1)), testing::V1AllowedPolicy()};
  });
  add("I64ArrayInV1", RuleId::kValueTypeVersion, [] {
    BuiltFile bad = V1WithValue(GgufValue::I64Array({1, 2}));
    return Case{bad, KvAt(bad, 0, 4).array_elem_type(), V1WithValue(GgufValue::I32Array({1, 2})),
                testing::V1AllowedPolicy()};
  });

  // 4xxx general.alignment.
  auto aligned = [](GgufValue alignment) {
    return GgufBuilder().AddKv("general.alignment", std::move(alignment)).AddTensor("t", {3}, kF32).Build();
  };
  add("U64", RuleId::kAlignmentType, [aligned] {
    BuiltFile bad = aligned(GgufValue::U64(32));
    return Case{bad, KvAt(bad, 0).type, aligned(GgufValue::U32(32))};
  });
  add("I32", RuleId::kAlignmentType, [aligned] {
    BuiltFile bad = aligned(GgufValue::I32(32));
    return Case{bad, KvAt(bad, 0).type, aligned(GgufValue::U32(32))};
  });
  auto with_alignment = [](uint32_t a) {
    return GgufBuilder().AddAlignmentKv(a).AddTensor("t", {3}, kF32).AddTensor("u", {5}, kF32).Build();
  };
  add("Zero", RuleId::kAlignmentNotPowerOfTwo, [with_alignment] {
    BuiltFile bad = with_alignment(0);
    return Case{bad, KvAt(bad, 0).payload, with_alignment(32)};
  });
  add("Three", RuleId::kAlignmentNotPowerOfTwo, [with_alignment] {
    BuiltFile bad = with_alignment(3);
    return Case{bad, KvAt(bad, 0).payload, with_alignment(4)};
  });
  add("Fortyeight", RuleId::kAlignmentNotPowerOfTwo, [with_alignment] {
    BuiltFile bad = with_alignment(48);
    return Case{bad, KvAt(bad, 0).payload, with_alignment(64)};
  });
  // 2^31 is what ggml accepts; laying out a file with it would take 2 GiB,
  // so the KV is written without tensors.
  add("TwoPow31", RuleId::kAlignmentOutOfRange, [] {
    auto b = [](uint32_t a) { return GgufBuilder().AddKv("general.alignment", GgufValue::U32(a)).Build(); };
    BuiltFile bad = b(uint32_t{1} << 31);
    return Case{bad, KvAt(bad, 0).payload, b(uint32_t{1} << 20)};
  });
  add("FourUnderStrict", RuleId::kAlignmentOutOfRange, [with_alignment] {
    BuiltFile bad = with_alignment(4);
    return Case{bad, KvAt(bad, 0).payload, with_alignment(8), testing::StructuralStrictPolicy()};
  });

  // 5xxx tensor infos.
  add("Empty", RuleId::kEmptyTensorName, [] {
    BuiltFile bad = WithTensor("", {4}, kF32);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {4}, kF32)};
  });
  add("SixtyFourBytes", RuleId::kTensorNameTooLong, [] {
    BuiltFile bad = WithTensor(std::string(64, 'n'), {4}, kF32);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor(std::string(63, 'n'), {4}, kF32)};
  });
  add("Nul", RuleId::kTensorNameEncoding, [] {
    BuiltFile bad = WithTensor(std::string("a\0b", 3), {4}, kF32);
    return Case{bad, TensorAt(bad, 0, 3).name + 1, WithTensor("a_b", {4}, kF32)};
  });
  add("InvalidUtf8", RuleId::kTensorNameEncoding, [] {
    BuiltFile bad = WithTensor("blk.\xff", {4}, kF32);
    return Case{bad, TensorAt(bad, 0, 5).name + 4, WithTensor("blk.\xc3\xbf", {4}, kF32)};
  });
  add("ControlByte", RuleId::kTensorNameEncoding, [] {
    BuiltFile bad = WithTensor("a\x1b[0m", {4}, kF32);
    return Case{bad, TensorAt(bad, 0, 5).name + 1, WithTensor("a[0m", {4}, kF32)};
  });
  add("SameName", RuleId::kDuplicateTensorName, [] {
    BuiltFile bad = TwoTensors({}, {}, "a");
    return Case{bad, bad.tensor_info_offsets[1], TwoTensors({}, {}, "b")};
  });
  add("EqualAsCStrings", RuleId::kDuplicateTensorName, [] {
    BuiltFile bad = TwoTensors({}, {}, std::string("a\0b", 3));
    return Case{bad, bad.tensor_info_offsets[1], TwoTensors({}, {}, "ab")};
  });
  add("FiveDims", RuleId::kTooManyDims, [] {
    BuiltFile bad = WithTensor("t", {4, 1, 1, 1, 1}, kF32);
    return Case{bad, TensorAt(bad, 0, 1).n_dims, WithTensor("t", {4, 1, 1, 1}, kF32)};
  });
  add("MinusOne", RuleId::kNegativeDim, [] {
    BuiltFile bad = WithTensor("t", {4}, kF32, {.written_dims = std::vector<uint64_t>{UINT64_MAX}});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {4}, kF32)};
  });
  add("SecondDimInt64Min", RuleId::kNegativeDim, [] {
    BuiltFile bad = WithTensor("t", {4, 1}, kF32, {.written_dims = std::vector<uint64_t>{4, uint64_t{1} << 63}});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {4, 1}, kF32)};
  });
  add("FirstUnknownType", RuleId::kUnknownGgmlType, [] {
    BuiltFile bad = WithTensor("t", {32}, kFirstUnknownGgmlType, {.byte_size = 64});
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {32}, /*MXFP4*/ 39)};
  });
  add("TypeU32Max", RuleId::kUnknownGgmlType, [] {
    BuiltFile bad = WithTensor("t", {32}, UINT32_MAX, {.byte_size = 64});
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {32}, kQ4_0)};
  });
  add("Type4", RuleId::kRemovedGgmlType, [] {
    BuiltFile bad = WithTensor("t", {32}, 4, {.byte_size = 18});
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {32}, kQ4_0)};
  });
  add("Type31", RuleId::kRemovedGgmlType, [] {
    BuiltFile bad = WithTensor("t", {32}, 31, {.byte_size = 18});
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {32}, kQ4_0)};
  });
  add("Q8_1", RuleId::kIntermediateGgmlType, [] {
    BuiltFile bad = WithTensor("t", {32}, kQ8_1);
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {32}, /*Q8_0*/ 8)};
  });
  add("Q8_K", RuleId::kIntermediateGgmlType, [] {
    BuiltFile bad = WithTensor("t", {256}, kQ8_K);
    return Case{bad, TensorAt(bad, 0, 1).type, WithTensor("t", {256}, /*Q6_K*/ 14)};
  });
  add("Q4_0Ne0_33", RuleId::kRowNotBlockMultiple, [] {
    BuiltFile bad = WithTensor("t", {33, 2}, kQ4_0);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {32, 2}, kQ4_0)};
  });
  add("ElementCount", RuleId::kTensorSizeOverflow, [] {
    BuiltFile bad = WithTensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, kF32, {.byte_size = 64});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {4, 4}, kF32)};
  });
  add("ElementCountAboveInt64", RuleId::kTensorSizeOverflow, [] {
    BuiltFile bad = WithTensor("t", {uint64_t{1} << 32, uint64_t{1} << 31}, kI8, {.byte_size = 64});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {64, 1}, kI8)};
  });
  add("StridesPastAZeroDim", RuleId::kTensorSizeOverflow, [] {
    // 0 elements, but ggml's strides multiply the other dims: 2^40 * 2^40.
    BuiltFile bad = WithTensor("t", {0, uint64_t{1} << 40, uint64_t{1} << 40}, kI8, {.byte_size = 0});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {64, 2, 1}, kI8)};
  });
  add("Ne1Zero", RuleId::kZeroDim, [] {
    BuiltFile bad = WithTensor("t", {8, 0}, kF32);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {8, 1}, kF32)};
  });
  add("Ne0Zero", RuleId::kZeroDim, [] {
    BuiltFile bad = WithTensor("t", {0, 4}, kF32);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {1, 4}, kF32)};
  });
  add("Ne3Zero", RuleId::kZeroDim, [] {
    BuiltFile bad = WithTensor("t", {2, 2, 2, 0}, kF32);
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {2, 2, 2, 1}, kF32)};
  });
  add("ByteSize", RuleId::kTensorSizeOverflow, [] {
    BuiltFile bad = WithTensor("t", {uint64_t{1} << 62}, kF32, {.byte_size = 64});
    return Case{bad, bad.tensor_info_offsets[0], WithTensor("t", {16}, kF32)};
  });

  // 6xxx data layout.
  add("Offset33", RuleId::kTensorMisaligned, [] {
    BuiltFile bad = TwoTensors({}, {.offset = 33});
    return Case{bad, TensorAt(bad, 1, 1).offset_field, TwoTensors()};
  });
  add("DataTooShort", RuleId::kTensorOutOfBounds, [] {
    // b is 16 bytes but the file ends 8 bytes after its start (no end pad).
    BuiltFile cut = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32, {.byte_size = 8})
                        .set_pad_end(false)
                        .Build();
    return Case{cut, TensorAt(cut, 1, 1).offset_field, TwoTensors()};
  });
  add("OffsetWraps", RuleId::kTensorOutOfBounds, [] {
    BuiltFile bad = TwoTensors({}, {.offset = UINT64_MAX - 31});
    return Case{bad, TensorAt(bad, 1, 1).offset_field, TwoTensors()};
  });
  add("SameOffset", RuleId::kTensorOverlap, [] {
    BuiltFile bad = TwoTensors({}, {.offset = 0});
    return Case{bad, TensorAt(bad, 1, 1).offset_field, TwoTensors()};
  });
  add("UnusedBytes", RuleId::kTensorGap, [] {
    // a is 16 bytes, padded to 32; 40 reserved (zero) bytes put b at 64.
    BuiltFile bad = TwoTensors({.byte_size = 40, .fill = DataFill::kZeros});
    return Case{bad, bad.data_offset + 32, TwoTensors({.fill = DataFill::kZeros})};
  });
  add("SwappedOffsets", RuleId::kTensorOutOfOrder, [] {
    BuiltFile bad = TwoTensors({.offset = 32}, {.offset = 0});
    return Case{bad, TensorAt(bad, 1, 1).offset_field, TwoTensors()};
  });
  // The first and the last byte of each kind of padding: the checked
  // ranges must be exactly the padding, no byte more or less.
  struct Pad {
    const char* name;
    std::function<uint64_t(const BuiltFile&)> at;
  };
  const Pad pads[] = {
      {"HeaderPaddingFirst", [](const BuiltFile& f) { return f.header_end; }},
      {"HeaderPaddingLast", [](const BuiltFile& f) { return f.data_offset - 1; }},
      {"InterTensorPaddingFirst", [](const BuiltFile& f) { return f.tensor_data_offsets[0] + 16; }},
      {"InterTensorPaddingLast", [](const BuiltFile& f) { return f.tensor_data_offsets[1] - 1; }},
      {"FinalPaddingFirst", [](const BuiltFile& f) { return f.tensor_data_offsets[1] + 16; }},
      {"FinalPaddingLast", [](const BuiltFile& f) { return f.file_size - 1; }},
  };
  for (const Pad& pad : pads) {
    add(pad.name, RuleId::kNonZeroPadding, [at = pad.at] {
      BuiltFile good = TwoTensors();
      EXPECT_LT(good.header_end, good.data_offset);
      EXPECT_EQ(good.bytes[at(good)], 0);
      return Case{Patched(good, at(good), 0x80), at(good), good};
    });
  }
  add("AfterPaddedData", RuleId::kTrailingBytes, [] {
    BuiltFile good = TwoTensors();
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32)
                        .set_trailing_bytes({'P', 'K', 3, 4})
                        .Build();
    return Case{bad, good.file_size, good};
  });
  add("OneByte", RuleId::kTrailingBytes, [] {
    BuiltFile good = TwoTensors();
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32)
                        .set_trailing_bytes({0})
                        .Build();
    return Case{bad, good.file_size, good};
  });
  add("NoTensors", RuleId::kTrailingBytes, [] {
    BuiltFile good = GgufBuilder().AddKv("general.name", GgufValue::Str("x")).set_pad_header(true).Build();
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.name", GgufValue::Str("x"))
                        .set_pad_header(true)
                        .set_trailing_bytes({0, 0, 0, 1})
                        .Build();
    return Case{bad, good.data_offset, good};
  });
  add("LastTensorUnpadded", RuleId::kUnpaddedEnd, [] {
    // b's 16 bytes end the file, 16 short of its padded end. Judged under
    // --profile gguf only: llama.cpp loads the file (GgmlParity below).
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32)
                        .set_pad_end(false)
                        .Build();
    Policy gguf = testing::StructuralPolicy();
    gguf.profile = Profile::kGguf;
    return Case{bad, bad.file_size, TwoTensors(), gguf};
  });
  add("EndsAtDataOffset", RuleId::kMissingTensorData, [] {
    BuiltFile good = TwoTensors();
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32)
                        .set_omit_tensor_data(true)
                        .Build();
    return Case{bad, good.data_offset, good};
  });
  add("EndsAtInfos", RuleId::kMissingTensorData, [] {
    BuiltFile good = TwoTensors();
    BuiltFile bad = GgufBuilder()
                        .AddKv("general.architecture", GgufValue::Str("llama"))
                        .AddTensor("a", {4}, kF32)
                        .AddTensor("b", {4}, kF32)
                        .set_truncate_to(good.header_end)
                        .Build();
    return Case{bad, good.header_end, good};
  });
  return c;
}

const std::vector<RuleCase>& AllCases() {
  static const std::vector<RuleCase>* cases = new std::vector<RuleCase>(Cases());
  return *cases;
}

class RuleCaseTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleCaseTest, FiresAtTheOffsetAndNotOnTheNeighbour) {
  const RuleCase& rc = GetParam();
  const Case c = rc.make();
  const Severity severity = c.policy.SeverityOf(rc.rule);

  const Report bad = Validate(c.bad, c.policy);
  ASSERT_TRUE(HasFinding(bad, rc.rule, c.offset));
  for (const Finding& f : bad.findings) {
    if (f.rule == rc.rule) {
      EXPECT_EQ(f.severity, severity) << f.message;
    }
  }
  // An error makes the file invalid; each warning or note case is built so
  // that it is the only thing wrong, and must leave the file valid.
  EXPECT_EQ(bad.valid(), severity != Severity::kError) << Describe(bad);

  const Report good = Validate(c.good, c.policy);
  EXPECT_TRUE(LacksRule(good, rc.rule));
  EXPECT_TRUE(IsValid(good));

  // The growing-prefix path (small first read) finds the same things.
  for (const BuiltFile* f : {&c.bad, &c.good}) {
    std::optional<ValidatedFile> via_source = testing::ValidateThroughSource(f->bytes, c.policy);
    ASSERT_TRUE(via_source.has_value());
    EXPECT_EQ(RulesAt(via_source->report()), RulesAt(Validate(*f, c.policy))) << (f == &c.bad ? "bad" : "good");
    EXPECT_EQ(via_source->report().valid(), Validate(*f, c.policy).valid());
  }

  // A default-policy warning is an error under the strict policy.
  if (c.policy.name == "default" && severity != Severity::kError &&
      FindRule(rc.rule)->strict_severity == Severity::kError) {
    const Report strict = Validate(c.bad, testing::StructuralStrictPolicy());
    EXPECT_TRUE(HasFinding(strict, rc.rule, c.offset));
    EXPECT_FALSE(strict.valid()) << Describe(strict);
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleCaseTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<RuleCase>& p) { return p.param.name; });

TEST(RuleCaseCoverageTest, EveryStructuralRuleHasACase) {
  std::set<RuleId> covered;
  for (const RuleCase& c : AllCases()) covered.insert(c.rule);
  int structural = 0;
  for (const RuleInfo& r : AllRules()) {
    if (!testing::IsStructuralRule(r.id)) continue;
    ++structural;
    EXPECT_TRUE(covered.count(r.id)) << RuleCode(r.id) << " " << r.name << " has no case";
  }
  EXPECT_GE(structural, 48);
}

// --- Beyond one finding per case ---

// Every position of a bad byte among short strings (the whole array checked
// in bulk), and the same with long strings (>= 128 bytes) placed before,
// right before and after the bad element (runs checked in bulk between
// them): the same element and byte every time, in both byte orders with v3's
// u64 lengths and v1's u32 (each a separate instantiation of the walk). A bad
// byte inside a long string is found too.
TEST(StringArrayPathsTest, FastAndSlowPathsReportTheSameByte) {
  const std::vector<std::string> base = {"", "a", "bc", "def", "ghij", "klmno", "p"};
  const std::string long_string(300, 's');
  struct Variant {
    bool big_endian;
    uint32_t version;
  };
  for (Variant v : {Variant{false, 3}, Variant{true, 3}, Variant{false, 1}, Variant{true, 1}}) {
    const uint64_t length_size = v.version == 1 ? 4 : 8;
    auto check = [&](const std::vector<std::string>& strings, size_t bad_elem, size_t bad_pos, RuleId rule) {
      BuiltFile f = GgufBuilder()
                        .set_version(v.version)
                        .set_big_endian(v.big_endian)
                        .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(strings))
                        .Build();
      const Report r = Validate(f, testing::V1AllowedPolicy());
      const uint64_t want = StringArrayElement(KvAt(f, 0, length_size), strings, bad_elem) + bad_pos;
      EXPECT_TRUE(HasFinding(r, rule, want))
          << "element " << bad_elem << " of " << strings.size() << ", v" << v.version << (v.big_endian ? " BE" : " LE");
      EXPECT_EQ(testing::CountRule(r, rule), 1u) << Describe(r);
      EXPECT_EQ(r.findings.size() - testing::CountSeverity(r, Severity::kInfo), 1u) << Describe(r);
    };
    for (size_t bad_elem = 1; bad_elem < base.size(); ++bad_elem) {
      for (const auto& [bad_byte, rule] : {std::pair<char, RuleId>{'\xff', RuleId::kInvalidUtf8},
                                           std::pair<char, RuleId>{'\0', RuleId::kNulInString}}) {
        std::vector<std::string> fast = base;
        fast[bad_elem].back() = bad_byte;
        const size_t pos = fast[bad_elem].size() - 1;
        check(fast, bad_elem, pos, rule);

        std::vector<std::string> long_after = fast;
        long_after.push_back(long_string);
        check(long_after, bad_elem, pos, rule);

        std::vector<std::string> long_first = fast;
        long_first.insert(long_first.begin(), long_string);
        check(long_first, bad_elem + 1, pos, rule);

        std::vector<std::string> long_before = fast;
        long_before.insert(long_before.begin() + static_cast<std::ptrdiff_t>(bad_elem), long_string);
        check(long_before, bad_elem + 1, pos, rule);

        std::vector<std::string> bad_long = base;
        bad_long.insert(bad_long.begin() + static_cast<std::ptrdiff_t>(bad_elem), long_string);
        bad_long[bad_elem][200] = bad_byte;
        check(bad_long, bad_elem, 200, rule);
      }
    }
  }
}

// The default grammar accepts what real files use (capitals, '-' as in
// command-r); the strict policy holds keys to the spec's lower_snake_case.
TEST(KeyGrammarTest, LenientByDefaultStrictOnRequest) {
  for (const char* key : {"general.Name", "command-r.context_length", "tokenizer.ggml.seperator_token_id"}) {
    BuiltFile f = WithKv(key, GgufValue::U32(1));
    EXPECT_TRUE(LacksRule(Validate(f), RuleId::kKeyGrammar)) << key;
    EXPECT_TRUE(IsValid(Validate(f))) << key;
  }
  for (const char* key : {"general.Name", "command-r.context_length"}) {
    BuiltFile f = WithKv(key, GgufValue::U32(1));
    const Report r = Validate(f, testing::StructuralStrictPolicy());
    EXPECT_TRUE(testing::HasRule(r, RuleId::kKeyGrammar)) << key;
    EXPECT_FALSE(r.valid());
  }
  BuiltFile spec = WithKv("tokenizer.ggml.seperator_token_id", GgufValue::U32(1));
  EXPECT_TRUE(IsValid(Validate(spec, testing::StructuralStrictPolicy())));
  // "{arch}." keys are built from general.architecture as spelled: a '-' in
  // the name is no grammar error there, and only there.
  BuiltFile dashed = GgufBuilder()
                         .AddKv("general.architecture", GgufValue::Str("command-r"))
                         .AddKv("command-r.context_length", GgufValue::U32(8))
                         .AddKv("gpt-oss.context_length", GgufValue::U32(8))
                         .AddKv("command-r.Rope.freq_base", GgufValue::F32(1.0f))
                         .Build();
  const Report r = Validate(dashed, testing::StructuralStrictPolicy());
  EXPECT_TRUE(FindingsAre(r, {{RuleId::kKeyGrammar, KvAt(dashed, 2).key + 3},
                              {RuleId::kKeyGrammar, KvAt(dashed, 3).key + 10}}))
      << Describe(r);
}

// Many bad elements: each is reported, up to the per-rule cap; the rest are
// counted, and they still make the file invalid.
TEST(FindingSinkTest, CapsListedFindingsButCountsThemAll) {
  std::vector<GgufValue> bools;
  for (int i = 0; i < 150; ++i) bools.push_back(GgufValue::BoolByte(2));
  BuiltFile f = WithValue(GgufValue::Array(Vt::kBool, bools));
  const Report r = Validate(f);
  EXPECT_EQ(testing::CountRule(r, RuleId::kInvalidBool), 100u);
  ASSERT_EQ(r.suppressed.count(RuleId::kInvalidBool), 1u);
  EXPECT_EQ(r.suppressed.at(RuleId::kInvalidBool), 50u);
  EXPECT_TRUE(HasFinding(r, RuleId::kInvalidBool, KvAt(f, 1).array_elements() + 99));
  EXPECT_FALSE(r.valid());

  Policy none = testing::StructuralPolicy();
  none.limits.max_findings_per_rule = 0;
  const Report silent = Validate(f, none);
  EXPECT_TRUE(silent.findings.empty()) << Describe(silent);
  EXPECT_EQ(silent.suppressed.at(RuleId::kInvalidBool), 150u);
  EXPECT_FALSE(silent.valid());
}

TEST(PolicyEffectsTest, DisabledRuleIsNeitherListedNorCounted) {
  BuiltFile f = WithValue(GgufValue::BoolByte(2));
  Policy p = testing::StructuralPolicy();
  p.disabled[static_cast<uint16_t>(RuleId::kInvalidBool)] = true;
  const Report r = Validate(f, p);
  EXPECT_TRUE(LacksRule(r, RuleId::kInvalidBool));
  EXPECT_TRUE(r.suppressed.empty());
  EXPECT_TRUE(IsValid(r));
}

TEST(PolicyEffectsTest, SeverityOverrideChangesTheVerdict) {
  BuiltFile f = WithValue(GgufValue::Str(std::string("a\0b", 3)));
  Policy p = testing::StructuralPolicy();
  EXPECT_TRUE(IsValid(Validate(f, p)));
  p.severity_override[static_cast<uint16_t>(RuleId::kNulInString)] = Severity::kError;
  const Report r = Validate(f, p);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(HasFinding(r, RuleId::kNulInString, KvAt(f, 1).string_bytes() + 1));
}

TEST(ZeroTensorFilesTest, EndAtTheInfosOrAtThePaddedEnd) {
  for (bool with_kv : {false, true}) {
    for (bool pad : {false, true}) {
      GgufBuilder b;
      if (with_kv) b.AddKv("general.name", GgufValue::Str("no tensors"));
      BuiltFile f = b.set_pad_header(pad).Build();
      EXPECT_EQ(f.file_size, pad ? f.data_offset : f.header_end);
      const Report r = Validate(f);
      EXPECT_TRUE(IsValid(r)) << "kv " << with_kv << " pad " << pad;
      EXPECT_TRUE(r.findings.empty()) << Describe(r);
      EXPECT_EQ(r.header.infos_end, f.header_end);
      EXPECT_EQ(r.header.data_offset, (f.header_end + 31) / 32 * 32);
    }
  }
}

TEST(ZeroTensorFilesTest, AnythingPastThePaddedEndIsTrailing) {
  BuiltFile f = GgufBuilder().AddKv("general.name", GgufValue::Str("x")).set_pad_header(true).Build();
  std::vector<uint8_t> bytes = f.bytes;
  bytes.resize(bytes.size() + 64, 0);  // zeros are still bytes after the end
  const Report r = ValidateBytes(bytes, testing::StructuralPolicy());
  EXPECT_TRUE(testing::FindingsAre(r, {{RuleId::kTrailingBytes, f.data_offset}}));
}

TEST(DataLayoutTest, ZeroSizedTensorNeedsNoDataButIsAnError) {
  // GG5012 (ggml divides by the dims), and nothing else: it holds no bytes,
  // so the file may end at the data section.
  BuiltFile f = GgufBuilder().AddTensor("empty", {0, 8}, kF32).Build();
  EXPECT_EQ(f.file_size, f.data_offset);
  const Report r = Validate(f);
  EXPECT_TRUE(FindingsAre(r, {{RuleId::kZeroDim, f.tensor_info_offsets[0]}})) << Describe(r);
  ASSERT_EQ(r.header.tensors.size(), 1u);
  EXPECT_TRUE(r.header.tensors[0].size_known);
  EXPECT_EQ(r.header.tensors[0].byte_size, 0u);
}

TEST(DataLayoutTest, ValidFileFillsInSizesAndAbsoluteOffsets) {
  BuiltFile f = GgufBuilder()
                    .AddAlignmentKv(64)
                    .AddTensor("a", {3}, kF32)
                    .AddTensor("b", {64, 3}, kQ4_0)
                    .AddTensor("c", {5}, testing::kF16)
                    .Build();
  const Report r = Validate(f);
  ASSERT_TRUE(IsValid(r));
  EXPECT_TRUE(r.findings.empty()) << Describe(r);
  EXPECT_EQ(r.header.alignment, 64u);
  EXPECT_EQ(r.header.data_offset, f.data_offset);
  EXPECT_EQ(f.data_offset % 64, 0u);
  ASSERT_EQ(r.header.tensors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const TensorInfo& t = r.header.tensors[i];
    EXPECT_TRUE(t.size_known);
    EXPECT_EQ(t.byte_size, f.tensor_sizes[i]) << i;
    EXPECT_TRUE(t.absolute_known);
    EXPECT_EQ(t.absolute_offset, f.tensor_data_offsets[i]) << i;
    EXPECT_EQ(t.absolute_offset % 64, 0u);
  }
  const std::array<uint64_t, kMaxDims> dims = r.header.tensors[1].dims();  // read back from the buffer
  EXPECT_EQ(dims[0] * dims[1] * dims[2] * dims[3], 192u);
}

TEST(DataLayoutTest, MisalignedDataWithAlignment64) {
  BuiltFile f =
      GgufBuilder().AddAlignmentKv(64).AddTensor("a", {3}, kF32).AddTensor("b", {3}, kF32, {.offset = 32}).Build();
  const Report r = Validate(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorMisaligned, TensorAt(f, 1, 1).offset_field));
  EXPECT_FALSE(r.valid());
}

TEST(CanonicalKeyTest, FoldsWhatOtherReadersFold) {
  EXPECT_EQ(CanonicalKey("general.name"), "general.name");
  EXPECT_EQ(CanonicalKey(std::string_view("general.name\0x", 14)), "general.name");
  EXPECT_EQ(CanonicalKey(" \tGeneral.NAME \r\n"), "general.name");
  EXPECT_EQ(CanonicalKey(""), "");
  EXPECT_EQ(CanonicalKey(std::string_view("\0abc", 4)), "");
}

// --- ggml parity (docs/ggml-parity.md) ---
//
// Each way ggml's GGUF reader (gguf_init_from_reader @067d44f6, formerly
// gguf_init_from_file_impl @327e2ca6) refuses a file, in its source order,
// with the rule that must report it as an error under the real default
// policy (every rule on, as a user runs it) in both profiles. The names are
// the ones docs/ggml-parity.md cites.
struct GgmlRefusal {
  std::string name;
  RuleId rule;
  std::function<BuiltFile()> make;
  // Refused only by ggml's no_alloc=false reader, which llama.cpp never
  // uses: an error under --profile gguf, absent under llama.cpp.
  bool gguf_profile_only = false;
};

void PrintTo(const GgmlRefusal& r, std::ostream* os) { *os << r.name; }

std::vector<GgmlRefusal> GgmlRefusals() {
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  constexpr uint32_t kF64 = 28;
  const auto with_tensors = [](std::vector<std::pair<std::vector<uint64_t>, TensorOptions>> tensors, uint32_t type) {
    GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("llama"));
    for (size_t i = 0; i < tensors.size(); ++i) {
      b.AddTensor("t" + std::to_string(i), tensors[i].first, type, tensors[i].second);
    }
    return b;
  };
  const auto with_alignment = [](GgufValue a) {
    return GgufBuilder().AddKv("general.alignment", std::move(a)).AddTensor("t", {8}, kF32).Build();
  };
  std::vector<GgmlRefusal> r = {
      // Magic and version.
      {"MagicCut", RuleId::kTruncated, [] { return GgufBuilder().set_truncate_to(3).Build(); }},
      {"MagicWrong", RuleId::kBadMagic, [] { return GgufBuilder().set_magic("GGUX").Build(); }},
      {"VersionCut", RuleId::kTruncated, [] { return GgufBuilder().set_truncate_to(6).Build(); }},
      {"Version0", RuleId::kUnsupportedVersion, [] { return GgufBuilder().set_version(0).Build(); }},
      // Low 16 bits zero, and no version in the other byte order either.
      {"VersionLow16BitsZero", RuleId::kUnsupportedVersion,
       [] { return GgufBuilder().set_version(0x00040000).Build(); }},
      {"Version1", RuleId::kVersion1, [] { return GgufBuilder().set_version(1).Build(); }},
      {"Version4", RuleId::kUnsupportedVersion, [] { return GgufBuilder().set_version(4).Build(); }},
      // Counts, negative as int64.
      {"TensorCountNegative", RuleId::kTensorCountLimit,
       [] { return GgufBuilder().set_tensor_count(uint64_t{1} << 63).Build(); }},
      {"KvCountNegative", RuleId::kKvCountLimit, [] { return GgufBuilder().set_kv_count(uint64_t{1} << 63).Build(); }},
      // Key-value pairs.
      {"KeyLongerThan1GiB", RuleId::kStringLengthLimit,
       [] {
         return GgufBuilder().AddKvWithKeyLength("general.name", (uint64_t{1} << 30) + 1, GgufValue::U8(1)).Build();
       }},
      {"KeyPastTheEnd", RuleId::kTruncated,
       [] { return GgufBuilder().AddKvWithKeyLength("general.name", 100000, GgufValue::U8(1)).Build(); }},
      {"EmptyKey", RuleId::kEmptyKey, [] { return WithKv("", GgufValue::U8(1)); }},
      {"DuplicateKey", RuleId::kDuplicateKey, [] { return WithKeys("general.name", "general.name"); }},
      {"ArrayLongerThan2Pow30", RuleId::kArrayLengthLimit,
       [] { return WithValue(GgufValue::ArrayWithCount(Vt::kUint8, {}, (uint64_t{1} << 30) + 1)); }},
      {"ArrayPastTheEnd", RuleId::kTruncated,
       [] { return WithValue(GgufValue::ArrayWithCount(Vt::kUint32, {}, 100000)); }},
      {"StringArrayPastTheEnd", RuleId::kTruncated,
       [] { return WithValue(GgufValue::ArrayWithCount(Vt::kString, {}, 100000)); }},
      {"StringPastTheEnd", RuleId::kTruncated, [] { return WithValue(GgufValue::StrWithLength("ab", 100000)); }},
      {"ValueType13", RuleId::kInvalidValueType, [] { return WithValue(GgufValue::Raw(13, {})); }},
      {"ArrayElementType13", RuleId::kInvalidArrayType,
       [] { return WithValue(GgufValue::ArrayWithElemType(13, {})); }},
      {"ArrayOfArrays", RuleId::kNestedArray,
       [] { return WithValue(GgufValue::Array(Vt::kArray, {GgufValue::U8Array({1})})); }},
      {"ValueCut", RuleId::kTruncated,
       [] {
         BuiltFile good = WithValue(GgufValue::U64(1));
         return WithKvBuilder("test.value", GgufValue::U64(1)).set_truncate_to(KvAt(good, 1).payload + 3).Build();
       }},
      // general.alignment.
      {"AlignmentU64", RuleId::kAlignmentType, [with_alignment] { return with_alignment(GgufValue::U64(32)); }},
      {"AlignmentU32Array", RuleId::kAlignmentType,
       [with_alignment] { return with_alignment(GgufValue::U32Array({32})); }},
      {"AlignmentZero", RuleId::kAlignmentNotPowerOfTwo,
       [with_alignment] { return with_alignment(GgufValue::U32(0)); }},
      {"AlignmentFortyEight", RuleId::kAlignmentNotPowerOfTwo,
       [with_alignment] { return with_alignment(GgufValue::U32(48)); }},
      // Tensor infos.
      {"TensorNameLongerThan1GiB", RuleId::kStringLengthLimit,
       [] { return WithTensor("t", {4}, kF32, {.declared_name_length = (uint64_t{1} << 30) + 1}); }},
      {"TensorName64Bytes", RuleId::kTensorNameTooLong, [] { return WithTensor(std::string(64, 'n'), {4}, kF32); }},
      {"TensorName64BytesWithNul", RuleId::kTensorNameTooLong,
       [] { return WithTensor("a" + std::string(1, '\0') + std::string(62, 'n'), {4}, kF32); }},
      {"DuplicateTensorName", RuleId::kDuplicateTensorName, [] { return TwoTensors({}, {}, "a"); }},
      {"DuplicateTensorNameAsCString", RuleId::kDuplicateTensorName,
       [] { return TwoTensors({}, {}, std::string("a\0b", 3)); }},
      {"FiveDims", RuleId::kTooManyDims, [] { return WithTensor("t", {4, 1, 1, 1, 1}, kF32); }},
      {"NegativeDim", RuleId::kNegativeDim,
       [] { return WithTensor("t", {4, 1}, kF32, {.written_dims = std::vector<uint64_t>{4, uint64_t{1} << 63}}); }},
      {"ElementCountInt64Max", RuleId::kTensorSizeOverflow,
       [] { return WithTensor("t", {kInt64Max}, kI8, {.byte_size = 64}); }},
      {"ElementCountJustBelowInt64Max", RuleId::kTensorSizeOverflow,
       [] { return WithTensor("t", {kInt64Max / 2, 2}, kI8, {.byte_size = 64}); }},
      {"ElementCountWrapsToSmall", RuleId::kTensorSizeOverflow,
       [] { return WithTensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, kF32, {.byte_size = 64}); }},
      {"TypeIdPastTheTable", RuleId::kUnknownGgmlType,
       [] { return WithTensor("t", {32}, kFirstUnknownGgmlType, {.byte_size = 64}); }},
      {"TypeIdNegative", RuleId::kUnknownGgmlType, [] { return WithTensor("t", {32}, UINT32_MAX, {.byte_size = 64}); }},
      {"TypeBlockSize0", RuleId::kRemovedGgmlType, [] { return WithTensor("t", {32}, 4, {.byte_size = 18}); }},
      {"RowNotBlockMultiple", RuleId::kRowNotBlockMultiple, [] { return WithTensor("t", {33, 2}, kQ4_0); }},
      {"ByteSizePastSizeMax", RuleId::kTensorSizeOverflow,
       [] { return WithTensor("t", {uint64_t{1} << 61}, kF64, {.byte_size = 64}); }},
      {"OffsetCut", RuleId::kTruncated,
       [] {
         BuiltFile good = WithTensor("t", {4}, kF32);
         return GgufBuilder()
             .AddKv("general.architecture", GgufValue::Str("llama"))
             .AddTensor("t", {4}, kF32)
             .set_truncate_to(TensorAt(good, 0, 1).offset_field + 3)
             .Build();
       }},
      // The data section and the offsets.
      {"DataSectionPastTheEnd", RuleId::kMissingTensorData,
       [] {
         BuiltFile good = TwoTensors();
         return GgufBuilder()
             .AddKv("general.architecture", GgufValue::Str("llama"))
             .AddTensor("a", {4}, kF32)
             .AddTensor("b", {4}, kF32)
             .set_truncate_to(good.header_end + 1)
             .Build();
       }},
      {"OffsetNotAligned", RuleId::kTensorMisaligned, [] { return TwoTensors({}, {.offset = 33}); }},
      {"OffsetAfterAGap", RuleId::kTensorGap,
       [] { return TwoTensors({.byte_size = 40, .fill = DataFill::kZeros}); }},
      {"FirstOffsetNotZero", RuleId::kTensorGap,
       [with_tensors] { return with_tensors({{{4}, {.offset = 32, .byte_size = 48}}}, kF32).Build(); }},
      {"OffsetOverlaps", RuleId::kTensorOverlap, [] { return TwoTensors({}, {.offset = 0}); }},
      {"OffsetsOutOfOrder", RuleId::kTensorOutOfOrder, [] { return TwoTensors({.offset = 32}, {.offset = 0}); }},
      // Offsets that follow the running size until it passes 2^64: each
      // lies past any file first.
      {"DataSizeOverflow", RuleId::kTensorOutOfBounds,
       [with_tensors] {
         const uint64_t q = uint64_t{1} << 62;
         return with_tensors({{{q}, {.offset = 0, .byte_size = 32}},
                              {{q}, {.offset = q, .byte_size = 32}},
                              {{q}, {.offset = 2 * q, .byte_size = 32}},
                              {{q}, {.offset = 3 * q, .byte_size = 32}}},
                             kI8)
             .Build();
       }},
      // no_alloc=false: the data section read whole.
      {"DataPastTheEnd", RuleId::kTensorOutOfBounds,
       [with_tensors] {
         return with_tensors({{{4}, {}}, {{4}, {.byte_size = 8}}}, kF32).set_pad_end(false).Build();
       }},
      {"LastPaddingPastTheEnd", RuleId::kUnpaddedEnd,
       [with_tensors] { return with_tensors({{{4}, {}}, {{4}, {}}}, kF32).set_pad_end(false).Build(); }, true},
      // gguf_init_from_file_impl @327e2ca6 divides INT64_MAX by ne[1..3]
      // unguarded: SIGFPE (fixed in @067d44f6, which accepts the tensor).
      {"ZeroDimDividesByZero", RuleId::kZeroDim, [] { return WithTensor("t", {8, 0}, kF32); }},
  };
  return r;
}

class GgmlRefusalTest : public ::testing::TestWithParam<GgmlRefusal> {};

TEST_P(GgmlRefusalTest, IsAnErrorUnderTheDefaultPolicy) {
  const GgmlRefusal& refusal = GetParam();
  const BuiltFile f = refusal.make();
  for (Profile profile : {Profile::kLlamaCpp, Profile::kGguf}) {
    Policy policy = DefaultPolicy();
    policy.profile = profile;
    const Report report = Validate(f, policy);
    if (refusal.gguf_profile_only && profile == Profile::kLlamaCpp) {
      EXPECT_TRUE(LacksRule(report, refusal.rule)) << Describe(report);
      continue;
    }
    bool error = false;
    for (const Finding& finding : report.findings) {
      error = error || (finding.rule == refusal.rule && finding.severity == Severity::kError);
    }
    EXPECT_TRUE(error) << RuleCode(refusal.rule) << " under " << ProfileName(profile) << ": " << Describe(report);
    EXPECT_FALSE(report.valid()) << ProfileName(profile);
  }
}

// Issue 29's path: --header-only --file-size N with a huge N, as a gate
// that fetched only the header of a remote file runs it. Every refusal that
// the header decides (all but where the file ends) is an error from the
// header alone, whatever the size claimed.
TEST_P(GgmlRefusalTest, TheHeaderAloneDecidesWhateverTheFileSize) {
  const GgmlRefusal& refusal = GetParam();
  switch (refusal.rule) {
    case RuleId::kTruncated:           // the file's end, which --file-size moves
    case RuleId::kMissingTensorData:
    case RuleId::kTensorOutOfBounds:
    case RuleId::kUnpaddedEnd:
      return;
    default:
      break;
  }
  const BuiltFile f = refusal.make();
  Policy policy = DefaultPolicy();
  policy.profile = Profile::kGguf;
  MemoryStream stream(f.bytes);
  StreamOptions options;
  options.header_only = true;
  options.file_size = uint64_t{9000000000000000000};
  const absl::StatusOr<ValidatedFile> v = ValidateStream(stream, policy, options);
  ASSERT_TRUE(v.ok()) << v.status();
  bool error = false;
  for (const Finding& finding : v->report().findings) {
    error = error || (finding.rule == refusal.rule && finding.severity == Severity::kError);
  }
  EXPECT_TRUE(error) << RuleCode(refusal.rule) << ": " << Describe(v->report());
  EXPECT_EQ(v->report().verdict(), Report::Verdict::kInvalid);
}

INSTANTIATE_TEST_SUITE_P(GgmlParity, GgmlRefusalTest, ::testing::ValuesIn(GgmlRefusals()),
                         [](const ::testing::TestParamInfo<GgmlRefusal>& p) { return p.param.name; });

}  // namespace
}  // namespace ggufguard
