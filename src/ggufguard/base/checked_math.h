// Checked arithmetic for every size that comes from a file.
//
// Each helper returns false instead of wrapping, and leaves *out unspecified on
// failure. Callers must treat false as "the file lies" and record a finding;
// they never continue with a wrapped value.
#ifndef GGUFGUARD_BASE_CHECKED_MATH_H_
#define GGUFGUARD_BASE_CHECKED_MATH_H_

#include <cstdint>

namespace ggufguard {

[[nodiscard]] inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

[[nodiscard]] inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// Saturating forms, for limits and estimates that only compare: UINT64_MAX
// instead of a wrapped value.
inline uint64_t SatAdd(uint64_t a, uint64_t b) {
  uint64_t out;
  return CheckedAdd(a, b, &out) ? out : UINT64_MAX;
}
inline uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t out;
  return CheckedMul(a, b, &out) ? out : UINT64_MAX;
}

inline constexpr bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Rounds `value` up to a multiple of `alignment`, which must be a power of two
// (the caller proves it; alignment comes from the file). False on overflow.
[[nodiscard]] inline bool CheckedAlignUp(uint64_t value, uint64_t alignment, uint64_t* out) {
  if (!IsPowerOfTwo(alignment)) return false;
  uint64_t bumped;
  if (!CheckedAdd(value, alignment - 1, &bumped)) return false;
  *out = bumped & ~(alignment - 1);
  return true;
}

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_CHECKED_MATH_H_
