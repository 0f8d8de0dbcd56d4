// Profiles: what a file is judged as, beside how hard (the policy).
//
// `llama.cpp` (the default) judges a file as a model or vocabulary for
// llama.cpp: every rule but what only ggml's generic readers refuse (GG6012).
// `gguf` judges it as a GGUF container for any ggml program
// (stable-diffusion.cpp weights, whisper.cpp, ggml's examples): every structural and safety rule, none about LLM semantics (known keys and
// hyperparameters, the vocabulary, what llama.cpp's loader aborts on). The
// chat-template rules stay: a template is code wherever it is found.
// docs/policy.md ("Profiles") lists the rules each judges.
#ifndef GGUFGUARD_FINDINGS_PROFILE_H_
#define GGUFGUARD_FINDINGS_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

enum class Profile : uint8_t { kLlamaCpp, kGguf };

std::string_view ProfileName(Profile p);                  // "llama.cpp", "gguf"
std::optional<Profile> ParseProfile(std::string_view name);  // nullopt for any other name

// Whether rule `id` is about what llama.cpp makes of a file's metadata
// (an LLM's keys, hyperparameters, vocabulary, loader aborts) rather than
// about the container: the gguf profile runs none of them.
bool JudgesLlmSemantics(RuleId id);

// Whether rule `id` is about what ggml's generic readers refuse but
// llama.cpp's model loader accepts (GG6012: ggml's gguf_init_from_file
// reading the data blob, no_alloc=false, which llama.cpp asks for only for a
// control vector, where GG9151 says it): the llama.cpp profile runs none of
// them.
bool JudgesGenericGgmlReaders(RuleId id);

inline bool ProfileRuns(Profile p, RuleId id) {
  return p == Profile::kLlamaCpp ? !JudgesGenericGgmlReaders(id) : !JudgesLlmSemantics(id);
}

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_PROFILE_H_
