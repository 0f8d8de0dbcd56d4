// The command line, as a function so tests can drive it without a process.
#ifndef GGUFGUARD_CLI_CLI_H_
#define GGUFGUARD_CLI_CLI_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ggufguard/findings/policy.h"
#include "ggufguard/validate.h"

namespace ggufguard {

// The exit codes are the CLI's API: a gatekeeper accepts only kValid.
enum ExitCode : int {
  kExitValid = 0,     // every file valid (warnings allowed)
  kExitInvalid = 1,   // at least one file has an error finding
  kExitUsage = 2,     // bad command line or policy file
  kExitIo = 3,        // a file could not be read
  kExitInternal = 4,  // a bug in ggufguard
  kExitInconclusive = 5,  // no error, but something was not checked (Report::not_checked)
};

// The exit code of a run over several files (or shards) from two of them:
// internal 4 > I/O 3 > invalid 1 > inconclusive 5 > valid 0. Not the
// larger number: an inconclusive file must not hide an invalid one.
int CombineExitCodes(int a, int b);

// A verdict's exit code: kExitValid, kExitInvalid or kExitInconclusive.
int ExitCodeForVerdict(Report::Verdict verdict);
// One input's exit code: kExitIo without a report, else its verdict's.
int ExitCodeOf(const Report* report);

// args excludes the program name. Reads standard input for "-".
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `ggufguard scan ARGS` (cli/scan.cc); args exclude "scan".
int RunScan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// --policy: a built-in name or a policy file; on failure says why on `err`
// (escaped) and returns nullopt, a usage error.
// `profiles` (--profile, given once or more), when not empty, replace the
// policy's profiles and name them: the file must load in each runtime among
// them (Policy::profiles_named). With `policy_text`, a policy file's bytes as
// parsed go there (what scan's cache keys the policy by: the bytes that
// decided, not a second read).
std::optional<Policy> LoadPolicyForCli(const std::string& name, std::ostream& err,
                                       const std::vector<std::string>& profiles = {},
                                       std::string* policy_text = nullptr);

}  // namespace ggufguard

#endif  // GGUFGUARD_CLI_CLI_H_
