// --deep (issue 14): the tensor data kernels against ggml's rules, and the
// deep check through the whole validator.
//
//   - the kernels' table (deep/data_check.cc) against the type table and
//     against an independent reference of ggml_validate_row_data
//     (tests/support/ggml_row_reference.h: ggml-common.h's structs spelled
//     out, values decoded to double and judged by std::isnan/std::isinf);
//   - parity, per type id: clean random units with near misses, then NaN,
//     +inf and -inf (MXFP4: 0xff; IQ1_M: an assembled scale) planted in each
//     checked field at the first and last unit and on both sides of the 1 KiB
//     vector batch and of the 256-unit scalar batch, in both byte orders:
//     CheckDataUnits (AVX2 where the CPU has it) and CheckDataUnitsScalar
//     count exactly the reference's bad values and list exactly its first
//     ones, in order, whatever the listing cap and however the units are
//     split;
//   - the validator: GG6009 at the planted field's file offset with a message
//     naming tensor, unit and value; the same findings in memory, from a
//     file (1 and 3 jobs, small chunks) and through a stream (reads of 1 to
//     4096 bytes); nothing without --deep or when the header has an error;
//     max_deep_findings_per_tensor and max_deep_bytes (GG6010); Q8_1 (GG6011).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/deep/data_check.h"
#include "ggufguard/deep/deep.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/io/source.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/ggml_row_reference.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace ref = testing::row_reference;
using testing::BuiltFile;
using testing::DataFill;
using testing::Describe;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::TensorOptions;

// --- The table ---

TEST(DeepDataTableTest, UnitBytesAreTheTypeTablesTypeSize) {
  for (const GgmlTypeInfo& t : AllGgmlTypes()) {
    const DataCheck& c = DataCheckFor(t.id);
    if (t.status == GgmlTypeStatus::kRemoved) {
      EXPECT_EQ(c.kind, DataCheckKind::kUnknown) << t.name << " is removed: nothing to plan";
      continue;
    }
    EXPECT_NE(c.kind, DataCheckKind::kUnknown) << t.name;
    EXPECT_EQ(c.unit_bytes, t.type_size) << t.name;
  }
}

TEST(DeepDataTableTest, IdsPastTheTableAreUnknownAndCheckNothing) {
  const std::vector<uint8_t> ff(64, 0xff);
  const uint32_t n = static_cast<uint32_t>(AllGgmlTypes().size());
  for (uint32_t id : {n, n + 1, 255u, 1000u, UINT32_MAX}) {
    const DataCheck& c = DataCheckFor(id);
    EXPECT_EQ(c.kind, DataCheckKind::kUnknown) << id;
    EXPECT_EQ(c.unit_bytes, 0u) << id;
    std::vector<BadValue> listed;
    EXPECT_EQ(CheckDataUnits(c, ByteOrder::kLittle, ff.data(), 8, 0, 8, &listed), 0u);
    EXPECT_EQ(CheckDataUnitsScalar(c, ByteOrder::kLittle, ff.data(), 8, 0, 8, &listed), 0u);
    EXPECT_TRUE(listed.empty());
  }
}

// The reference is written for the same ids as the type table; its sizes,
// computed from ggml-common.h's structs, are the type table's. A new id in
// the table fails here, with the advice, not in the parameterised suites
// below (which take only the ids both know).
TEST(DeepDataTableTest, TheReferenceCoversTheTypeTable) {
  ASSERT_EQ(ref::TypeRules().size(), AllGgmlTypes().size())
      << "the type table changed: add the new ids to tests/support/ggml_row_reference.h from ggml's source";
  for (const GgmlTypeInfo& t : AllGgmlTypes()) {
    const ref::TypeRule& r = ref::TypeRules()[t.id];
    EXPECT_EQ(r.id, t.id);
    EXPECT_EQ(std::string(r.name), std::string(t.name));
    EXPECT_EQ(r.verdict == ref::Verdict::kNotAType, t.status == GgmlTypeStatus::kRemoved) << t.name;
    if (t.status != GgmlTypeStatus::kRemoved) {
      EXPECT_EQ(r.unit_bytes, t.type_size) << t.name;
    }
  }
}

bool IsElementType(const ref::TypeRule& r) {
  return r.verdict == ref::Verdict::kChecked && r.fields.size() == 1 && r.fields[0].name[0] == '\0';
}

