#include "bench/hostile_inputs.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ggufguard::bench {

using testing::GgufBuilder;
using testing::GgufValue;

std::string_view HostileKindName(HostileKind kind) {
  switch (kind) {
    case HostileKind::kManyKeys: return "many-keys";
    case HostileKind::kManyTemplates: return "many-templates";
    case HostileKind::kKeyCollisions: return "key-collisions";
    case HostileKind::kEmptyKeys: return "empty-keys";
    case HostileKind::kManyTensors: return "many-tensors";
  }
  return "?";
}

GgufBuilder HostileBuilder(HostileKind kind, uint32_t n) {
  GgufBuilder b;
  switch (kind) {
    case HostileKind::kManyKeys:
      for (uint32_t i = 0; i < n; ++i) b.AddKv(absl::StrFormat("k.%07u", i), GgufValue::U8(static_cast<uint8_t>(i)));
      break;
    case HostileKind::kManyTemplates:
      b.AddKv("general.architecture", GgufValue::Str("llama"));
      b.AddKv("general.name", GgufValue::Str("many templates"));
      b.AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"));  // vocabulary-only, an empty one
      for (uint32_t i = 0; i < n; ++i) {
        b.AddKv(absl::StrCat("tokenizer.chat_template.t", i), GgufValue::Str("{{ bos_token }}"));
      }
      break;
    case HostileKind::kKeyCollisions:
      for (uint32_t i = 0; i < n / 2; i += 2) {
        b.AddKv(absl::StrCat("c.", i), GgufValue::U32(i));
        b.AddKv(absl::StrCat("C.", i), GgufValue::U32(i + 1));
      }
      for (uint32_t i = n / 2 - (n / 2) % 2; i < n; ++i) {
        b.AddKv(absl::StrCat("general.name", absl::string_view("\0", 1), i), GgufValue::Str(absl::StrCat("name ", i)));
      }
      break;
    case HostileKind::kEmptyKeys:
      for (uint32_t i = 0; i < n; ++i) b.AddKv("", GgufValue::U8(0));
      break;
    case HostileKind::kManyTensors:
      for (uint32_t i = 0; i < n; ++i) b.AddTensor(absl::StrCat("t.", i / 2), {1}, /*F32*/ 0);
      break;
  }
  return b;
}

}  // namespace ggufguard::bench
