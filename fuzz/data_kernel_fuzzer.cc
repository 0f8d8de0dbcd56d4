// data_kernel_fuzzer: the tensor data kernels of --deep (deep/data_check.h)
// on random units of every ggml type, differentially.
//
// Input: byte 0 picks the type id (mod the table's size plus one: the last
// value is an id past the table), byte 1 the byte order (bit 0), how many
// times the data is repeated (bits 1-3: 1 to 128 copies, at most 256 KiB, so
// that a short input still crosses the 1 KiB vector batch and the 256-unit
// scalar batch), whether the units start at an odd address (bit 4) and a
// small listing cap (bits 5-7: 1 to 8); the rest is the data, cut to whole
// units. The data lies in a buffer of exactly its size, so ASan sees a read
// past the last unit.
//
// Checks:
//   - CheckDataUnits (the AVX2 paths where the CPU has AVX2) and
//     CheckDataUnitsScalar give the same count, and list the same values
//     (unit, byte in unit, field, kind, bits), under the small cap and with
//     no cap;
//   - both agree with the independent reference of ggml_validate_row_data
//     (tests/support/ggml_row_reference.h: values decoded to double, one unit
//     at a time), so the scalar screen is checked too, not only the vectors;
//   - the listing is min(count, cap) long, in unit order, each value inside
//     the units given and numbered from the first unit given;
//   - the units split in two at a point taken from the input's hash, each
//     part numbered from where it starts, add up to the whole (what the
//     workers over chunks rely on);
//   - DescribeBadValue is printable ASCII.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "ggufguard/deep/data_check.h"
#include "ggufguard/format/ggml_type.h"
#include "tests/support/ggml_row_reference.h"