// Field by field: what each DataCheck reads is what ggml reads.
TEST(DeepDataTableTest, KindsAndFieldsAreGgmls) {
  for (const ref::TypeRule& r : ref::TypeRules()) {
    const DataCheck& c = DataCheckFor(r.id);
    SCOPED_TRACE(r.name);
    switch (r.verdict) {
      case ref::Verdict::kNotAType: EXPECT_EQ(c.kind, DataCheckKind::kUnknown); continue;
      case ref::Verdict::kNothing: EXPECT_EQ(c.kind, DataCheckKind::kNothing); continue;
      case ref::Verdict::kRefused: EXPECT_EQ(c.kind, DataCheckKind::kRefused); continue;
      case ref::Verdict::kChecked: break;
    }
    ASSERT_FALSE(r.fields.empty());
    const ref::Field& f0 = r.fields[0];
    if (IsElementType(r)) {
      const DataCheckKind want = f0.decode == ref::Decode::kF32    ? DataCheckKind::kF32
                                 : f0.decode == ref::Decode::kF64  ? DataCheckKind::kF64
                                 : f0.decode == ref::Decode::kFp16 ? DataCheckKind::kF16
                                                                   : DataCheckKind::kBF16;
      EXPECT_EQ(c.kind, want);
      continue;
    }
    switch (f0.decode) {
      case ref::Decode::kFp16:
        EXPECT_EQ(c.kind, DataCheckKind::kBlockF16);
        ASSERT_EQ(c.n_fields, r.fields.size());
        for (size_t k = 0; k < r.fields.size(); ++k) {
          EXPECT_EQ(c.field_offset[k], r.fields[k].offset) << r.fields[k].name;
          EXPECT_EQ(std::string(c.field_name[k]), r.fields[k].name);
        }
        break;
      case ref::Decode::kF32:  // Q8_K's float d, which the kernel reads at offset 0
        EXPECT_EQ(c.kind, DataCheckKind::kBlockF32);
        EXPECT_EQ(f0.offset, 0u);
        EXPECT_EQ(std::string(c.field_name[0]), f0.name);
        break;
      case ref::Decode::kE8m0:  // MXFP4's e, read at offset 0
        EXPECT_EQ(c.kind, DataCheckKind::kBlockE8M0);
        EXPECT_EQ(f0.offset, 0u);
        EXPECT_EQ(std::string(c.field_name[0]), f0.name);
        break;
      case ref::Decode::kIq1mScale:
        EXPECT_EQ(c.kind, DataCheckKind::kIq1mScale);
        EXPECT_EQ(c.field_offset[0], f0.offset);
        break;
      default: ADD_FAILURE() << "no block type decodes this";
    }
  }
}

// --- Parity with the reference ---

// Finite values next to the non-finite ones: the largest finite, the
// smallest subnormal, zeros of both signs.
std::vector<uint64_t> NearMisses(ref::Decode d) {
  switch (d) {
    case ref::Decode::kFp16:
    case ref::Decode::kIq1mScale: return {0x7bff, 0xfbff, 0x0000, 0x8000, 0x0001, 0x03ff, 0x7800, 0x7b00};
    case ref::Decode::kBf16: return {0x7f7f, 0xff7f, 0x0000, 0x8000, 0x0001, 0x007f, 0x7f00};
    case ref::Decode::kF32: return {0x7f7fffff, 0xff7fffff, 0x00000000, 0x80000000, 0x00000001, 0x7f000000};
    case ref::Decode::kF64:
      return {0x7fefffffffffffff, 0xffefffffffffffff, 0, 0x8000000000000000, 1, 0x7fe0000000000000};
    case ref::Decode::kE8m0: return {0xfe, 0x00, 0x7f, 0x80};
  }
  return {};
}

// NaNs (quiet, signalling, negative, all ones) and both infinities.
std::vector<uint64_t> BadBits(ref::Decode d) {
  switch (d) {
    case ref::Decode::kFp16:
    case ref::Decode::kIq1mScale: return {0x7e00, 0x7c00, 0xfc00, 0x7c01, 0xffff};
    case ref::Decode::kBf16: return {0x7fc0, 0x7f80, 0xff80, 0x7f81, 0xffff};
    case ref::Decode::kF32: return {0x7fc00000, 0x7f800000, 0xff800000, 0x7f800001, 0xffffffff};
    case ref::Decode::kF64:
      return {0x7ff8000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff0000000000001, ~uint64_t{0}};
    case ref::Decode::kE8m0: return {0xff};
  }
  return {};
}

bool Finite(const ref::Field& f, const uint8_t* unit, bool be) {
  const double v = ref::FieldValue(f, unit, be);
  return !std::isnan(v) && !std::isinf(v);
}

// Enough units for three 1 KiB vector batches and a tail for the element
// types, and for a 256-unit scalar batch and a tail for the blocks.
uint64_t UnitCount(const ref::TypeRule& r) { return r.unit_bytes <= 8 ? 3 * (1024 / r.unit_bytes) + 7 : 300; }

// Where to plant: the first and last unit, the units on both sides of each
// 1 KiB boundary (for blocks, the one that straddles it), of the 256-unit
// scalar batch, and one in the middle.
std::vector<uint64_t> Positions(const ref::TypeRule& r, uint64_t n) {
  const uint64_t w = r.unit_bytes;
  std::set<uint64_t> at = {0, 1, n / 2, n - 2, n - 1, 255, 256, 1023 / w, 1024 / w, 2047 / w, 2048 / w};
  std::vector<uint64_t> out;
  for (uint64_t u : at) {
    if (u < n) out.push_back(u);
  }
  return out;
}

// Random units whose checked fields are finite; every seventh unit's fields
// hold a near miss.
std::vector<uint8_t> CleanUnits(const ref::TypeRule& r, uint64_t n, bool be, std::mt19937_64& rng) {
  std::vector<uint8_t> b(n * r.unit_bytes);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  for (uint64_t u = 0; u < n; ++u) {
    uint8_t* unit = b.data() + u * r.unit_bytes;
    for (const ref::Field& f : r.fields) {
      if (u % 7 == 3) {
        const std::vector<uint64_t> near = NearMisses(f.decode);
        ref::SetFieldBits(f, unit, near[(u / 7) % near.size()], be);
      }
      while (!Finite(f, unit, be)) {
        for (unsigned i = 0; i < ref::FieldWidth(f.decode); ++i) unit[f.offset + i] = static_cast<uint8_t>(rng());
      }
    }
  }
  return b;
}

std::string CapName(size_t cap) { return cap == SIZE_MAX ? "all" : std::to_string(cap); }

