// The one place that ranks exit codes (cli.h).
#include "ggufguard/cli/cli.h"
#include "ggufguard/validate.h"

namespace ggufguard {
namespace {

// Higher is worse: what a gatekeeper must hear first.
int Rank(int code) {
  switch (code) {
    case kExitValid: return 0;
    case kExitInconclusive: return 1;
    case kExitInvalid: return 2;
    case kExitUsage: return 3;
    case kExitIo: return 4;
    case kExitInternal: return 5;
  }
  return 5;  // an unknown code is treated as the worst: a bug
}

}  // namespace

int CombineExitCodes(int a, int b) { return Rank(a) >= Rank(b) ? a : b; }

int ExitCodeOf(const Report* report) { return report == nullptr ? kExitIo : ExitCodeForVerdict(report->verdict()); }

int ExitCodeForVerdict(Report::Verdict verdict) {
  switch (verdict) {
    case Report::Verdict::kValid: return kExitValid;
    case Report::Verdict::kInvalid: return kExitInvalid;
    case Report::Verdict::kInconclusive: return kExitInconclusive;
  }
  return kExitInternal;  // unreachable: every verdict is listed
}

}  // namespace ggufguard
