#include "ggufguard/deep/data_check.h"

#include "ggufguard/format/ggml_type.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_format.h"
#include "ggufguard/base/cpu.h"

namespace ggufguard {
namespace {

using K = DataCheckKind;

constexpr DataCheck Elements(K kind, uint32_t bytes) { return DataCheck{kind, bytes, 0, {0, 0}, {"", ""}}; }
constexpr DataCheck D(uint32_t block, uint16_t d_at) { return DataCheck{K::kBlockF16, block, 1, {d_at, 0}, {"d", ""}}; }
constexpr DataCheck Dm(uint32_t block, uint16_t d_at, std::string_view m) {
  return DataCheck{K::kBlockF16, block, 2, {d_at, static_cast<uint16_t>(d_at + 2)}, {"d", m}};
}
constexpr DataCheck kUnknownType = Elements(K::kUnknown, 0);

// Indexed by ggml type id; block layouts from ggml/src/ggml-common.h (the
// field each case of ggml_validate_row_data reads). Unit sizes equal the
// type table's type_size (format/types.cc); a test holds them together.
constexpr DataCheck kChecks[] = {
    Elements(K::kF32, 4),         // 0 F32
    Elements(K::kF16, 2),         // 1 F16
    D(18, 0),                     // 2 Q4_0 {d; qs[16]}
    Dm(20, 0, "m"),               // 3 Q4_1 {d, m; qs[16]}
    kUnknownType,                 // 4 Q4_2 (removed)
    kUnknownType,                 // 5 Q4_3 (removed)
    D(22, 0),                     // 6 Q5_0 {d; qh[4]; qs[16]}
    Dm(24, 0, "m"),               // 7 Q5_1 {d, m; qh[4]; qs[16]}
    D(34, 0),                     // 8 Q8_0 {d; qs[32]}
    Elements(K::kRefused, 36),    // 9 Q8_1: no case in ggml_validate_row_data
    Dm(84, 80, "dmin"),           // 10 Q2_K {scales[16]; qs[64]; d, dmin}
    D(110, 108),                  // 11 Q3_K {hmask[32]; qs[64]; scales[12]; d}
    Dm(144, 0, "dmin"),           // 12 Q4_K {d, dmin; scales[12]; qs[128]}
    Dm(176, 0, "dmin"),           // 13 Q5_K {d, dmin; scales[12]; qh[32]; qs[128]}
    D(210, 208),                  // 14 Q6_K {ql[128]; qh[64]; scales[16]; d}
    DataCheck{K::kBlockF32, 292, 1, {0, 0}, {"d", ""}},  // 15 Q8_K {float d; qs[256]; bsums[16]}
    D(66, 0),                     // 16 IQ2_XXS {d; qs[32] u16}
    D(74, 0),                     // 17 IQ2_XS {d; qs[32] u16; scales[8]}
    D(98, 0),                     // 18 IQ3_XXS {d; qs[96]}
    D(50, 0),                     // 19 IQ1_S {d; qs[32]; qh[8] u16}
    D(18, 0),                     // 20 IQ4_NL {d; qs[16]}
    D(110, 0),                    // 21 IQ3_S {d; qs[64]; qh[8]; signs[32]; scales[4]}
    D(82, 0),                     // 22 IQ2_S {d; qs[64]; qh[8]; scales[8]}
    D(136, 0),                    // 23 IQ4_XS {d; scales_h; scales_l[4]; qs[128]}
    Elements(K::kNothing, 1),     // 24 I8
    Elements(K::kNothing, 2),     // 25 I16
    Elements(K::kNothing, 4),     // 26 I32
    Elements(K::kNothing, 8),     // 27 I64
    Elements(K::kF64, 8),         // 28 F64
    DataCheck{K::kIq1mScale, 56, 1, {48, 0}, {"scale", ""}},  // 29 IQ1_M {qs[32]; qh[16]; scales[8]}
    Elements(K::kBF16, 2),        // 30 BF16
    kUnknownType,                 // 31 Q4_0_4_4 (removed)
    kUnknownType,                 // 32 Q4_0_4_8 (removed)
    kUnknownType,                 // 33 Q4_0_8_8 (removed)
    D(54, 52),                    // 34 TQ1_0 {qs[48]; qh[4]; d}
    D(66, 64),                    // 35 TQ2_0 {qs[64]; d}
    kUnknownType,                 // 36 IQ4_NL_4_4 (removed)
    kUnknownType,                 // 37 IQ4_NL_4_8 (removed)
    kUnknownType,                 // 38 IQ4_NL_8_8 (removed)
    DataCheck{K::kBlockE8M0, 17, 1, {0, 0}, {"e", ""}},  // 39 MXFP4 {e; qs[16]}
    Elements(K::kNothing, 36),    // 40 NVFP4 {d[4] UE4M3; qs[32]}: every byte is a valid scale
    D(18, 0),                     // 41 Q1_0 {d; qs[16]}
    D(18, 0),                     // 42 Q2_0 {d; qs[16]}
};
static_assert(std::size(kChecks) == kFirstUnknownGgmlType,
              "format/ggml_type.h and kChecks differ: say here what ggml_validate_row_data reads of each type id");

// The bit tests, on a value already in host order.
constexpr bool Fp16NonFinite(uint16_t h) { return (h & 0x7c00) == 0x7c00; }
constexpr bool Bf16NonFinite(uint16_t h) { return (h & 0x7f80) == 0x7f80; }
constexpr bool F32NonFinite(uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u; }
constexpr bool F64NonFinite(uint64_t u) { return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull; }

BadKind Fp16Kind(uint16_t h) { return (h & 0x03ff) ? BadKind::kNan : BadKind::kInfinity; }
BadKind Bf16Kind(uint16_t h) { return (h & 0x007f) ? BadKind::kNan : BadKind::kInfinity; }
BadKind F32Kind(uint32_t u) { return (u & 0x007fffffu) ? BadKind::kNan : BadKind::kInfinity; }
BadKind F64Kind(uint64_t u) { return (u & 0x000fffffffffffffull) ? BadKind::kNan : BadKind::kInfinity; }

// IQ1_M keeps its fp16 super-block scale in the top nibbles of its four
// u16 sub-block scales (ggml's iq1m_scale_t).
uint16_t Iq1mScale(const uint8_t* scales, ByteOrder order) {
  const uint16_t s0 = LoadUnsigned<uint16_t>(scales, order), s1 = LoadUnsigned<uint16_t>(scales + 2, order);
  const uint16_t s2 = LoadUnsigned<uint16_t>(scales + 4, order), s3 = LoadUnsigned<uint16_t>(scales + 6, order);
  return static_cast<uint16_t>((s0 >> 12) | ((s1 >> 8) & 0x00f0) | ((s2 >> 4) & 0x0f00) | (s3 & 0xf000));
}

class Recorder {
 public:
  Recorder(uint64_t first_unit, size_t max_listed, std::vector<BadValue>* listed)
      : first_(first_unit), max_(max_listed), listed_(listed) {}
  void Bad(uint64_t unit, uint32_t byte_in_unit, uint8_t field, BadKind kind, uint64_t raw) {
    ++count_;
    if (listed_ && listed_->size() < max_) listed_->push_back({first_ + unit, byte_in_unit, field, kind, raw});
  }
  uint64_t count() const { return count_; }