// Both kernels on units [0, n) of p, numbered from first_unit, against the
// reference, under each listing cap.
void ExpectKernelsAgree(const ref::TypeRule& r, const uint8_t* p, uint64_t n, bool be, uint64_t first_unit,
                        const std::vector<size_t>& caps, const std::string& where) {
  const DataCheck& check = DataCheckFor(r.id);
  const ByteOrder order = be ? ByteOrder::kBig : ByteOrder::kLittle;
  const std::vector<ref::Bad> want = ref::BadValues(r, p, n, be);
  for (size_t cap : caps) {
    for (bool scalar : {false, true}) {
      const std::string ctx = absl::StrCat(r.name, be ? " big-endian " : " little-endian ", where, ", cap ",
                                           CapName(cap), scalar ? ", CheckDataUnitsScalar" : ", CheckDataUnits");
      std::vector<BadValue> got;
      const uint64_t count = scalar ? CheckDataUnitsScalar(check, order, p, n, first_unit, cap, &got)
                                    : CheckDataUnits(check, order, p, n, first_unit, cap, &got);
      ASSERT_EQ(count, want.size()) << ctx;
      ASSERT_EQ(got.size(), std::min(cap, want.size())) << ctx;
      for (size_t i = 0; i < got.size(); ++i) {
        const ref::Bad& w = want[i];
        const BadValue& g = got[i];
        const std::string item = absl::StrCat(ctx, ", listed value ", i, " (reference: unit ", w.unit, " field ",
                                              w.field, " bits ", absl::Hex(w.bits), ")");
        ASSERT_EQ(g.unit, first_unit + w.unit) << item;
        ASSERT_EQ(g.byte_in_unit, w.byte_in_unit) << item;
        ASSERT_EQ(uint32_t{g.field}, w.field) << item;
        ASSERT_EQ(g.raw, w.bits) << item;
        const BadKind kind = w.e8m0 ? BadKind::kE8m0Nan : w.nan ? BadKind::kNan : BadKind::kInfinity;
        ASSERT_EQ(static_cast<int>(g.kind), static_cast<int>(kind)) << item;
        const std::string text = DescribeBadValue(check, g);
        if (w.e8m0) {
          ASSERT_NE(text.find("0xff"), std::string::npos) << item << ": " << text;
        } else {
          const char* starts = w.nan ? "NaN (0x" : w.negative ? "-inf (0x" : "+inf (0x";
          ASSERT_EQ(text.rfind(starts, 0), 0u) << item << ": " << text;
        }
        if (!IsElementType(r)) {
          ASSERT_EQ(std::string(check.field_name[g.field]), r.fields[w.field].name) << item;
        }
      }
    }
  }
}

class DeepParityTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  const ref::TypeRule& rule() const { return ref::TypeRules()[GetParam()]; }
};

// The planting tests, for the types whose values ggml looks at.
class DeepPlantTest : public DeepParityTest {};

std::vector<uint32_t> StorableIds() {
  std::vector<uint32_t> ids;
  for (const GgmlTypeInfo& t : AllGgmlTypes()) {
    if (t.status != GgmlTypeStatus::kRemoved && t.id < ref::TypeRules().size()) ids.push_back(t.id);
  }
  return ids;
}

std::vector<uint32_t> CheckedIds() {
  std::vector<uint32_t> ids;
  for (const ref::TypeRule& r : ref::TypeRules()) {
    if (r.verdict == ref::Verdict::kChecked) ids.push_back(r.id);
  }
  return ids;
}

TEST_P(DeepParityTest, CleanUnitsHaveNoBadValue) {
  const ref::TypeRule& r = rule();
  std::mt19937_64 rng(1000 + r.id);
  const uint64_t n = UnitCount(r);
  for (bool be : {false, true}) {
    const std::vector<uint8_t> b = CleanUnits(r, n, be, rng);
    ASSERT_TRUE(ref::BadValues(r, b.data(), n, be).empty());
    ExpectKernelsAgree(r, b.data(), n, be, 0, {0, SIZE_MAX}, "clean");
    // Every length from 0 to a few batches, so each tail length runs.
    for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{255}, uint64_t{257}, n - 1}) {
      ExpectKernelsAgree(r, b.data(), k, be, 0, {SIZE_MAX}, absl::StrCat("clean, ", k, " units"));
    }
  }
}

