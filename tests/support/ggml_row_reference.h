// An independent reference of the rules of ggml's ggml_validate_row_data
// (ggml/src/ggml-quants.c, section "data validation"), for the parity test
// (tests/deep_data_test.cc) and the data-kernel fuzzer
// (fuzz/data_kernel_fuzzer.cc). It is written from ggml's source and the
// block structs of ggml/src/ggml-common.h, not from src/ggufguard/deep: each
// offset and size is spelled as the sum of the struct's fields, every value
// is decoded to a double and judged with std::isnan / std::isinf, and it
// walks one unit at a time with no batching. No ggml code is copied; where
// ggml's rule is a formula (IQ1_M's scale) the formula is restated.
//
// What ggml does that this reference does not: it stops at the first bad
// value of a row and returns false. The reference lists every bad value in
// unit order (then field order within a unit, the order ggml tests them),
// so that a kernel that counts them all can be compared value by value.
//
// Header-only: the fuzzers are built without the tests' libraries.
#ifndef GGUFGUARD_TESTS_SUPPORT_GGML_ROW_REFERENCE_H_
#define GGUFGUARD_TESTS_SUPPORT_GGML_ROW_REFERENCE_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ggufguard::testing::row_reference {

// How a checked field is read.
enum class Decode : uint8_t {
  kFp16,       // IEEE binary16 (ggml_half)
  kBf16,       // bfloat16: the top half of a binary32
  kF32,        // binary32
  kF64,        // binary64
  kE8m0,       // one byte, 2^(e-127); 0xff is NaN (ggml's validate_e_e8m0)
  kIq1mScale,  // IQ1_M: a binary16 made of the top nibbles of four u16 scales
};

// Bytes a field occupies in its unit.
inline unsigned FieldWidth(Decode d) {
  switch (d) {
    case Decode::kFp16:
    case Decode::kBf16: return 2;
    case Decode::kF32: return 4;
    case Decode::kF64: return 8;
    case Decode::kE8m0: return 1;
    case Decode::kIq1mScale: return 8;
  }
  return 0;
}

struct Field {
  uint32_t offset;  // within the unit
  Decode decode;
  const char* name;  // ggml's member name; "" for the element types
};

enum class Verdict : uint8_t {
  kChecked,   // the fields are checked in every unit
  kNothing,   // a case that checks nothing (I8, I16, I32, I64, NVFP4)
  kRefused,   // no case in the switch: the function returns false (Q8_1)
  kNotAType,  // an id ggml no longer defines (removed), or past the table
};

struct TypeRule {
  uint32_t id;
  const char* name;
  Verdict verdict;
  uint32_t unit_bytes;  // sizeof the block struct, or of one element
  std::vector<Field> fields;
};

