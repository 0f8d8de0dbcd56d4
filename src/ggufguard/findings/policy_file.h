// Policy files: a JSON document that starts from a built-in policy and
// changes its limits, severities and disabled rules (docs/policy.md).
//
// A policy decides what a gatekeeper lets through, so a policy file is
// validated as strictly as a model file: unknown or repeated fields, wrong
// types, negative or fractional numbers, values too large for their field and
// unknown rules are errors that name the field, never silently ignored.
#ifndef GGUFGUARD_FINDINGS_POLICY_FILE_H_
#define GGUFGUARD_FINDINGS_POLICY_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ggufguard/findings/policy.h"

namespace ggufguard {

// `origin` names the document in error messages and in the default policy
// name ("<base>+<origin>").
absl::StatusOr<Policy> ParsePolicyJson(std::string_view json, std::string_view origin);
// Reads at most 1 MiB from `path` (io/bounded_read.h) and parses it. With
// `text`, the bytes parsed go there: what a cache keys the policy by is then
// what was parsed, not a second read of a file that may have changed.
absl::StatusOr<Policy> LoadPolicyFile(const std::string& path, std::string* text = nullptr);

// The names policy files give the fields of Limits, in declaration order.
std::vector<std::string_view> LimitFieldNames();

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_POLICY_FILE_H_