TEST_P(DeepPlantTest, EachPlantedValueAloneIsFoundWhereItIs) {
  const ref::TypeRule& r = rule();
  std::mt19937_64 rng(2000 + r.id);
  const uint64_t n = UnitCount(r);
  for (bool be : {false, true}) {
    const std::vector<uint8_t> clean = CleanUnits(r, n, be, rng);
    // One byte in front, so that every other run reads from an odd address.
    std::vector<uint8_t> buffer(clean.size() + 1);
    for (size_t k = 0; k < r.fields.size(); ++k) {
      const ref::Field& f = r.fields[k];
      for (uint64_t bits : BadBits(f.decode)) {
        for (uint64_t at : Positions(r, n)) {
          const bool odd = (at + bits) % 2 == 1;
          uint8_t* p = buffer.data() + (odd ? 1 : 0);
          std::copy(clean.begin(), clean.end(), p);
          ref::SetFieldBits(f, p + at * r.unit_bytes, bits, be);
          const std::vector<ref::Bad> want = ref::BadValues(r, p, n, be);
          ASSERT_EQ(want.size(), 1u) << r.name << ": the reference does not see the planted value";
          ASSERT_EQ(want[0].unit, at);
          ASSERT_EQ(want[0].field, k);
          const std::string where =
              absl::StrCat(f.name, " = 0x", absl::Hex(bits), " at unit ", at, odd ? " (odd address)" : "");
          ExpectKernelsAgree(r, p, n, be, at % 3 == 0 ? 0 : 1000003, {0, SIZE_MAX}, where);
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST_P(DeepPlantTest, ManyPlantedValuesAreCountedAndTheFirstListedInOrder) {
  const ref::TypeRule& r = rule();
  std::mt19937_64 rng(3000 + r.id);
  const uint64_t n = UnitCount(r);
  for (bool be : {false, true}) {
    std::vector<uint8_t> b = CleanUnits(r, n, be, rng);
    size_t i = 0;
    for (uint64_t at : Positions(r, n)) {
      // Two-field blocks: both fields, or the second alone, in turn.
      for (size_t k = 0; k < r.fields.size(); ++k) {
        if (r.fields.size() == 2 && k == 0 && at % 2 == 1) continue;
        const std::vector<uint64_t> bad = BadBits(r.fields[k].decode);
        ref::SetFieldBits(r.fields[k], b.data() + at * r.unit_bytes, bad[i++ % bad.size()], be);
      }
    }
    ExpectKernelsAgree(r, b.data(), n, be, 0, {0, 1, 3, 7, SIZE_MAX}, "planted at every position");
    ExpectKernelsAgree(r, b.data(), n, be, 77, {2, SIZE_MAX}, "planted at every position, from unit 77");
    if (HasFailure()) return;

    // Split anywhere, with each part numbered from where it starts, the parts
    // add up to the whole: what the workers over chunks rely on.
    std::vector<BadValue> whole;
    const uint64_t total = CheckDataUnits(DataCheckFor(r.id), be ? ByteOrder::kBig : ByteOrder::kLittle, b.data(),
                                          n, 0, SIZE_MAX, &whole);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<BadValue> parts;
      uint64_t count = 0;
      for (uint64_t u = 0; u < n;) {
        const uint64_t len = std::min<uint64_t>(n - u, 1 + rng() % (trial < 4 ? 40 : 700));
        count += CheckDataUnits(DataCheckFor(r.id), be ? ByteOrder::kBig : ByteOrder::kLittle,
                                b.data() + u * r.unit_bytes, len, u, SIZE_MAX, &parts);
        u += len;
      }
      ASSERT_EQ(count, total) << r.name << " trial " << trial;
      ASSERT_EQ(parts.size(), whole.size()) << r.name << " trial " << trial;
      for (size_t j = 0; j < parts.size(); ++j) {
        EXPECT_EQ(parts[j].unit, whole[j].unit) << r.name << " trial " << trial << " value " << j;
        EXPECT_EQ(parts[j].byte_in_unit, whole[j].byte_in_unit) << r.name << " trial " << trial << " value " << j;
      }
    }
  }
}

// Bytes as they come: for the float types one value in 32 to 2048 is not
// finite, for the blocks one scale in 32; nothing for the types ggml does
// not check (NVFP4, I8..I64) or refuses (Q8_1), even where every byte is 0xff.
TEST_P(DeepParityTest, RandomBytes) {
  const ref::TypeRule& r = rule();
  std::mt19937_64 rng(4000 + r.id);
  const uint64_t n = UnitCount(r) * 4;
  std::vector<uint8_t> b(n * r.unit_bytes);
  for (int round = 0; round < 3; ++round) {
    for (uint8_t& x : b) x = round == 2 ? 0xff : static_cast<uint8_t>(rng());
    for (bool be : {false, true}) {
      ExpectKernelsAgree(r, b.data(), n, be, 5, {4, SIZE_MAX}, absl::StrCat("random bytes, round ", round));
      if (r.verdict != ref::Verdict::kChecked) {
        std::vector<BadValue> listed;
        EXPECT_EQ(CheckDataUnits(DataCheckFor(r.id), be ? ByteOrder::kBig : ByteOrder::kLittle, b.data(), n, 0, 8,
                                 &listed),
                  0u)
            << r.name;
      }
    }
  }
}

std::string TypeName(const ::testing::TestParamInfo<uint32_t>& id) { return ref::TypeRules()[id.param].name; }

INSTANTIATE_TEST_SUITE_P(EveryStorableType, DeepParityTest, ::testing::ValuesIn(StorableIds()), TypeName);
// NVFP4, I8..I64 and Q8_1 have nothing to plant in (RandomBytes covers them).
INSTANTIATE_TEST_SUITE_P(EveryCheckedType, DeepPlantTest, ::testing::ValuesIn(CheckedIds()), TypeName);

// --- Through the validator ---

constexpr uint32_t kF16 = 1, kF32 = 0, kBF16 = 30, kF64 = 28, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8, kQ8_1 = 9,
                   kQ2_K = 10, kQ4_K = 12, kQ8_K = 15, kIQ1_M = 29, kMXFP4 = 39;
constexpr char kName[] = "deep.weight";
constexpr size_t kDeepTensor = 4;  // after the tiny model's four tensors

// A planted value, in the reference's terms.
struct Plant {
  uint64_t unit;
  size_t field;
  uint64_t bits;
};

// The tiny llama model (valid under the default policy; its four F32 tensors
// are zeros) and tensor `deep.weight` of `type`: `n` units of clean random
// data with `plants`. Element data is given little-endian and the writer
// swaps it for a big-endian file; block data is written as built, in the
// file's order.
BuiltFile ModelWith(uint32_t type, uint64_t n, const std::vector<Plant>& plants, bool big_endian = false,
                    uint64_t seed = 7) {
  const ref::TypeRule& r = ref::TypeRules()[type];
  const bool data_be = big_endian && r.unit_bytes > 8;  // blocks: in the file's order
  std::mt19937_64 rng(seed + type);
  std::vector<uint8_t> data = CleanUnits(r, n, data_be, rng);
  for (const Plant& p : plants) {
    ref::SetFieldBits(r.fields.at(p.field), data.data() + p.unit * r.unit_bytes, p.bits, data_be);
  }
  testing::TinyModel m = testing::MakeTinyModel();
  GgufBuilder b = m.Builder();
  b.set_default_fill(DataFill::kZeros).set_big_endian(big_endian);
  b.AddTensor(kName, {n * FindGgmlType(type)->block_size}, type, TensorOptions{.data = std::move(data)});
  return b.Build();
}

// The message ReportDeep writes for one bad value (deep.cc).
std::string BadValueMessage(uint32_t type, const Plant& p) {
  const ref::TypeRule& r = ref::TypeRules()[type];
  const ref::Field& f = r.fields[p.field];
  std::string value;
  if (f.decode == ref::Decode::kE8m0) {
    value = "E8M0 exponent 0xff (NaN)";
  } else {
    unsigned width = 2;
    uint64_t mantissa = 0x3ff;
    if (f.decode == ref::Decode::kBf16) mantissa = 0x7f;
    if (f.decode == ref::Decode::kF32) {
      width = 4;
      mantissa = 0x7fffff;
    }
    if (f.decode == ref::Decode::kF64) {
      width = 8;
      mantissa = 0xfffffffffffffull;
    }
    const bool negative = (p.bits >> (8 * width - 1)) & 1;
    const bool nan = (p.bits & mantissa) != 0;
    value = absl::StrFormat("%s (0x%0*x)", nan ? "NaN" : negative ? "-inf" : "+inf", 2 * width, p.bits);
  }
  const std::string where =
      IsElementType(r) ? absl::StrCat("element ", p.unit) : absl::StrCat("block ", p.unit, " ", f.name);
  return absl::StrCat("tensor '", kName, "' (", r.name, ") ", where, " is ", value);
}

uint64_t PlantOffset(const BuiltFile& f, uint32_t type, const Plant& p) {
  const ref::TypeRule& r = ref::TypeRules()[type];
  return f.tensor_data_offsets.at(kDeepTensor) + p.unit * r.unit_bytes + r.fields[p.field].offset;
}

bool IsDeepRule(RuleId id) {
  return id == RuleId::kTensorDataNonFinite || id == RuleId::kDeepCheckLimit || id == RuleId::kTensorDataUncheckable;
}

// Every finding in full, and the deep summary: two routes agree when these do.
std::vector<std::string> Lines(const Report& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    out.push_back(absl::StrCat(RuleCode(f.rule), "@", f.offset, " ", Sv(SeverityName(f.severity)), " ", f.message));
  }
  for (const auto& [rule, n] : r.suppressed) out.push_back(absl::StrCat(RuleCode(rule), " suppressed ", n));
  const DeepSummary& d = r.deep;
  out.push_back(absl::StrCat("deep ran=", d.ran, " tensors=", d.checked_tensors, " checked=", d.checked_bytes,
                             " bad=", d.bad_values, " unchecked=", d.unchecked_bytes, " suppressed=",
                             d.tensors_suppressed));
  for (const DeepTensorResult& t : d.tensors) {
    out.push_back(absl::StrCat("  tensor ", t.tensor, " checked=", t.checked_bytes, " bad=", t.bad_values));
  }
  return out;
}

std::vector<std::string> DeepLines(const Report& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    if (IsDeepRule(f.rule)) out.push_back(absl::StrCat(RuleCode(f.rule), "@", f.offset, " ", f.message));
  }
  return out;
}

std::vector<std::string> ExpectedLines(const BuiltFile& f, uint32_t type, const std::vector<Plant>& plants) {
  std::vector<Plant> sorted = plants;
  std::sort(sorted.begin(), sorted.end(),
            [&](const Plant& a, const Plant& b) { return PlantOffset(f, type, a) < PlantOffset(f, type, b); });
  std::vector<std::string> out;
  for (const Plant& p : sorted) {
    out.push_back(absl::StrCat("GG6009@", PlantOffset(f, type, p), " ", BadValueMessage(type, p)));
  }
  return out;
}

// The same bytes by every route --deep takes: in memory with 1 and 3 jobs
// and small chunks, from a file (pread) likewise, and through a stream read
// 1, 7, 17 and 4096 bytes at a time. Every report must equal the first.
void ExpectEveryRouteAgrees(const BuiltFile& f, const Policy& policy, const Report& want, const std::string& what) {
  const std::vector<std::string> want_lines = Lines(want);
  for (unsigned jobs : {1u, 3u}) {
    for (size_t chunk : {size_t{4} << 20, size_t{512}, size_t{1000}}) {
      // A chunk read in pieces of 520 bytes (not a whole number of most
      // units) as well as in one read.
      const DeepOptions deep{
          .enabled = true, .jobs = jobs, .chunk_bytes = chunk, .read_bytes = chunk == 1000 ? 520 : chunk};
      const std::string how =
          absl::StrCat(what, ", ", jobs, " jobs, chunks of ", chunk, ", reads of ", deep.read_bytes);
      EXPECT_EQ(Lines(ValidateBytes(f.bytes, policy, deep)), want_lines) << "in memory, " << how;
      const std::string path = testing::TempPath(absl::StrCat("deep_", jobs, "_", chunk, ".gguf"));
      testing::WriteFileBytes(path, f.bytes);
      absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path);
      ASSERT_TRUE(source.ok()) << source.status();
      absl::StatusOr<ValidatedFile> v = ValidateSource(**source, policy, {.first_prefix = 256, .growth = 2}, deep);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(Lines(v->report()), want_lines) << "from a file, " << how;
      std::remove(path.c_str());
    }
  }
  for (size_t max_read : {size_t{1}, size_t{7}, size_t{17}, size_t{4096}}) {
    for (size_t chunk : {size_t{1} << 20, size_t{13}}) {
      MemoryStream in(f.bytes, max_read);
      StreamOptions options;
      options.chunk = chunk;
      absl::StatusOr<ValidatedFile> v = ValidateStream(in, policy, options, DeepOptions{.enabled = true});
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(Lines(v->report()), want_lines)
          << what << ", a stream read " << max_read << " bytes at a time, data chunks of " << chunk;
    }
  }
}

struct FileCase {
  uint32_t type;
  uint64_t units;
  std::vector<Plant> plants;
  bool big_endian = false;
};

std::string CaseName(const FileCase& c) {
  return absl::StrCat(ref::TypeRules()[c.type].name, c.big_endian ? " big-endian" : "");
}

std::vector<FileCase> FileCases() {
  return {
      {kF16, 700, {{0, 0, 0x7e00}, {511, 0, 0x7c00}, {512, 0, 0xfc00}, {699, 0, 0x7c01}}},
      {kF16, 700, {{3, 0, 0xfc00}, {600, 0, 0x7e00}}, true},
      {kBF16, 700, {{0, 0, 0x7fc0}, {300, 0, 0x7f80}, {699, 0, 0xff80}}},
      {kF32, 400, {{0, 0, 0x7f800000}, {255, 0, 0xff800000}, {256, 0, 0x7fc00000}, {399, 0, 0xffffffff}}},
      {kF32, 400, {{100, 0, 0x7f800001}}, true},
      {kF64, 300, {{0, 0, 0x7ff8000000000000}, {127, 0, 0x7ff0000000000000}, {299, 0, 0xfff0000000000000}}},
      {kQ4_0, 60, {{0, 0, 0x7c00}, {59, 0, 0x7e00}}},
      {kQ4_1, 60, {{0, 1, 0xfc00}, {30, 0, 0x7e00}, {30, 1, 0x7c00}}},
      {kQ8_0, 60, {{1, 0, 0xfc00}, {58, 0, 0x7e01}}},
      {kQ2_K, 20, {{0, 0, 0x7c00}, {19, 1, 0x7e00}}},
      {kQ4_K, 20, {{0, 0, 0x7e00}, {10, 1, 0xfc00}, {19, 0, 0x7c00}}},
      {kQ4_K, 20, {{5, 1, 0x7c00}, {6, 0, 0x7e00}}, true},
      {kQ8_K, 20, {{0, 0, 0x7f800000}, {19, 0, 0x7fc00000}}},
      {kMXFP4, 90, {{0, 0, 0xff}, {61, 0, 0xff}, {89, 0, 0xff}}},
      {kIQ1_M, 20, {{0, 0, 0x7c00}, {7, 0, 0xfe00}, {19, 0, 0xfc00}}},
      {kIQ1_M, 20, {{2, 0, 0x7e00}}, true},
  };
}

TEST(DeepValidateTest, EachPlantedValueIsAFindingAtItsByte) {
  const Policy policy = DefaultPolicy();
  for (const FileCase& c : FileCases()) {
    SCOPED_TRACE(CaseName(c));
    const BuiltFile bad = ModelWith(c.type, c.units, c.plants, c.big_endian);
    const BuiltFile clean = ModelWith(c.type, c.units, {}, c.big_endian);
    ASSERT_EQ(bad.tensor_sizes.at(kDeepTensor), c.units * ref::TypeRules()[c.type].unit_bytes);

    const Report r = ValidateBytes(bad.bytes, policy, DeepOptions{.enabled = true, .jobs = 1});
    EXPECT_EQ(DeepLines(r), ExpectedLines(bad, c.type, c.plants)) << Describe(r);
    EXPECT_FALSE(r.valid());
    EXPECT_TRUE(r.deep.ran);
    EXPECT_EQ(r.deep.bad_values, c.plants.size());
    EXPECT_EQ(r.deep.checked_tensors, 5u);
    uint64_t all_bytes = 0;
    for (uint64_t s : bad.tensor_sizes) all_bytes += s;
    EXPECT_EQ(r.deep.checked_bytes, all_bytes);
    EXPECT_EQ(r.deep.unchecked_bytes, 0u);
    ASSERT_FALSE(r.deep.tensors.empty());
    EXPECT_EQ(r.deep.tensors[0].tensor, kDeepTensor) << "tensors with bad values come first";
    EXPECT_EQ(r.deep.tensors[0].bad_values, c.plants.size());
    EXPECT_EQ(r.deep.tensors.size(), 5u);
    ExpectEveryRouteAgrees(bad, policy, r, CaseName(c) + " with bad values");

    const Report ok = ValidateBytes(clean.bytes, policy, DeepOptions{.enabled = true, .jobs = 3});
    EXPECT_TRUE(ok.valid()) << Describe(ok);
    EXPECT_TRUE(DeepLines(ok).empty()) << Describe(ok);
    EXPECT_TRUE(ok.deep.ran);
    EXPECT_EQ(ok.deep.bad_values, 0u);
    EXPECT_EQ(ok.deep.checked_bytes, all_bytes);
    ExpectEveryRouteAgrees(clean, policy, ok, CaseName(c) + " clean");
  }
}

TEST(DeepValidateTest, WithoutDeepTheDataIsNotRead) {
  const BuiltFile bad = ModelWith(kF16, 700, {{10, 0, 0x7e00}});
  const Policy policy = DefaultPolicy();
  const Report r = ValidateBytes(bad.bytes, policy);
  EXPECT_TRUE(r.valid()) << Describe(r);
  EXPECT_FALSE(r.deep.ran);
  EXPECT_TRUE(DeepLines(r).empty());
  MemoryStream in(bad.bytes, 17);
  absl::StatusOr<ValidatedFile> v = ValidateStream(in, policy, {});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->report().deep.ran);
  EXPECT_EQ(Lines(v->report()), Lines(r));
  // --deep with --header-only reads no data either.
  MemoryStream head(bad.bytes);
  StreamOptions header_only;
  header_only.header_only = true;
  v = ValidateStream(head, policy, header_only, DeepOptions{.enabled = true});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->report().deep.ran);
  EXPECT_TRUE(DeepLines(v->report()).empty());
}