// Per ggml type id, 0..42 (the table of format/types.cc). Units are what
// ggml's validator walks: `nb = nbytes / ggml_type_size(type)`, so an
// element for the plain types and a block for the quantized ones.
inline const std::vector<TypeRule>& TypeRules() {
  constexpr uint32_t kHalf = 2;  // sizeof(ggml_half)
  constexpr uint32_t kQK_K = 256;
  using D = Decode;
  using V = Verdict;
  static const std::vector<TypeRule> rules = {
      {0, "F32", V::kChecked, 4, {{0, D::kF32, ""}}},
      {1, "F16", V::kChecked, 2, {{0, D::kFp16, ""}}},
      // block_q4_0 {ggml_half d; uint8_t qs[QK4_0 / 2];}, QK4_0 = 32
      {2, "Q4_0", V::kChecked, kHalf + 32 / 2, {{0, D::kFp16, "d"}}},
      // block_q4_1 {ggml_half d; ggml_half m; uint8_t qs[16];}
      {3, "Q4_1", V::kChecked, 2 * kHalf + 32 / 2, {{0, D::kFp16, "d"}, {kHalf, D::kFp16, "m"}}},
      {4, "Q4_2", V::kNotAType, 0, {}},
      {5, "Q4_3", V::kNotAType, 0, {}},
      // block_q5_0 {ggml_half d; uint8_t qh[4]; uint8_t qs[16];}
      {6, "Q5_0", V::kChecked, kHalf + 4 + 32 / 2, {{0, D::kFp16, "d"}}},
      // block_q5_1 {ggml_half d; ggml_half m; uint8_t qh[4]; uint8_t qs[16];}
      {7, "Q5_1", V::kChecked, 2 * kHalf + 4 + 32 / 2, {{0, D::kFp16, "d"}, {kHalf, D::kFp16, "m"}}},
      // block_q8_0 {ggml_half d; int8_t qs[32];}
      {8, "Q8_0", V::kChecked, kHalf + 32, {{0, D::kFp16, "d"}}},
      // block_q8_1 {ggml_half d; ggml_half s; int8_t qs[32];}: no case
      {9, "Q8_1", V::kRefused, 2 * kHalf + 32, {}},
      // block_q2_K {uint8_t scales[QK_K/16]; uint8_t qs[QK_K/4]; ggml_half d; ggml_half dmin;}
      {10, "Q2_K", V::kChecked, kQK_K / 16 + kQK_K / 4 + 2 * kHalf,
       {{kQK_K / 16 + kQK_K / 4, D::kFp16, "d"}, {kQK_K / 16 + kQK_K / 4 + kHalf, D::kFp16, "dmin"}}},
      // block_q3_K {uint8_t hmask[QK_K/8]; uint8_t qs[QK_K/4]; uint8_t scales[12]; ggml_half d;}
      {11, "Q3_K", V::kChecked, kQK_K / 8 + kQK_K / 4 + 12 + kHalf, {{kQK_K / 8 + kQK_K / 4 + 12, D::kFp16, "d"}}},
      // block_q4_K {ggml_half d; ggml_half dmin; uint8_t scales[12]; uint8_t qs[QK_K/2];}
      {12, "Q4_K", V::kChecked, 2 * kHalf + 12 + kQK_K / 2, {{0, D::kFp16, "d"}, {kHalf, D::kFp16, "dmin"}}},
      // block_q5_K {ggml_half d; ggml_half dmin; uint8_t scales[12]; uint8_t qh[QK_K/8]; uint8_t qs[QK_K/2];}
      {13, "Q5_K", V::kChecked, 2 * kHalf + 12 + kQK_K / 8 + kQK_K / 2,
       {{0, D::kFp16, "d"}, {kHalf, D::kFp16, "dmin"}}},
      // block_q6_K {uint8_t ql[QK_K/2]; uint8_t qh[QK_K/4]; int8_t scales[QK_K/16]; ggml_half d;}
      {14, "Q6_K", V::kChecked, kQK_K / 2 + kQK_K / 4 + kQK_K / 16 + kHalf,
       {{kQK_K / 2 + kQK_K / 4 + kQK_K / 16, D::kFp16, "d"}}},
      // block_q8_K {float d; int8_t qs[QK_K]; int16_t bsums[QK_K/16];}
      {15, "Q8_K", V::kChecked, 4 + kQK_K + kQK_K / 16 * 2, {{0, D::kF32, "d"}}},
      // block_iq2_xxs {ggml_half d; uint16_t qs[QK_K/8];}
      {16, "IQ2_XXS", V::kChecked, kHalf + kQK_K / 8 * 2, {{0, D::kFp16, "d"}}},
      // block_iq2_xs {ggml_half d; uint16_t qs[QK_K/8]; uint8_t scales[QK_K/32];}
      {17, "IQ2_XS", V::kChecked, kHalf + kQK_K / 8 * 2 + kQK_K / 32, {{0, D::kFp16, "d"}}},
      // block_iq3_xxs {ggml_half d; uint8_t qs[3*QK_K/8];}
      {18, "IQ3_XXS", V::kChecked, kHalf + 3 * kQK_K / 8, {{0, D::kFp16, "d"}}},
      // block_iq1_s {ggml_half d; uint8_t qs[QK_K/8]; uint16_t qh[QK_K/32];}
      {19, "IQ1_S", V::kChecked, kHalf + kQK_K / 8 + kQK_K / 32 * 2, {{0, D::kFp16, "d"}}},
      // block_iq4_nl {ggml_half d; uint8_t qs[QK4_NL/2];}, QK4_NL = 32
      {20, "IQ4_NL", V::kChecked, kHalf + 32 / 2, {{0, D::kFp16, "d"}}},
      // block_iq3_s {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t signs[QK_K/8];
      //              uint8_t scales[QK_K/64];}
      {21, "IQ3_S", V::kChecked, kHalf + kQK_K / 4 + kQK_K / 32 + kQK_K / 8 + kQK_K / 64, {{0, D::kFp16, "d"}}},
      // block_iq2_s {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t scales[QK_K/32];}
      {22, "IQ2_S", V::kChecked, kHalf + kQK_K / 4 + kQK_K / 32 + kQK_K / 32, {{0, D::kFp16, "d"}}},
      // block_iq4_xs {ggml_half d; uint16_t scales_h; uint8_t scales_l[QK_K/64]; uint8_t qs[QK_K/2];}
      {23, "IQ4_XS", V::kChecked, kHalf + 2 + kQK_K / 64 + kQK_K / 2, {{0, D::kFp16, "d"}}},
      {24, "I8", V::kNothing, 1, {}},
      {25, "I16", V::kNothing, 2, {}},
      {26, "I32", V::kNothing, 4, {}},
      {27, "I64", V::kNothing, 8, {}},
      {28, "F64", V::kChecked, 8, {{0, D::kF64, ""}}},
      // block_iq1_m {uint8_t qs[QK_K/8]; uint8_t qh[QK_K/16]; uint8_t scales[QK_K/32];}: the scale
      // is read from scales[] as four uint16_t
      {29, "IQ1_M", V::kChecked, kQK_K / 8 + kQK_K / 16 + kQK_K / 32,
       {{kQK_K / 8 + kQK_K / 16, D::kIq1mScale, "scale"}}},
      {30, "BF16", V::kChecked, 2, {{0, D::kBf16, ""}}},
      {31, "Q4_0_4_4", V::kNotAType, 0, {}},
      {32, "Q4_0_4_8", V::kNotAType, 0, {}},
      {33, "Q4_0_8_8", V::kNotAType, 0, {}},
      // block_tq1_0 {uint8_t qs[(QK_K - 4*QK_K/64)/5]; uint8_t qh[QK_K/64]; ggml_half d;}
      {34, "TQ1_0", V::kChecked, (kQK_K - 4 * kQK_K / 64) / 5 + kQK_K / 64 + kHalf,
       {{(kQK_K - 4 * kQK_K / 64) / 5 + kQK_K / 64, D::kFp16, "d"}}},
      // block_tq2_0 {uint8_t qs[QK_K/4]; ggml_half d;}
      {35, "TQ2_0", V::kChecked, kQK_K / 4 + kHalf, {{kQK_K / 4, D::kFp16, "d"}}},
      {36, "IQ4_NL_4_4", V::kNotAType, 0, {}},
      {37, "IQ4_NL_4_8", V::kNotAType, 0, {}},
      {38, "IQ4_NL_8_8", V::kNotAType, 0, {}},
      // block_mxfp4 {uint8_t e; uint8_t qs[QK_MXFP4/2];}, QK_MXFP4 = 32
      {39, "MXFP4", V::kChecked, 1 + 32 / 2, {{0, D::kE8m0, "e"}}},
      // block_nvfp4 {uint8_t d[QK_NVFP4/QK_NVFP4_SUB]; uint8_t qs[QK_NVFP4/2];}, 64 and 16:
      // "UE4M3 scales are uint8_t, all byte values are valid"
      {40, "NVFP4", V::kNothing, 64 / 16 + 64 / 2, {}},
      // block_q1_0 {ggml_half d; uint8_t qs[QK1_0/8];}, QK1_0 = 128
      {41, "Q1_0", V::kChecked, kHalf + 128 / 8, {{0, D::kFp16, "d"}}},
      // block_q2_0 {ggml_half d; uint8_t qs[QK2_0/4];}, QK2_0 = 64
      {42, "Q2_0", V::kChecked, kHalf + 64 / 4, {{0, D::kFp16, "d"}}},
  };
  return rules;
}