namespace ggufguard::fuzz {
namespace {

namespace ref = testing::row_reference;

constexpr size_t kMaxDataBytes = size_t{256} << 10;

std::string Show(const BadValue& b) {
  return "unit " + std::to_string(b.unit) + " byte " + std::to_string(b.byte_in_unit) + " field " +
         std::to_string(b.field) + " kind " + std::to_string(static_cast<int>(b.kind)) + " bits " +
         std::to_string(b.raw);
}

bool Same(const BadValue& a, const BadValue& b) {
  return a.unit == b.unit && a.byte_in_unit == b.byte_in_unit && a.field == b.field && a.kind == b.kind &&
         a.raw == b.raw;
}

struct Run {
  uint64_t count = 0;
  std::vector<BadValue> listed;
};

Run Kernel(bool scalar, const DataCheck& c, ByteOrder order, const uint8_t* p, uint64_t n, uint64_t first,
           size_t cap) {
  Run r;
  r.count = scalar ? CheckDataUnitsScalar(c, order, p, n, first, cap, &r.listed)
                   : CheckDataUnits(c, order, p, n, first, cap, &r.listed);
  return r;
}

void CheckSameRun(const Run& a, const Run& b, const std::string& what) {
  GGUFGUARD_FUZZ_CHECK(a.count == b.count,
                       what + ": counts " + std::to_string(a.count) + " and " + std::to_string(b.count));
  GGUFGUARD_FUZZ_CHECK(a.listed.size() == b.listed.size(), what + ": listed " + std::to_string(a.listed.size()) +
                                                               " and " + std::to_string(b.listed.size()));
  for (size_t i = 0; i < a.listed.size(); ++i) {
    GGUFGUARD_FUZZ_CHECK(Same(a.listed[i], b.listed[i]), what + ": value " + std::to_string(i) + ": " +
                                                             Show(a.listed[i]) + " and " + Show(b.listed[i]));
  }
}

// What the reference says, as the kernels would list it.
Run Reference(uint32_t id, const uint8_t* p, uint64_t n, bool be, uint64_t first, size_t cap) {
  Run r;
  const ref::TypeRule* rule = ref::FindTypeRule(id);
  if (rule == nullptr) return r;
  const std::vector<ref::Bad> bad = ref::BadValues(*rule, p, n, be);
  r.count = bad.size();
  for (size_t i = 0; i < bad.size() && i < cap; ++i) {
    const ref::Bad& b = bad[i];
    r.listed.push_back(BadValue{first + b.unit, b.byte_in_unit, static_cast<uint8_t>(b.field),
                                b.e8m0 ? BadKind::kE8m0Nan : b.nan ? BadKind::kNan : BadKind::kInfinity, b.bits});
  }
  return r;
}

}  // namespace
}  // namespace ggufguard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  if (size < 2) return 0;
  const uint32_t table = static_cast<uint32_t>(AllGgmlTypes().size());
  const uint32_t id = data[0] % (table + 1);  // `table` itself: an id past the table
  const bool be = data[1] & 1;
  const size_t copies = size_t{1} << ((data[1] >> 1) & 7);
  const bool odd = (data[1] >> 4) & 1;
  const size_t small_cap = 1 + (data[1] >> 5);
  const ByteOrder order = be ? ByteOrder::kBig : ByteOrder::kLittle;
  const DataCheck& check = DataCheckFor(id);
  const uint64_t hash = InputHash(data, size);

  // The data, repeated, cut to whole units, in a buffer of exactly its size.
  const uint8_t* body = data + 2;
  const size_t body_size = size - 2;
  const uint64_t w = check.unit_bytes;
  size_t bytes = std::min(body_size * copies, kMaxDataBytes);
  const uint64_t units = w == 0 ? 0 : bytes / w;
  bytes = static_cast<size_t>(units * w);
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[bytes + (odd ? 1 : 0)]);
  uint8_t* p = buffer.get() + (odd ? 1 : 0);
  for (size_t i = 0; i < bytes; ++i) p[i] = body[i % body_size];
  const uint64_t first = (hash >> 8) % 4 == 0 ? 0 : hash >> 24;

  const std::string type = std::to_string(id) + (be ? " big-endian" : " little-endian") + ", " +
                           std::to_string(units) + " units";
  for (size_t cap : {small_cap, SIZE_MAX}) {
    const std::string what = "type " + type + ", cap " + (cap == SIZE_MAX ? "none" : std::to_string(cap));
    const Run fast = Kernel(false, check, order, p, units, first, cap);
    const Run scalar = Kernel(true, check, order, p, units, first, cap);
    CheckSameRun(fast, scalar, what + ": CheckDataUnits vs CheckDataUnitsScalar");
    CheckSameRun(scalar, Reference(id, p, units, be, first, cap), what + ": CheckDataUnitsScalar vs the reference");
    GGUFGUARD_FUZZ_CHECK(fast.listed.size() == std::min<uint64_t>(fast.count, cap), what + ": listing length");
    for (size_t i = 0; i < fast.listed.size(); ++i) {
      const BadValue& b = fast.listed[i];
      GGUFGUARD_FUZZ_CHECK(b.unit >= first && b.unit - first < units && b.byte_in_unit < w,
                           what + ": value outside the units: " + Show(b));
      if (i > 0) {
        const BadValue& a = fast.listed[i - 1];
        GGUFGUARD_FUZZ_CHECK(a.unit < b.unit || (a.unit == b.unit && a.byte_in_unit < b.byte_in_unit),
                             what + ": out of order: " + Show(a) + " then " + Show(b));
      }
      CheckPrintable(DescribeBadValue(check, b), "DescribeBadValue");
    }
  }

  // Two parts, each numbered from its start, make the whole.
  if (units > 0) {
    const uint64_t cut = hash % (units + 1);
    const Run whole = Kernel(false, check, order, p, units, 0, SIZE_MAX);
    Run parts = Kernel(false, check, order, p, cut, 0, SIZE_MAX);
    const Run second = Kernel(false, check, order, p + cut * w, units - cut, cut, SIZE_MAX);
    parts.count += second.count;
    parts.listed.insert(parts.listed.end(), second.listed.begin(), second.listed.end());
    CheckSameRun(whole, parts, "type " + type + ", cut at unit " + std::to_string(cut));
  }
  return 0;
}
