#include "ggufguard/format/header.h"

#include <cstring>

namespace ggufguard {

std::optional<uint64_t> ExactU16(const KeyValue* kv) {
  if (kv == nullptr || kv->type() != ValueType::kUint16) return std::nullopt;
  return kv->value().AsUnsigned();
}

std::optional<uint64_t> Value::AsUnsigned() const {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kBool:
      return bytes[0];
    case ValueType::kUint16:
      return LoadUnsigned<uint16_t>(bytes.data(), order);
    case ValueType::kUint32:
      return LoadUnsigned<uint32_t>(bytes.data(), order);
    case ValueType::kUint64:
      return LoadUnsigned<uint64_t>(bytes.data(), order);
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: {
      std::optional<int64_t> s = AsSigned();
      if (!s.has_value() || *s < 0) return std::nullopt;
      return static_cast<uint64_t>(*s);
    }
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> Value::AsSigned() const {
  switch (type) {
    case ValueType::kInt8:
      return static_cast<int8_t>(bytes[0]);
    case ValueType::kInt16:
      return static_cast<int16_t>(LoadUnsigned<uint16_t>(bytes.data(), order));
    case ValueType::kInt32:
      return static_cast<int32_t>(LoadUnsigned<uint32_t>(bytes.data(), order));
    case ValueType::kInt64:
      return static_cast<int64_t>(LoadUnsigned<uint64_t>(bytes.data(), order));
    case ValueType::kUint8:
    case ValueType::kBool:
    case ValueType::kUint16:
    case ValueType::kUint32:
    case ValueType::kUint64: {
      uint64_t u = *AsUnsigned();
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(u);
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> Value::AsDouble() const {
  if (type == ValueType::kFloat32) {
    uint32_t bits = LoadUnsigned<uint32_t>(bytes.data(), order);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  if (type == ValueType::kFloat64) {
    uint64_t bits = LoadUnsigned<uint64_t>(bytes.data(), order);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  return std::nullopt;
}

const KeyValue* GgufHeader::Find(std::string_view key) const {
  for (const KeyValue& kv : kvs) {
    if (kv.key() == key) return &kv;
  }
  return nullptr;
}

}  // namespace ggufguard