 private:
  uint64_t first_;
  size_t max_;
  std::vector<BadValue>* listed_;
  uint64_t count_ = 0;
};

// Units [begin, end) of p, one at a time: the reference, and what the fast
// paths fall back to where their screen finds something.
void CheckExactly(const DataCheck& c, ByteOrder order, const uint8_t* p, uint64_t begin, uint64_t end,
                  Recorder& rec) {
  const uint32_t w = c.unit_bytes;
  for (uint64_t u = begin; u < end; ++u) {
    const uint8_t* unit = p + u * w;
    switch (c.kind) {
      case K::kF32: {
        const uint32_t v = LoadUnsigned<uint32_t>(unit, order);
        if (F32NonFinite(v)) rec.Bad(u, 0, 0, F32Kind(v), v);
        break;
      }
      case K::kF64: {
        const uint64_t v = LoadUnsigned<uint64_t>(unit, order);
        if (F64NonFinite(v)) rec.Bad(u, 0, 0, F64Kind(v), v);
        break;
      }
      case K::kF16: {
        const uint16_t v = LoadUnsigned<uint16_t>(unit, order);
        if (Fp16NonFinite(v)) rec.Bad(u, 0, 0, Fp16Kind(v), v);
        break;
      }
      case K::kBF16: {
        const uint16_t v = LoadUnsigned<uint16_t>(unit, order);
        if (Bf16NonFinite(v)) rec.Bad(u, 0, 0, Bf16Kind(v), v);
        break;
      }
      case K::kBlockF16:
        for (uint8_t f = 0; f < c.n_fields; ++f) {
          const uint16_t v = LoadUnsigned<uint16_t>(unit + c.field_offset[f], order);
          if (Fp16NonFinite(v)) rec.Bad(u, c.field_offset[f], f, Fp16Kind(v), v);
        }
        break;
      case K::kBlockF32: {
        const uint32_t v = LoadUnsigned<uint32_t>(unit, order);
        if (F32NonFinite(v)) rec.Bad(u, 0, 0, F32Kind(v), v);
        break;
      }
      case K::kBlockE8M0:
        if (unit[0] == 0xff) rec.Bad(u, 0, 0, BadKind::kE8m0Nan, 0xff);
        break;
      case K::kIq1mScale: {
        const uint16_t v = Iq1mScale(unit + c.field_offset[0], order);
        if (Fp16NonFinite(v)) rec.Bad(u, c.field_offset[0], 0, Fp16Kind(v), v);
        break;
      }
      case K::kNothing:
      case K::kRefused:
      case K::kUnknown:
        return;
    }
  }
}

// Whether units [begin, end) may hold a bad value: the same tests without a
// branch per unit, so that the compiler can keep the loop tight. False means
// none; true sends the batch to CheckExactly.
bool ScreenBatch(const DataCheck& c, ByteOrder order, const uint8_t* p, uint64_t begin, uint64_t end) {
  const uint32_t w = c.unit_bytes;
  bool any = false;
  for (uint64_t u = begin; u < end; ++u) {
    const uint8_t* unit = p + u * w;
    switch (c.kind) {
      case K::kF32:
      case K::kBlockF32: any |= F32NonFinite(LoadUnsigned<uint32_t>(unit, order)); break;
      case K::kF64: any |= F64NonFinite(LoadUnsigned<uint64_t>(unit, order)); break;
      case K::kF16: any |= Fp16NonFinite(LoadUnsigned<uint16_t>(unit, order)); break;
      case K::kBF16: any |= Bf16NonFinite(LoadUnsigned<uint16_t>(unit, order)); break;
      case K::kBlockF16:
        any |= Fp16NonFinite(LoadUnsigned<uint16_t>(unit + c.field_offset[0], order));
        if (c.n_fields == 2) any |= Fp16NonFinite(LoadUnsigned<uint16_t>(unit + c.field_offset[1], order));
        break;
      case K::kBlockE8M0: any |= unit[0] == 0xff; break;
      case K::kIq1mScale: any |= Fp16NonFinite(Iq1mScale(unit + c.field_offset[0], order)); break;
      default: return false;
    }
  }
  return any;
}

constexpr uint64_t kBatchUnits = 256;

uint64_t CheckScalar(const DataCheck& c, ByteOrder order, const uint8_t* p, uint64_t n, Recorder& rec) {
  for (uint64_t b = 0; b < n; b += kBatchUnits) {
    const uint64_t e = n - b < kBatchUnits ? n : b + kBatchUnits;
    if (ScreenBatch(c, order, p, b, e)) CheckExactly(c, order, p, b, e, rec);
  }
  return rec.count();
}

// The block types of a little-endian file on a little-endian host, a batch
// at a time with neither a switch nor a byte swap per block, which
// ScreenBatch's loop keeps. One load per block of the field, or of the two
// adjacent fields (d, m / d, dmin), widened to 32 bits; a field is non-finite
// when its exponent bits are all set, i.e. when adding the exponent's lowest
// bit to the masked field carries into the bit above the exponent
// (fp16: (h & 0x7c00) + 0x0400 reaches 0x8000 only from 0x7c00), so a block
// costs an AND, an ADD and an OR. A batch whose screen fires is checked
// exactly, as everywhere else. On data in L2, where a pread leaves it
// (bench/deep_bench with 1 MiB buffers, docs/performance.md): Q4_0 13.8 ->
// 20.6 GB/s, Q8_0 19 -> 34, Q4_K 54 -> 120, MXFP4 5.7 -> 17.
template <typename Load>
bool ScreenFieldsLe(const uint8_t* p, uint64_t begin, uint64_t end, uint32_t w, uint32_t at, uint32_t mask,
                    uint32_t add, uint32_t top) {
  uint32_t acc = 0;
  const uint8_t* q = p + begin * w + at;
  for (uint64_t u = begin; u < end; ++u, q += w) {
    Load v;
    std::memcpy(&v, q, sizeof(v));
    acc |= (static_cast<uint32_t>(v) & mask) + add;
  }
  return (acc & top) != 0;
}

// False where the fast screen does not apply (the caller then takes
// CheckScalar); true when it ran, with the bad values recorded.
bool CheckBlocksLe(const DataCheck& c, ByteOrder order, const uint8_t* p, uint64_t n, Recorder& rec) {
  if (order != ByteOrder::kLittle || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) return false;
  const uint32_t w = c.unit_bytes;
  bool (*screen)(const uint8_t*, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) = nullptr;
  uint32_t mask = 0, add = 0, top = 0;
  if (c.kind == K::kBlockF16 && c.n_fields == 1) {
    screen = ScreenFieldsLe<uint16_t>, mask = 0x7c00, add = 0x0400, top = 0x8000;
  } else if (c.kind == K::kBlockF16 && c.n_fields == 2 && c.field_offset[1] == c.field_offset[0] + 2) {
    screen = ScreenFieldsLe<uint32_t>, mask = 0x7c007c00, add = 0x04000400, top = 0x80008000;
  } else if (c.kind == K::kBlockF32) {
    screen = ScreenFieldsLe<uint32_t>, mask = 0x7f800000, add = 0x00800000, top = 0x80000000;
  } else if (c.kind == K::kBlockE8M0) {
    screen = ScreenFieldsLe<uint8_t>, mask = 0xff, add = 0x01, top = 0x100;
  } else {
    return false;
  }
  const uint32_t at = c.kind == K::kBlockF16 ? c.field_offset[0] : 0;
  const bool prefetch = n > (uint64_t{1} << 20) / w;
  for (uint64_t b = 0; b < n; b += kBatchUnits) {
    const uint64_t e = n - b < kBatchUnits ? n : b + kBatchUnits;
    // The lines of the next batch's fields, asked for before this batch is
    // read: a load of 1-4 bytes per block does not keep enough lines in
    // flight to stream from DRAM (bench/deep_bench, 64 MiB, best of 3: Q4_0
    // 5.3 -> 6.7 GB/s, Q8_0 6.4 -> 7.8, MXFP4 5.0 -> 7.7). Every line for
    // blocks of up to 64 bytes, the field's line of each block for longer
    // ones (whose other lines the screen never reads); only addresses inside
    // [p, p + n * w). Not for a span of L2's size or less: that is a pread's
    // buffer, just written and in cache, where the prefetches only cost
    // (1 MiB: Q4_K 124 -> 75 GB/s, Q8_0 30 -> 23).
    if (prefetch && e < n) {
      const uint64_t step = w < 64 ? 64 : w;
      const uint8_t* next_end = p + (n - e < kBatchUnits ? n : e + kBatchUnits) * w;
      for (const uint8_t* line = p + e * w + at; line < next_end; line += step) __builtin_prefetch(line);
    }
    if (screen(p, b, e, w, at, mask, add, top)) CheckExactly(c, order, p, b, e, rec);
  }
  return true;
}

#if defined(__x86_64__)
// The element types, 1 KiB at a time: a value is non-finite when its
// exponent bits are all set, one AND and one compare per 32 bytes whatever
// the width. A big-endian file's values are compared against the mask's
// bytes swapped. A batch whose screen fires is checked exactly.
template <int kLaneBits>
__attribute__((target("avx2"))) __m256i ExponentHits(__m256i v, __m256i mask) {
  const __m256i e = _mm256_and_si256(v, mask);
  if constexpr (kLaneBits == 16) return _mm256_cmpeq_epi16(e, mask);
  if constexpr (kLaneBits == 32) return _mm256_cmpeq_epi32(e, mask);
  return _mm256_cmpeq_epi64(e, mask);
}

template <int kLaneBits>
__attribute__((target("avx2"))) uint64_t CheckElementsAvx2(const DataCheck& c, ByteOrder order, const uint8_t* p,
                                                            uint64_t n, uint64_t mask_host, Recorder& rec) {
  uint64_t m = mask_host;
  if (order == ByteOrder::kBig) {
    if constexpr (kLaneBits == 16) m = __builtin_bswap16(static_cast<uint16_t>(m));
    if constexpr (kLaneBits == 32) m = __builtin_bswap32(static_cast<uint32_t>(m));
    if constexpr (kLaneBits == 64) m = __builtin_bswap64(m);
  }
  __m256i mask;
  if constexpr (kLaneBits == 16) mask = _mm256_set1_epi16(static_cast<int16_t>(m));
  if constexpr (kLaneBits == 32) mask = _mm256_set1_epi32(static_cast<int32_t>(m));
  if constexpr (kLaneBits == 64) mask = _mm256_set1_epi64x(static_cast<int64_t>(m));
  constexpr uint64_t kBatchBytes = 1024;
  const uint64_t per_batch = kBatchBytes / c.unit_bytes;
  const uint64_t batches = n / per_batch;
  for (uint64_t b = 0; b < batches; ++b) {
    const uint8_t* q = p + b * kBatchBytes;
    __m256i hits = _mm256_setzero_si256();
    for (int i = 0; i < 32; i += 4) {
      hits = _mm256_or_si256(hits, ExponentHits<kLaneBits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * i)), mask));
      hits = _mm256_or_si256(hits, ExponentHits<kLaneBits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * i + 32)), mask));
      hits = _mm256_or_si256(hits, ExponentHits<kLaneBits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * i + 64)), mask));
      hits = _mm256_or_si256(hits, ExponentHits<kLaneBits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * i + 96)), mask));
    }
    if (!_mm256_testz_si256(hits, hits)) CheckExactly(c, order, p, b * per_batch, (b + 1) * per_batch, rec);
  }
  CheckExactly(c, order, p, batches * per_batch, n, rec);
  return rec.count();
}
#endif

}  // namespace

