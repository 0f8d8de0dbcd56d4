// Suppressions and baselines: findings a reviewer has already judged, set
// aside so that a CI gate fails only on what is new. Both are applied to a
// finished report (ApplyTriage) and never hide a finding silently: a waived
// finding is listed apart with its reason (JSON "waived", SARIF
// "suppressions", text "waived" lines), and an entry that cannot waive
// (expired, without a reason) leaves the finding standing with a note.
// docs/policy.md ("Suppressions and baselines") describes the files.
#ifndef GGUFGUARD_REPORT_TRIAGE_H_
#define GGUFGUARD_REPORT_TRIAGE_H_

#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/validate.h"

namespace ggufguard {

// One entry of a --suppressions file.
struct Suppression {
  RuleId rule;
  std::string sha256;        // the file's SHA-256 (lower-case hex), or empty
  std::string path_pattern;  // fnmatch(3) pattern on the path as given, or empty
  std::string subject;       // a key or tensor name the finding must be about, or empty
  std::string reason;        // escaped; empty: the entry waives nothing
  std::string expires;       // YYYY-MM-DD as written
  // Why the entry waives nothing (it expired); empty
  // when it is in force.
  std::string inactive_because;
};

struct Suppressions {
  std::vector<Suppression> entries;
  bool NeedsHash() const;  // some entry is pinned to a file's SHA-256
};

// Reads a suppressions file (JSON, see docs/policy.md), at most 64 MiB
// (io/bounded_read.h). Everything the file cannot mean is an error naming
// its line (a usage error: the file says something we cannot honour): not
// JSON, a key given twice at any depth (base/strict_json.h), an unknown
// field, a missing or unknown rule, an entry with neither sha256 nor path,
// a missing or blank reason, a missing expiry or one that is not a date of
// the calendar (2026-02-30). An entry past its date (before `today`,
// YYYY-MM-DD, UTC) is kept but inactive: it fails closed.
absl::StatusOr<Suppressions> LoadSuppressions(const std::string& path, std::string_view today);
// The same from the file's text; `origin` names it in errors.
absl::StatusOr<Suppressions> ParseSuppressions(std::string_view text, std::string_view origin, std::string_view today);

// Today's date in UTC as YYYY-MM-DD; the environment variable
// GGUFGUARD_TODAY, when set, stands in for the clock (tests, reproducible runs).
std::string TodayUtc();

// The findings of an earlier JSON report (`validate --format json --hash`
// or `scan --hash`'s JSON lines): a finding is old when the same rule fired
// at the same offset in a file with the same SHA-256. The hash pins the
// bytes, so the offset names one place; a file that changed in any byte has
// no old findings.
struct Baseline {
  std::string name;  // the baseline file's path, escaped, as the reason given
  std::set<std::tuple<std::string, std::string, uint64_t>> findings;  // (rule code, sha256, offset)
};
// At most 64 MiB; a key given twice, a file entry without its SHA-256 and a
// malformed finding are errors naming the line.
absl::StatusOr<Baseline> LoadBaseline(const std::string& path);
// The same from the text; `origin` names it in errors, `name` in waivers.
absl::StatusOr<Baseline> ParseBaseline(std::string_view text, std::string_view origin, std::string_view name);

// The key or tensor a finding's offset lies in: the KV or tensor info record
// that holds it, else the tensor whose data holds it; empty when none.
std::string SubjectAt(const GgufHeader& header, uint64_t offset);

// Moves every listed finding that an active suppression or the baseline
// matches from report->findings to report->waived, notes each finding an
// inactive suppression named, and recomputes has_errors from what is left:
// the findings still listed, plus the ones counted but not listed (those
// cannot be reviewed, so they are never waived). `label` is the path as
// given, for path patterns.
void ApplyTriage(const Suppressions* suppressions, const Baseline* baseline, const Policy& policy,
                 std::string_view label, Report* report);

// What the command line asked for: either, both or neither.
struct Triage {
  std::optional<Suppressions> suppressions;
  std::optional<Baseline> baseline;

  bool NeedsHash() const { return baseline.has_value() || (suppressions && suppressions->NeedsHash()); }
  void Apply(const Policy& policy, std::string_view label, Report* report) const {
    if (suppressions || baseline) {
      ApplyTriage(suppressions ? &*suppressions : nullptr, baseline ? &*baseline : nullptr, policy, label, report);
    }
  }
};

// --suppressions and --baseline (empty: not given). On failure says why on
// `err` and returns nullopt (a usage error); each suppression that is not in
// force is named on `err` as a warning, so that an expired exception is seen
// even when no finding meets it.
std::optional<Triage> LoadTriageForCli(const std::string& suppressions_path, const std::string& baseline_path,
                                       std::ostream& err);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_TRIAGE_H_
