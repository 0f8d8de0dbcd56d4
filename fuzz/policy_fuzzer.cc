// policy_fuzzer: a policy file (ParsePolicyJson), then a validation under the
// policy it gives.
//
// Input: the policy's JSON text, then a NUL byte, then a GGUF file (JSON
// text never holds a raw NUL). Without a NUL, the whole input is the policy
// and the file is corpus/valid/minimal-llama.gguf's little sibling below.
//
// A policy file is written by an operator rather than an attacker, but it
// decides what a gatekeeper lets through and it sets the limits every rule
// works with: limits of 0 or 1, max_findings_per_rule 0, alignment bounds of
// 1, disabled fatal rules and downgraded severities must give a consistent
// report, never a crash. Checks: a refused policy says why; an accepted one
// keeps min_alignment in [1, max_alignment] and max_nesting_depth under the
// hard ceiling; the report under it keeps every promise fuzz_common.h checks
// (findings inside the file, sorted, capped, with the policy's severities;
// the loader's contract for a valid report).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "ggufguard/findings/policy_file.h"

namespace {

// A v3 file with one KV (general.architecture = "llama") and one F32 tensor
// of 8 elements: enough for every family of rules to have something to say
// under an odd policy (missing hyperparameters, unknown keys, layout).
constexpr uint8_t kDefaultFile[] = {
    'G', 'G', 'U', 'F', 3, 0, 0, 0,                                     // magic, version
    1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,                     // 1 tensor, 1 KV
    20, 0, 0, 0, 0, 0, 0, 0, 'g', 'e', 'n', 'e', 'r', 'a', 'l', '.', 'a', 'r', 'c', 'h', 'i', 't', 'e', 'c', 't',
    'u', 'r', 'e', 8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'l', 'l', 'a', 'm', 'a',  // general.architecture = "llama"
    8, 0, 0, 0, 0, 0, 0, 0, 'a', '.', 'w', 'e', 'i', 'g', 'h', 't',     // tensor name
    1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,                     // n_dims 1, ne0 8, F32
    0, 0, 0, 0, 0, 0, 0, 0,                                             // offset 0
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,           // header ends at 109: pad to 128
    0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63,         // 8 x 1.0f
    0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63,
};
static_assert(sizeof(kDefaultFile) == 160, "the data must start at the aligned end of the header, 128");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  const void* nul = size == 0 ? nullptr : std::memchr(data, 0, size);
  const size_t json_size = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - data) : size;
  const std::string_view json(reinterpret_cast<const char*>(data), json_size);
  const absl::Span<const uint8_t> file = nul ? absl::Span<const uint8_t>(data + json_size + 1, size - json_size - 1)
                                             : absl::Span<const uint8_t>(kDefaultFile, sizeof(kDefaultFile));

  absl::StatusOr<Policy> policy = ParsePolicyJson(json, "fuzz.json");
  if (!policy.ok()) {
    GGUFGUARD_FUZZ_CHECK(!policy.status().message().empty(), "a policy refused without a reason");
    return 0;
  }
  const Limits& l = policy->limits;
  GGUFGUARD_FUZZ_CHECK(l.min_alignment >= 1 && l.min_alignment <= l.max_alignment,
                       "accepted alignment bounds [" + std::to_string(l.min_alignment) + ", " +
                           std::to_string(l.max_alignment) + "]");
  GGUFGUARD_FUZZ_CHECK(l.max_nesting_depth <= kHardMaxNestingDepth,
                       "accepted max_nesting_depth " + std::to_string(l.max_nesting_depth));

  const Report report = ValidateBytes(file, *policy);
  CheckReport(report, file, file, *policy);
  return 0;
}