// A header that parsed is deep-checked even with findings (validate.cc,
// DeepWanted): the data's problems are reported beside the header's.
TEST(DeepValidateTest, AHeaderWithAnErrorIsStillDeepChecked) {
  testing::TinyModel m = testing::MakeTinyModel();
  m.Set("general.name", GgufValue::Str("bad \xff utf-8"));
  GgufBuilder b = m.Builder();
  b.set_default_fill(DataFill::kZeros);
  std::vector<uint8_t> data(2 * 64, 0);
  data[21] = 0x7c;  // element 10 is +inf
  b.AddTensor(kName, {64}, kF16, TensorOptions{.data = data});
  const BuiltFile f = b.Build();
  const Policy policy = DefaultPolicy();
  const Report plain = ValidateBytes(f.bytes, policy);
  ASSERT_TRUE(testing::HasRule(plain, RuleId::kInvalidUtf8));
  ASSERT_FALSE(plain.valid());
  EXPECT_FALSE(plain.deep.ran);
  const Report deep = ValidateBytes(f.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_TRUE(deep.deep.ran);
  EXPECT_EQ(DeepLines(deep),
            ExpectedLines(f, kF16, {{10, 0, 0x7c00}}))
      << Describe(deep);
  EXPECT_TRUE(testing::HasRule(deep, RuleId::kInvalidUtf8));
  ExpectEveryRouteAgrees(f, policy, deep, "a header with an error");
}

// A header that does not parse gives no plan: nothing is read past it.
TEST(DeepValidateTest, AHeaderThatDoesNotParseIsNotDeepChecked) {
  const BuiltFile whole = ModelWith(kF16, 700, {{10, 0, 0x7e00}});
  BuiltFile cut = whole;
  cut.bytes.resize(whole.header_end - 3);
  const Policy policy = DefaultPolicy();
  const Report r = ValidateBytes(cut.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_FALSE(r.header_parsed);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kTruncated)) << Describe(r);
  EXPECT_FALSE(r.deep.ran);
  EXPECT_TRUE(DeepLines(r).empty());
  ExpectEveryRouteAgrees(cut, policy, r, "a cut header");
}

