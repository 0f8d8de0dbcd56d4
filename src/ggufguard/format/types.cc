#include "ggufguard/format/ggml_type.h"

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/format/value_type.h"

namespace ggufguard {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "u8";
    case ValueType::kInt8: return "i8";
    case ValueType::kUint16: return "u16";
    case ValueType::kInt16: return "i16";
    case ValueType::kUint32: return "u32";
    case ValueType::kInt32: return "i32";
    case ValueType::kFloat32: return "f32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "u64";
    case ValueType::kInt64: return "i64";
    case ValueType::kFloat64: return "f64";
  }
  return "unknown";
}

std::string GgmlTypeTableVersion() {
  return absl::StrCat(Sv(kGgmlTypeTableCommit), ", ", kFirstUnknownGgmlType, " ids");
}

}  // namespace ggufguard
