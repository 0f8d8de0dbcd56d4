#include "ggufguard/report/triage.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/strict_json.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/io/bounded_read.h"
#include "ggufguard/report/render.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

// A suppressions file or a baseline is a few kilobytes to a few megabytes;
// this bound keeps a wrong path (a model file, /dev/zero) from being read
// whole (io/bounded_read.h reads it as it comes and stops past the bound).
constexpr size_t kMaxTriageFileBytes = size_t{64} << 20;

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// YYYY-MM-DD naming a day of the calendar: 2026-02-30 and 2025-02-29 are
// not dates, and neither is month 13 or year 0000.
bool IsDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  auto number = [&](size_t at, size_t digits) {
    int v = 0;
    for (size_t i = at; i < at + digits; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  const int year = number(0, 4), month = number(5, 2), day = number(8, 2);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= kDays[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
}

// A reason is there to be read by the next reviewer: only spaces, tabs or
// control bytes say nothing.
bool IsBlank(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b > 0x20 && b != 0x7f;
  });
}

bool IsSha256Hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// "ORIGIN, line L: suppression #N: WHY" for entry `i` of `doc`.
absl::Status EntryError(const StrictJson& doc, std::string_view origin, size_t i, std::string_view why) {
  return absl::InvalidArgumentError(
      AtLine(origin, doc.LineOf(absl::StrCat("/suppressions/", i)), absl::StrCat("suppression #", i + 1, ": ", Sv(why))));
}

absl::StatusOr<std::string> OptionalString(const StrictJson& doc, std::string_view origin, const Json& e,
                                           const char* field, size_t i) {
  auto it = e.find(field);
  if (it == e.end()) return std::string();
  if (!it->is_string()) return EntryError(doc, origin, i, absl::StrCat("\"", field, "\" is not a string"));
  return it->get<std::string>();
}

}  // namespace

bool Suppressions::NeedsHash() const {
  return std::any_of(entries.begin(), entries.end(), [](const Suppression& s) { return !s.sha256.empty(); });
}

std::string TodayUtc() {
  if (const char* fixed = std::getenv("GGUFGUARD_TODAY"); fixed != nullptr && IsDate(fixed)) return fixed;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &utc);
  return buf;
}

absl::StatusOr<Suppressions> ParseSuppressions(std::string_view text, std::string_view origin, std::string_view today) {
  absl::StatusOr<StrictJson> parsed = ParseStrictJson(text, origin);
  if (!parsed.ok()) return parsed.status();
  const StrictJson& doc = *parsed;
  const Json& top = doc.value;
  if (!top.is_object() || !top.contains("suppressions") || !top["suppressions"].is_array()) {
    return absl::InvalidArgumentError(
        AtLine(origin, 0, "not a suppressions file (a JSON object with a \"suppressions\" array)"));
  }
  for (const auto& [field, value] : top.items()) {
    if (field != "suppressions") {
      return absl::InvalidArgumentError(
          AtLine(origin, 0, absl::StrCat("unknown field \"", field, "\" (a suppressions file holds \"suppressions\")")));
    }
  }
  static const std::set<std::string> kFields = {"rule", "sha256", "path", "key", "reason", "expires"};
  Suppressions out;
  const Json& list = top["suppressions"];
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    if (!e.is_object()) return EntryError(doc, origin, i, "not an object");
    for (const auto& [field, value] : e.items()) {
      if (!kFields.contains(field)) return EntryError(doc, origin, i, absl::StrCat("unknown field \"", field, "\""));
    }
    Suppression s;
    absl::StatusOr<std::string> rule = OptionalString(doc, origin, e, "rule", i);
    if (!rule.ok()) return rule.status();
    const RuleInfo* info = FindRuleByCode(*rule);
    if (info == nullptr) return EntryError(doc, origin, i, absl::StrCat("no rule \"", *rule, "\""));
    s.rule = info->id;
    for (auto [field, dst] : {std::pair{"sha256", &s.sha256}, std::pair{"path", &s.path_pattern},
                              std::pair{"key", &s.subject}, std::pair{"reason", &s.reason},
                              std::pair{"expires", &s.expires}}) {
      absl::StatusOr<std::string> v = OptionalString(doc, origin, e, field, i);
      if (!v.ok()) return v.status();
      *dst = *std::move(v);
    }
    if (s.sha256.empty() && s.path_pattern.empty()) {
      return EntryError(doc, origin, i, "names no file (give \"sha256\" or \"path\")");
    }
    if (!s.sha256.empty() && !IsSha256Hex(s.sha256)) {
      return EntryError(doc, origin, i, "\"sha256\" is not 64 lower-case hex digits");
    }
    // A waiver must say why and until when: an entry without either is a
    // mistake to fix, not an exception to keep.
    if (IsBlank(s.reason)) return EntryError(doc, origin, i, "has no \"reason\" (a blank one says nothing)");
    if (!IsDate(s.expires)) {
      return EntryError(doc, origin, i,
                        s.expires.empty() ? std::string("has no \"expires\" date (YYYY-MM-DD)")
                                          : absl::StrCat("\"expires\" is not a date of the calendar (YYYY-MM-DD): ",
                                                         s.expires));
    }
    s.reason = EscapeForDisplay(s.reason, 1024);
    // Fail closed: an expired entry stays, so that the findings it names say
    // why they were not waived, but it waives nothing.
    if (s.expires < today) s.inactive_because = absl::StrCat("it expired on ", s.expires);  // ISO dates compare as strings
    out.entries.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<Suppressions> LoadSuppressions(const std::string& path, std::string_view today) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, "the suppressions file", kMaxTriageFileBytes);
  if (!text.ok()) return text.status();
  return ParseSuppressions(*text, absl::StrCat("the suppressions file ", path), today);
}