inline const TypeRule* FindTypeRule(uint32_t id) {
  const std::vector<TypeRule>& rules = TypeRules();
  return id < rules.size() ? &rules[id] : nullptr;
}

// `width` bytes at p as an unsigned integer in the file's byte order.
inline uint64_t LoadBits(const uint8_t* p, unsigned width, bool big_endian) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) v |= uint64_t{p[i]} << (8 * (big_endian ? width - 1 - i : i));
  return v;
}

inline void StoreBits(uint8_t* p, unsigned width, uint64_t v, bool big_endian) {
  for (unsigned i = 0; i < width; ++i) p[i] = static_cast<uint8_t>(v >> (8 * (big_endian ? width - 1 - i : i)));
}

// IEEE binary16 to double, by its definition (no bit tricks on the result).
inline double HalfToDouble(uint16_t h) {
  const bool negative = (h >> 15) != 0;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v;
  if (exponent == 31) {
    v = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    v = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal: mantissa * 2^-24
  } else {
    v = std::ldexp(static_cast<double>(mantissa + 1024), exponent - 25);  // (1 + m/1024) * 2^(e-15)
  }
  return negative ? -v : v;
}

inline double Bf16ToDouble(uint16_t h) {
  const uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline double F32ToDouble(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline double F64ToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

inline double E8m0ToDouble(uint8_t e) {
  return e == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int{e} - 127);
}

// The binary16 IQ1_M keeps in its four u16 scales (ggml's iq1m_scale_t):
// scale bits 0-3, 4-7, 8-11 and 12-15 are the top nibbles of scales 0..3.
inline uint16_t Iq1mScaleBits(const uint8_t* scales, bool big_endian) {
  uint16_t v = 0;
  for (unsigned k = 0; k < 4; ++k) {
    const uint64_t s = LoadBits(scales + 2 * k, 2, big_endian);
    v = static_cast<uint16_t>(v | (((s >> 12) & 0xf) << (4 * k)));
  }
  return v;
}

// Writes `scale` into the top nibbles of the four scales, keeping the rest.
inline void SetIq1mScaleBits(uint8_t* scales, uint16_t scale, bool big_endian) {
  for (unsigned k = 0; k < 4; ++k) {
    uint64_t s = LoadBits(scales + 2 * k, 2, big_endian);
    s = (s & 0x0fff) | (uint64_t{(scale >> (4 * k)) & 0xfu} << 12);
    StoreBits(scales + 2 * k, 2, s, big_endian);
  }
}

// The field's bits (for IQ1_M the assembled binary16) and its value.
inline uint64_t FieldBits(const Field& f, const uint8_t* unit, bool big_endian) {
  if (f.decode == Decode::kIq1mScale) return Iq1mScaleBits(unit + f.offset, big_endian);
  return LoadBits(unit + f.offset, FieldWidth(f.decode), big_endian);
}

inline double FieldValue(const Field& f, const uint8_t* unit, bool big_endian) {
  const uint64_t bits = FieldBits(f, unit, big_endian);
  switch (f.decode) {
    case Decode::kFp16:
    case Decode::kIq1mScale: return HalfToDouble(static_cast<uint16_t>(bits));
    case Decode::kBf16: return Bf16ToDouble(static_cast<uint16_t>(bits));
    case Decode::kF32: return F32ToDouble(static_cast<uint32_t>(bits));
    case Decode::kF64: return F64ToDouble(bits);
    case Decode::kE8m0: return E8m0ToDouble(static_cast<uint8_t>(bits));
  }
  return 0;
}

// Writes raw bits into a field (the assembled value for IQ1_M).
inline void SetFieldBits(const Field& f, uint8_t* unit, uint64_t bits, bool big_endian) {
  if (f.decode == Decode::kIq1mScale) {
    SetIq1mScaleBits(unit + f.offset, static_cast<uint16_t>(bits), big_endian);
  } else {
    StoreBits(unit + f.offset, FieldWidth(f.decode), bits, big_endian);
  }
}

struct Bad {
  uint64_t unit = 0;       // index from the first unit given
  uint32_t field = 0;      // index into TypeRule::fields
  uint32_t byte_in_unit = 0;
  bool nan = false;        // else an infinity
  bool negative = false;   // the sign of an infinity
  bool e8m0 = false;       // MXFP4's 0xff
  uint64_t bits = 0;       // FieldBits
};

// Every value of `n_units` units at p that ggml_validate_row_data fails on,
// in the order it would meet them. Nothing for kNothing, kRefused (the whole
// row is refused, no value is looked at) and kNotAType.
inline std::vector<Bad> BadValues(const TypeRule& rule, const uint8_t* p, uint64_t n_units, bool big_endian) {
  std::vector<Bad> out;
  if (rule.verdict != Verdict::kChecked) return out;
  for (uint64_t u = 0; u < n_units; ++u) {
    const uint8_t* unit = p + u * rule.unit_bytes;
    for (uint32_t k = 0; k < rule.fields.size(); ++k) {
      const Field& f = rule.fields[k];
      const double v = FieldValue(f, unit, big_endian);
      if (!std::isnan(v) && !std::isinf(v)) continue;
      Bad b;
      b.unit = u;
      b.field = k;
      b.byte_in_unit = f.offset;
      b.nan = std::isnan(v);
      b.negative = std::isinf(v) && v < 0;
      b.e8m0 = f.decode == Decode::kE8m0;
      b.bits = FieldBits(f, unit, big_endian);
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace ggufguard::testing::row_reference

#endif  // GGUFGUARD_TESTS_SUPPORT_GGML_ROW_REFERENCE_H_
