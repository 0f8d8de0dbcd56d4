#include "ggufguard/format/ggml_type.h"

#include <iterator>

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

namespace {

constexpr std::string_view kTurboQuant = "the TurboQuant fork (TheTom/llama-cpp-turboquant @00910b10)";
constexpr std::string_view kIkLlama = "ik_llama.cpp (ikawrakow/ik_llama.cpp @b50efcc9)";
constexpr ForkGgmlType kForkTypes[] = {
    {36, kIkLlama, "I2_S"},  // upstream's removed IQ4_NL_4_4
    {43, kTurboQuant, "TURBO2_0"},
    {44, kTurboQuant, "TURBO3_0"},
    {45, kTurboQuant, "TURBO4_0"},
    {46, kTurboQuant, "TQ3_1S"},
    {47, kTurboQuant, "TQ4_1S"},
    {98, kIkLlama, "Q8_0_X4"},
    {99, kIkLlama, "Q8_1_X4"},
    {133, kIkLlama, "Q6_0"},
    {134, kIkLlama, "IQ1_BN"},
    {135, kIkLlama, "IQ2_BN"},
    {136, kIkLlama, "Q8_K64"},
    {137, kIkLlama, "IQ2_K"},
    {138, kIkLlama, "IQ3_K"},
    {139, kIkLlama, "IQ4_K"},
    {140, kIkLlama, "IQ5_K"},
    {141, kIkLlama, "IQ6_K"},
    {144, kIkLlama, "IQ4_KS"},
    {145, kIkLlama, "IQ2_KS"},
    {146, kIkLlama, "IQ4_KSS"},
    {147, kIkLlama, "Q8_K16"},
    {148, kIkLlama, "Q8_K32"},
    {149, kIkLlama, "Q8_KR8"},
    {150, kIkLlama, "Q8_K128"},
    {151, kIkLlama, "Q8_KV"},
    {202, kIkLlama, "Q4_0_R8"},
    {206, kIkLlama, "Q5_0_R4"},
    {208, kIkLlama, "Q8_0_R8"},
    {210, kIkLlama, "Q2_K_R4"},
    {211, kIkLlama, "Q3_K_R4"},
    {212, kIkLlama, "Q4_K_R4"},
    {213, kIkLlama, "Q5_K_R4"},
    {214, kIkLlama, "Q6_K_R4"},
    {216, kIkLlama, "IQ2_XXS_R4"},
    {217, kIkLlama, "IQ2_XS_R4"},
    {218, kIkLlama, "IQ3_XXS_R4"},
    {219, kIkLlama, "IQ1_S_R4"},
    {220, kIkLlama, "IQ4_NL_R4"},
    {221, kIkLlama, "IQ3_S_R4"},
    {222, kIkLlama, "IQ2_S_R4"},
    {223, kIkLlama, "IQ4_XS_R8"},
    {229, kIkLlama, "IQ1_M_R4"},
    {230, kIkLlama, "BF16_R16"},
    {233, kIkLlama, "Q6_0_R4"},
    {335, kIkLlama, "IQ2_BN_R4"},
    {337, kIkLlama, "IQ2_K_R4"},
    {338, kIkLlama, "IQ3_K_R4"},
    {339, kIkLlama, "IQ4_K_R4"},
    {340, kIkLlama, "IQ5_K_R4"},
    {344, kIkLlama, "IQ4_KS_R4"},
    {398, kIkLlama, "Q8_KV_R8"},
    {399, kIkLlama, "Q8_K_R8"},
};

static_assert([] {
  for (size_t i = 1; i < std::size(kForkTypes); ++i) {
    if (kForkTypes[i - 1].id >= kForkTypes[i].id) return false;
  }
  return true;
}(), "kForkTypes must be sorted by id, each id once");

}  // namespace

const ForkGgmlType* FindForkGgmlType(uint32_t id) {
  for (const ForkGgmlType& t : kForkTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::string GgmlTypeTableVersion() {
  return absl::StrCat(Sv(kGgmlTypeTableCommit), ", ", kFirstUnknownGgmlType, " ids");
}

}  // namespace ggufguard
