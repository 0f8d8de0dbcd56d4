// The command line, as a function so tests can drive it without a process.
#ifndef GGUFGUARD_CLI_CLI_H_
#define GGUFGUARD_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace ggufguard {

// The exit codes are the CLI's API: a gatekeeper accepts only kValid.
enum ExitCode : int {
  kExitValid = 0,     // every file valid (warnings allowed)
  kExitInvalid = 1,   // at least one file has an error finding
  kExitUsage = 2,     // bad command line or policy file
  kExitIo = 3,        // a file could not be read
  kExitInternal = 4,  // a bug in ggufguard
};

// args excludes the program name. Reads standard input for "-".
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ggufguard

#endif  // GGUFGUARD_CLI_CLI_H_