const DataCheck& DataCheckFor(uint32_t ggml_type) {
  if (ggml_type >= sizeof(kChecks) / sizeof(kChecks[0])) return kUnknownType;
  return kChecks[ggml_type];
}

uint64_t CheckDataUnitsScalar(const DataCheck& check, ByteOrder order, const uint8_t* p, uint64_t n_units,
                              uint64_t first_unit, size_t max_listed, std::vector<BadValue>* listed) {
  Recorder rec(first_unit, max_listed, listed);
  return CheckScalar(check, order, p, n_units, rec);
}

uint64_t CheckDataUnits(const DataCheck& check, ByteOrder order, const uint8_t* p, uint64_t n_units,
                        uint64_t first_unit, size_t max_listed, std::vector<BadValue>* listed) {
  Recorder rec(first_unit, max_listed, listed);
#if defined(__x86_64__)
  if (CpuHasAvx2()) {
    switch (check.kind) {
      case K::kF16: return CheckElementsAvx2<16>(check, order, p, n_units, 0x7c00, rec);
      case K::kBF16: return CheckElementsAvx2<16>(check, order, p, n_units, 0x7f80, rec);
      case K::kF32: return CheckElementsAvx2<32>(check, order, p, n_units, 0x7f800000u, rec);
      case K::kF64: return CheckElementsAvx2<64>(check, order, p, n_units, 0x7ff0000000000000ull, rec);
      default: break;
    }
  }
#endif
  if (CheckBlocksLe(check, order, p, n_units, rec)) return rec.count();
  return CheckScalar(check, order, p, n_units, rec);
}

std::string DescribeBadValue(const DataCheck& check, const BadValue& bad) {
  if (bad.kind == BadKind::kE8m0Nan) return "E8M0 exponent 0xff (NaN)";
  const bool negative = [&] {
    switch (check.kind) {
      case K::kF32:
      case K::kBlockF32: return (bad.raw >> 31) & 1;
      case K::kF64: return (bad.raw >> 63) & 1;
      default: return (bad.raw >> 15) & 1;
    }
  }();
  int hex_digits = 4;
  if (check.kind == K::kF32 || check.kind == K::kBlockF32) hex_digits = 8;
  if (check.kind == K::kF64) hex_digits = 16;
  const char* what = bad.kind == BadKind::kNan ? "NaN" : negative ? "-inf" : "+inf";
  return absl::StrFormat("%s (0x%0*x)", what, hex_digits, bad.raw);
}

}  // namespace ggufguard
