// Profiles: what a file is judged as, beside how hard (the policy).
//
// `llama.cpp` (the default) judges a file as a model or vocabulary for
// llama.cpp: every rule but what only ggml's generic readers refuse (GG6012).
// `gguf` judges it as a GGUF container for any ggml program
// (stable-diffusion.cpp weights, whisper.cpp, ggml's examples): every structural and safety rule, none about LLM semantics (known keys and
// hyperparameters, the vocabulary, what llama.cpp's loader aborts on). The
// chat-template rules stay: a template is code wherever it is found.
//
// The other profiles are runtimes that load GGUF files with readers of their
// own (runtimes/runtime_tables.h says which sources, at which commit):
// `ollama` (its Go reader, then llama-server), `vllm` (gguf-py's GGUFReader
// under transformers and vLLM's GGUF loader), `mistral.rs` and `candle`
// (candle-core's GGUF reader). `ollama` judges what `llama.cpp` judges, since
// ollama serves every GGUF model through llama-server; the other three run
// the container and safety rules, as `gguf` does, and their runtime's rules.
//
// A profile named by the user (--profile, repeatable, or a policy file's
// "profile") means "this file must load there": a refusal by that runtime is
// an error. docs/policy.md ("Profiles") lists the rules each judges.
#ifndef GGUFGUARD_FINDINGS_PROFILE_H_
#define GGUFGUARD_FINDINGS_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

enum class Profile : uint8_t { kLlamaCpp, kGguf, kOllama, kVllm, kMistralRs, kCandle };
inline constexpr int kProfileCount = 6;

std::string_view ProfileName(Profile p);  // "llama.cpp", "gguf", "ollama", "vllm", "mistral.rs", "candle"
std::optional<Profile> ParseProfile(std::string_view name);  // nullopt for any other name ("all" included)
// The names ParseProfile takes, and "all", for messages: "llama.cpp, gguf, ...".
std::string_view ProfileNamesForHelp();

// A set of profiles, one bit each.
class ProfileSet {
 public:
  constexpr ProfileSet() = default;
  constexpr explicit ProfileSet(Profile p) : bits_(Bit(p)) {}
  static constexpr ProfileSet All() {
    ProfileSet s;
    s.bits_ = (1u << kProfileCount) - 1;
    return s;
  }
  // Every runtime: all profiles but `gguf`, which is no runtime.
  static constexpr ProfileSet Runtimes() {
    ProfileSet s = All();
    s.bits_ &= static_cast<uint8_t>(~Bit(Profile::kGguf));
    return s;
  }
  constexpr bool Has(Profile p) const { return (bits_ & Bit(p)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr void Add(Profile p) { bits_ |= Bit(p); }
  constexpr void Add(ProfileSet s) { bits_ |= s.bits_; }
  constexpr ProfileSet Intersect(ProfileSet s) const {
    ProfileSet out;
    out.bits_ = bits_ & s.bits_;
    return out;
  }
  constexpr bool operator==(const ProfileSet& o) const { return bits_ == o.bits_; }
  // For each profile in the set, in enum order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (int i = 0; i < kProfileCount; ++i) {
      if (bits_ & (1u << i)) fn(static_cast<Profile>(i));
    }
  }

 private:
  static constexpr uint8_t Bit(Profile p) { return static_cast<uint8_t>(1u << static_cast<int>(p)); }
  uint8_t bits_ = 0;
};

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

// Whether profile `p` runs rule `id`. The runtime rules (GG9200-GG9299,
// runtimes/runtime_rules.h) are none of the families above: every profile
// runs them, since they fill the report's verdict for each runtime.
inline bool ProfileRuns(Profile p, RuleId id) {
  switch (p) {
    case Profile::kLlamaCpp:
    case Profile::kOllama:  // ollama serves GGUF models through llama-server
      return !JudgesGenericGgmlReaders(id);
    case Profile::kGguf:
      return !JudgesLlmSemantics(id);
    case Profile::kVllm:
    case Profile::kMistralRs:
    case Profile::kCandle:
      return !JudgesLlmSemantics(id) && !JudgesGenericGgmlReaders(id);
  }
  return true;
}

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_PROFILE_H_