absl::StatusOr<Baseline> ParseBaseline(std::string_view text, std::string_view origin, std::string_view name) {
  // One JSON report, or JSON lines (scan): the file entries either way,
  // each with the line it starts on, for the errors below.
  struct FileEntry {
    Json value;
    uint32_t line;
  };
  std::vector<FileEntry> files;
  absl::StatusOr<StrictJson> whole = ParseStrictJson(text, origin);
  if (whole.ok()) {
    const Json& doc = whole->value;
    if (doc.is_object() && doc.contains("files") && doc["files"].is_array()) {
      for (size_t i = 0; i < doc["files"].size(); ++i) {
        files.push_back({doc["files"][i], whole->LineOf(absl::StrCat("/files/", i))});
      }
    } else if (doc.is_object() && StringOr(doc, "type") == "file") {
      files.push_back({doc, whole->LineOf("")});  // scan's JSON lines, of one line
    } else if (!doc.is_object() || StringOr(doc, "type") != "summary") {
      return absl::InvalidArgumentError(AtLine(origin, 0, "not a baseline (a JSON report or scan's JSON lines)"));
    }
  } else if (absl::IsAlreadyExists(whole.status())) {
    return whole.status();  // a repeated key in a JSON report
  } else {
    // Not one document: JSON lines, each a document of its own.
    uint32_t line_number = 0;
    for (size_t at = 0; at <= text.size();) {
      const size_t end = std::min(text.find('\n', at), text.size());
      const std::string_view line = text.substr(at, end - at);
      ++line_number;
      at = end + 1;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      absl::StatusOr<StrictJson> j = ParseStrictJson(line, origin, line_number);
      if (!j.ok()) return j.status();
      if (!j->value.is_object()) {
        return absl::InvalidArgumentError(
            AtLine(origin, line_number, "not a baseline (a JSON report or scan's JSON lines)"));
      }
      if (StringOr(j->value, "type") == "file") files.push_back({std::move(j->value), line_number});
    }
  }
  Baseline b;
  b.name = EscapeForDisplay(name, kMaxPathBytes);
  for (const FileEntry& entry : files) {
    const Json& f = entry.value;
    if (!f.is_object() || !f.contains("findings")) continue;  // an I/O error: nothing to compare
    const std::string sha = StringOr(f, "sha256");
    if (!IsSha256Hex(sha)) {
      return absl::InvalidArgumentError(
          AtLine(origin, entry.line, "a file without its SHA-256 (make the baseline with --hash, or --format json)"));
    }
    if (!f["findings"].is_array()) {
      return absl::InvalidArgumentError(AtLine(origin, entry.line, "\"findings\" is not an array"));
    }
    for (const Json& x : f["findings"]) {
      if (!x.is_object() || !x.contains("rule") || !x["rule"].is_string() || !x.contains("offset") ||
          !x["offset"].is_number_unsigned()) {
        return absl::InvalidArgumentError(AtLine(origin, entry.line, "a malformed finding in this file's entry"));
      }
      b.findings.emplace(x["rule"].get<std::string>(), sha, x["offset"].get<uint64_t>());
    }
  }
  return b;
}

absl::StatusOr<Baseline> LoadBaseline(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, "the baseline", kMaxTriageFileBytes);
  if (!text.ok()) return text.status();
  return ParseBaseline(*text, absl::StrCat("the baseline ", path), path);
}