TEST(DeepValidateTest, FindingsPerTensorAreCappedAndCounted) {
  const std::vector<Plant> plants = {{10, 0, 0x7e00}, {300, 0, 0x7c00}, {301, 0, 0xfc00}, {600, 0, 0x7e00},
                                     {650, 0, 0x7c00}};
  const BuiltFile f = ModelWith(kF16, 700, plants);
  const uint64_t data = f.tensor_data_offsets.at(kDeepTensor);
  for (uint32_t cap : {0u, 2u}) {
    Policy policy = DefaultPolicy();
    policy.limits.max_deep_findings_per_tensor = cap;
    const Report r = ValidateBytes(f.bytes, policy, DeepOptions{.enabled = true, .jobs = 3, .chunk_bytes = 512});
    std::vector<std::string> want = ExpectedLines(f, kF16, {plants.begin(), plants.begin() + cap});
    want.insert(want.begin(), absl::StrCat("GG6009@", data, " tensor '", kName, "' (F16) holds 5 non-finite values",
                                           " in all; the first ", cap, " are listed"));
    EXPECT_EQ(DeepLines(r), want) << "cap " << cap;
    EXPECT_FALSE(r.valid());
    EXPECT_EQ(r.deep.bad_values, 5u);
    ASSERT_FALSE(r.deep.tensors.empty());
    EXPECT_EQ(r.deep.tensors[0].bad_values, 5u);
    ExpectEveryRouteAgrees(f, policy, r, absl::StrCat("cap ", cap));
  }
}

