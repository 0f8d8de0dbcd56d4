// GGUF metadata value types (spec table D.2 in docs/format.md).
#ifndef GGUFGUARD_FORMAT_VALUE_TYPE_H_
#define GGUFGUARD_FORMAT_VALUE_TYPE_H_

#include <cstdint>
#include <string_view>

namespace ggufguard {

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

inline constexpr uint32_t kValueTypeCount = 13;

inline constexpr bool IsKnownValueType(uint32_t id) { return id < kValueTypeCount; }

// Bytes a scalar of this type occupies on disk; 0 for STRING and ARRAY, whose
// size depends on their contents.
inline constexpr uint32_t ScalarSize(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

// The fewest bytes one value of this type can occupy: what a count must be
// multiplied by before anything is allocated for it. `length_size` is the
// width of string lengths and array counts (4 in v1, 8 later).
inline constexpr uint32_t MinEncodedSize(ValueType t, uint32_t length_size) {
  switch (t) {
    case ValueType::kString:
      return length_size;  // an empty string is just its length
    case ValueType::kArray:
      return 4 + length_size;  // element type + count of an empty array
    default:
      return ScalarSize(t);
  }
}

// v1 knew only types 0..9.
inline constexpr bool IsValueTypeInVersion(ValueType t, uint32_t version) {
  return version >= 2 || static_cast<uint32_t>(t) <= 9;
}

std::string_view ValueTypeName(ValueType t);

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_VALUE_TYPE_H_
