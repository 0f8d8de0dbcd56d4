// The recommended sampler settings a file carries (general.sampling.*,
// llama.cpp since 2025-11, read by mistral.rs too): every reply a chat
// front-end samples uses them unless the user sets the same option, so the
// report shows them, as llama.cpp reads them, beside GG9163's findings.
#ifndef GGUFGUARD_RULES_SAMPLING_RULES_H_
#define GGUFGUARD_RULES_SAMPLING_RULES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard {

// One general.sampling.* key present in the file, as llama.cpp's
// common_init_from_params takes it: the value's text form (gguf_kv_to_str)
// read with strtol or strtof (the sequence: split at ';').
struct SamplingSetting {
  std::string_view key;   // "general.sampling.temp": one of llama.cpp's twelve names
  uint64_t offset;        // file offset of the value
  std::string written;    // the value as the file has it, printable ASCII ("f32 0.7", "string 'hot'")
  // What llama.cpp uses, printable ASCII: the number ("0.7", "-1"), the
  // sampler names, or "ignored" when it reads nothing and keeps its default.
  std::string llama_cpp;
};

// At most one entry per name, in llama.cpp's order of the names (bounded:
// twelve entries whatever the file holds).
struct SamplingSettings {
  std::vector<SamplingSetting> listed;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_SAMPLING_RULES_H_
