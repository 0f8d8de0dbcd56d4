// triage_fuzzer: the operator's JSON files that decide what passes a gate,
// read as the tool reads them: a suppressions file (ParseSuppressions), a
// baseline (ParseBaseline), both through the strict JSON reader
// (base/strict_json.h), then applied to a report.
//
// Input: a first byte that picks the reader (even: suppressions, odd: a
// baseline), then the file's text.
//
// Checks:
//  - the strict reader against nlohmann's own: what nlohmann refuses the
//    strict reader refuses; what the strict reader accepts nlohmann reads as
//    the same value; what only the strict reader refuses is a repeated key
//    (AlreadyExists); every error names a line inside the text;
//  - an accepted suppressions file holds only entries that can be honoured:
//    a known rule, a file named (sha256 of 64 lower-case hex digits, or a
//    path), a reason that is not blank, printable and bounded, a calendar
//    date, and a reason for every entry not in force;
//  - an accepted baseline's findings are pinned to 64-hex digests;
//  - applied to a report with errors, triage only ever moves findings from
//    the listed ones to the waived ones (none lost, none made up), never
//    turns a valid report invalid, and leaves every waiver's reason and
//    every note printable.
// seeds: fuzz/seeds/triage_fuzzer (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "fuzz/fuzz_common.h"
#include "ggufguard/base/strict_json.h"
#include "ggufguard/report/triage.h"
#include "nlohmann/json.hpp"

namespace {

using Json = nlohmann::json;

// The committed reproducer with six GG4008 errors and a GG3007 is not
// linked in here; this small file's findings (an empty key, then a
// general.architecture without its model's keys) play that part.
constexpr uint8_t kFile[] = {
    'G', 'G', 'U', 'F', 3, 0, 0, 0,                      // magic, version
    0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,      // 0 tensors, 2 KVs
    0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0,      // "" = u32 1 (GG3007)
    20, 0, 0, 0, 0, 0, 0, 0, 'g', 'e', 'n', 'e', 'r', 'a', 'l', '.', 'a', 'r', 'c', 'h', 'i', 't', 'e', 'c', 't',
    'u', 'r', 'e', 8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 'l', 'l', 'a', 'm', 'a',  // general.architecture = "llama"
};

uint32_t Lines(std::string_view text) {
  uint32_t n = 1;
  for (char c : text) n += c == '\n';
  return n;
}

// The line an error names ("ORIGIN, line L: ..."), or 0 when none.
// (Debian's abseil has its own string_view: Status::message() is one.)
uint32_t LineNamed(absl::string_view message) {
  const size_t at = message.find(", line ");
  if (at == absl::string_view::npos) return 0;
  uint32_t line = 0;
  for (size_t i = at + 7; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    line = line * 10 + static_cast<uint32_t>(message[i] - '0');
    if (line > 100000000) break;
  }
  return line;
}

bool IsLowerHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void CheckStrictReader(std::string_view text) {
  using namespace ggufguard;
  absl::StatusOr<StrictJson> strict = ParseStrictJson(text, "fuzz");
  const Json plain = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (plain.is_discarded()) {
    GGUFGUARD_FUZZ_CHECK(!strict.ok(), "the strict reader accepted what nlohmann refuses");
  } else if (strict.ok()) {
    GGUFGUARD_FUZZ_CHECK(strict->value == plain, "the strict reader read another value than nlohmann");
  } else {
    GGUFGUARD_FUZZ_CHECK(absl::IsAlreadyExists(strict.status()),
                         "refused valid JSON for another reason than a repeated key: " +
                             std::string(strict.status().message()));
  }
  if (!strict.ok()) {
    const uint32_t line = LineNamed(strict.status().message());
    GGUFGUARD_FUZZ_CHECK(line >= 1 && line <= Lines(text),
                         "an error names line " + std::to_string(line) + " of " + std::to_string(Lines(text)));
  } else {
    for (const auto& [pointer, line] : strict->lines) {
      GGUFGUARD_FUZZ_CHECK(line >= 1 && line <= Lines(text), "a recorded line past the text: " + pointer);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  if (size == 0) return 0;
  const bool baseline = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  CheckStrictReader(text);

  std::optional<Suppressions> suppressions;
  std::optional<Baseline> base;
  if (baseline) {
    absl::StatusOr<Baseline> b = ParseBaseline(text, "fuzz", "fuzz");
    if (!b.ok()) {
      GGUFGUARD_FUZZ_CHECK(!b.status().message().empty(), "a baseline refused without a reason");
      return 0;
    }
    for (const auto& [rule, sha, offset] : b->findings) {
      GGUFGUARD_FUZZ_CHECK(IsLowerHex64(sha), "a baseline finding pinned to '" + sha + "'");
    }
    base = *std::move(b);
  } else {
    absl::StatusOr<Suppressions> s = ParseSuppressions(text, "fuzz", "2026-06-15");
    if (!s.ok()) {
      const uint32_t line = LineNamed(s.status().message());
      GGUFGUARD_FUZZ_CHECK(line <= Lines(text), "an error names a line past the text");
      return 0;
    }
    for (const Suppression& e : s->entries) {
      GGUFGUARD_FUZZ_CHECK(FindRule(e.rule) != nullptr, "an entry of an unknown rule");
      GGUFGUARD_FUZZ_CHECK(!e.sha256.empty() || !e.path_pattern.empty(), "an entry that names no file");
      GGUFGUARD_FUZZ_CHECK(e.sha256.empty() || IsLowerHex64(e.sha256), "an entry's sha256 '" + e.sha256 + "'");
      GGUFGUARD_FUZZ_CHECK(!e.reason.empty(), "an entry without a reason");
      CheckPrintable(e.reason, "a suppression's reason");
      GGUFGUARD_FUZZ_CHECK(e.reason.size() <= 4 * 1024 + 8, "an unbounded reason");
      GGUFGUARD_FUZZ_CHECK(e.expires.size() == 10 && e.expires[4] == '-' && e.expires[7] == '-',
                           "an entry's expiry '" + e.expires + "'");
      GGUFGUARD_FUZZ_CHECK(e.inactive_because.empty() == (e.expires >= "2026-06-15"),
                           "an entry in force past its date, or out of force before it");
    }
    suppressions = *std::move(s);
  }

  const Policy policy = DefaultPolicy();
  Report report = ValidateBytes(absl::MakeConstSpan(kFile, sizeof kFile), policy);
  report.sha256 = std::string(64, 'a');  // what a baseline or a sha256 entry may name
  const size_t listed = report.findings.size();
  const bool was_invalid = report.has_errors;
  ApplyTriage(suppressions ? &*suppressions : nullptr, base ? &*base : nullptr, policy, "models/fuzz.gguf", &report);
  GGUFGUARD_FUZZ_CHECK(report.findings.size() + report.waived.size() == listed,
                       "triage lost or made up findings: " + std::to_string(listed) + " became " +
                           std::to_string(report.findings.size()) + " + " + std::to_string(report.waived.size()));
  GGUFGUARD_FUZZ_CHECK(was_invalid || !report.has_errors, "triage made a valid report invalid");
  for (const WaivedFinding& w : report.waived) CheckPrintable(w.reason, "a waiver's reason");
  for (const std::string& note : report.triage_notes) CheckPrintable(note, "a triage note");
  return 0;
}