std::string SubjectAt(const GgufHeader& h, uint64_t offset) {
  // KVs and tensor infos lie in file order, each record up to the next.
  auto record = [&](const auto& items, auto start) -> std::optional<size_t> {
    auto it = std::upper_bound(items.begin(), items.end(), offset,
                               [&](uint64_t off, const auto& item) { return off < start(item); });
    if (it == items.begin()) return std::nullopt;
    return static_cast<size_t>(it - items.begin()) - 1;
  };
  const uint64_t tensors_start = h.tensors.empty() ? UINT64_MAX : h.tensors.front().offset;
  if (offset < tensors_start) {
    if (std::optional<size_t> i = record(h.kvs, [](const KeyValue& kv) { return kv.offset(); })) {
      return std::string(h.kvs[*i].key());
    }
    return "";
  }
  const uint64_t data_start = h.data_offset_known ? h.data_offset : UINT64_MAX;
  if (offset < data_start) {
    if (std::optional<size_t> i = record(h.tensors, [](const TensorInfo& t) { return uint64_t{t.offset}; })) {
      return std::string(h.tensors[*i].name);
    }
    return "";
  }
  for (const TensorInfo& t : h.tensors) {
    if (t.absolute_known && t.size_known && offset >= t.absolute_offset && offset - t.absolute_offset < t.byte_size) {
      return std::string(t.name);
    }
  }
  return "";
}

void ApplyTriage(const Suppressions* suppressions, const Baseline* baseline, const Policy& policy,
                 std::string_view label, Report* r) {
  const std::string label_str(label);
  std::vector<Finding> kept;
  for (Finding& f : r->findings) {
    std::string subject;  // computed once, on the first entry that asks
    bool subject_known = false;
    const Suppression* waiver = nullptr;
    const Suppression* refused = nullptr;
    if (suppressions != nullptr) {
      for (const Suppression& s : suppressions->entries) {
        if (s.rule != f.rule) continue;
        if (!s.sha256.empty() && s.sha256 != r->sha256) continue;
        if (!s.path_pattern.empty() && ::fnmatch(s.path_pattern.c_str(), label_str.c_str(), 0) != 0) continue;
        if (!s.subject.empty()) {
          if (!subject_known) subject = SubjectAt(r->header, f.offset);
          subject_known = true;
          if (subject != s.subject) continue;
        }
        if (s.inactive_because.empty()) {
          waiver = &s;
          break;
        }
        if (refused == nullptr) refused = &s;
      }
    }
    if (waiver != nullptr) {
      r->waived.push_back({std::move(f), "suppression", waiver->reason});
      continue;
    }
    if (refused != nullptr) {
      r->triage_notes.push_back(absl::StrCat(RuleCode(f.rule), " at offset ", f.offset,
                                             " stands: the suppression that names it is not in force (",
                                             refused->inactive_because, ")"));
    }
    if (baseline != nullptr && !r->sha256.empty() &&
        baseline->findings.contains({RuleCode(f.rule), r->sha256, f.offset})) {
      r->waived.push_back({std::move(f), "baseline", absl::StrCat("in the baseline ", baseline->name)});
      continue;
    }
    kept.push_back(std::move(f));
  }
  r->findings = std::move(kept);
  bool errors = std::any_of(r->findings.begin(), r->findings.end(),
                            [](const Finding& f) { return f.severity == Severity::kError; });
  for (const auto& [rule, count] : r->suppressed) {
    if (count > 0 && policy.SeverityOf(rule) == Severity::kError) errors = true;
  }
  r->has_errors = r->has_errors && errors;  // waiving only ever takes errors away
}

std::optional<Triage> LoadTriageForCli(const std::string& suppressions_path, const std::string& baseline_path,
                                       std::ostream& err) {
  Triage t;
  if (!suppressions_path.empty()) {
    absl::StatusOr<Suppressions> s = LoadSuppressions(suppressions_path, TodayUtc());
    if (!s.ok()) {
      err << "ggufguard: " << EscapeForDisplay(std::string(s.status().message()), kMaxPathBytes) << "\n";
      return std::nullopt;
    }
    for (size_t i = 0; i < s->entries.size(); ++i) {
      const Suppression& e = s->entries[i];
      if (!e.inactive_because.empty()) {
        err << "ggufguard: warning: suppression #" << i + 1 << " (" << RuleCode(e.rule)
            << ") waives nothing: " << e.inactive_because << "\n";
      }
    }
    t.suppressions = *std::move(s);
  }
  if (!baseline_path.empty()) {
    absl::StatusOr<Baseline> b = LoadBaseline(baseline_path);
    if (!b.ok()) {
      err << "ggufguard: " << EscapeForDisplay(std::string(b.status().message()), kMaxPathBytes) << "\n";
      return std::nullopt;
    }
    t.baseline = *std::move(b);
  }
  return t;
}

}  // namespace ggufguard