TEST(DeepValidateTest, MaxDeepBytesLeavesTheRestUncheckedWithANote) {
  // The tiny model's tensors (512 bytes) come first in the file, then 700
  // F16 values: a budget of 712 bytes checks the first 100 of them.
  const BuiltFile f = ModelWith(kF16, 700, {{50, 0, 0x7e00}, {500, 0, 0x7c00}});
  const uint64_t tiny = f.tensor_data_offsets.at(kDeepTensor) - f.data_offset;
  ASSERT_EQ(tiny, 512u);
  Policy policy = DefaultPolicy();
  policy.limits.max_deep_bytes = tiny + 200;
  const Report r = ValidateBytes(f.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_EQ(DeepLines(r),
            (std::vector<std::string>{
                absl::StrCat("GG6010@", f.data_offset,
                             " max_deep_bytes reached: 1200 bytes of 1 tensors were not checked"),
                absl::StrCat("GG6009@", PlantOffset(f, kF16, {50, 0, 0x7e00}), " ",
                             BadValueMessage(kF16, {50, 0, 0x7e00}))}))
      << Describe(r);
  EXPECT_EQ(r.deep.checked_bytes, tiny + 200);
  EXPECT_EQ(r.deep.unchecked_bytes, 1200u);
  EXPECT_EQ(r.deep.bad_values, 1u);
  ExpectEveryRouteAgrees(f, policy, r, "max_deep_bytes");

  // A bad value past the budget only: valid, with the note (GG6010 is info).
  const BuiltFile late = ModelWith(kF16, 700, {{500, 0, 0x7c00}});
  const Report v = ValidateBytes(late.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_TRUE(v.valid()) << Describe(v);
  EXPECT_TRUE(testing::HasFinding(v, RuleId::kDeepCheckLimit, late.data_offset));
  EXPECT_EQ(testing::CountRule(v, RuleId::kTensorDataNonFinite), 0u);

  // A budget that is not a whole number of blocks checks the whole blocks in it.
  const BuiltFile q = ModelWith(kQ4_K, 20, {});
  policy.limits.max_deep_bytes = tiny + 144 * 3 + 100;
  const Report qr = ValidateBytes(q.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_EQ(qr.deep.checked_bytes, tiny + 144 * 3);
  EXPECT_EQ(qr.deep.unchecked_bytes, 144u * 17);

  // No budget at all: every tensor is left out.
  policy.limits.max_deep_bytes = 0;
  const Report none = ValidateBytes(f.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_EQ(none.deep.checked_bytes, 0u);
  EXPECT_EQ(none.deep.checked_tensors, 0u);
  EXPECT_EQ(testing::CountRule(none, RuleId::kTensorDataNonFinite), 0u);
  EXPECT_TRUE(testing::HasFinding(none, RuleId::kDeepCheckLimit, f.data_offset));
  EXPECT_EQ(none.deep.unchecked_bytes, tiny + 1400);
}

TEST(DeepValidateTest, Q8_1IsUncheckable) {
  testing::TinyModel m = testing::MakeTinyModel();
  GgufBuilder b = m.Builder();
  b.set_default_fill(DataFill::kZeros);
  b.AddTensor(kName, {64}, kQ8_1);  // two blocks of 36 bytes
  const BuiltFile f = b.Build();
  const Policy policy = DefaultPolicy();
  const Report r = ValidateBytes(f.bytes, policy, DeepOptions{.enabled = true});
  const uint64_t type_field = testing::TensorAt(f, kDeepTensor, std::string(kName).size()).type;
  EXPECT_EQ(DeepLines(r), (std::vector<std::string>{absl::StrCat(
                              "GG6011@", type_field, " tensor '", kName,
                              "' is Q8_1, a type ggml_validate_row_data refuses: llama.cpp with --check-tensors does "
                              "not load it, and its data was not checked")}))
      << Describe(r);
  EXPECT_EQ(policy.SeverityOf(RuleId::kTensorDataUncheckable), Severity::kWarning);
  EXPECT_TRUE(r.valid()) << Describe(r);
  EXPECT_EQ(r.deep.unchecked_bytes, 72u);
  EXPECT_EQ(r.deep.checked_tensors, 4u);
  ExpectEveryRouteAgrees(f, policy, r, "Q8_1");
  EXPECT_EQ(StrictPolicy().SeverityOf(RuleId::kTensorDataUncheckable), Severity::kError);
}

// A file that ends before its data section (GG6008): the GG6010 note points
// at the end of the file, not past it (found by validate_fuzzer;
// corpus/regressions/deep-limit-note-past-the-end.gguf).
TEST(DeepValidateTest, TheLimitNoteOfAFileCutBeforeItsDataIsInsideTheFile) {
  const BuiltFile whole = ModelWith(kF16, 700, {});
  BuiltFile cut = whole;
  cut.bytes.resize(whole.header_end + 1);
  ASSERT_LT(cut.bytes.size(), whole.data_offset);
  Policy policy = DefaultPolicy();
  policy.limits.max_deep_bytes = 0;
  const Report r = ValidateBytes(cut.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_TRUE(testing::HasRule(r, RuleId::kMissingTensorData)) << Describe(r);
  EXPECT_TRUE(testing::HasFinding(r, RuleId::kDeepCheckLimit, cut.bytes.size()));
  for (const Finding& f : r.findings) EXPECT_LE(f.offset, cut.bytes.size()) << Describe(r);
  ExpectEveryRouteAgrees(cut, policy, r, "cut before the data");
}

// A tensor the file does not finish is left to the layout rules (GG6002):
// no value of it is reported, by any route, even one in the bytes present.
TEST(DeepValidateTest, ACutTensorIsNotReported) {
  const BuiltFile whole = ModelWith(kF16, 700, {{1, 0, 0x7e00}});
  BuiltFile cut = whole;
  cut.bytes.resize(whole.tensor_data_offsets.at(kDeepTensor) + 600);
  const Policy policy = DefaultPolicy();
  const Report r = ValidateBytes(cut.bytes, policy, DeepOptions{.enabled = true});
  EXPECT_TRUE(testing::HasRule(r, RuleId::kTensorOutOfBounds)) << Describe(r);
  EXPECT_TRUE(DeepLines(r).empty()) << Describe(r);
  EXPECT_TRUE(r.deep.ran);
  EXPECT_EQ(r.deep.checked_tensors, 4u);
  EXPECT_EQ(r.deep.unchecked_bytes, 1400u);
  ExpectEveryRouteAgrees(cut, policy, r, "cut in the data");
}

}  // namespace
}  // namespace ggufguard
