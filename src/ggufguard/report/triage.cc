#include "ggufguard/report/triage.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/text.h"
#include "ggufguard/report/render.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

// A suppressions file or a baseline is a few kilobytes to a few megabytes;
// this bound keeps a wrong path (a model file) from being read whole.
constexpr std::streamsize kMaxTriageFileBytes = std::streamsize{64} << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open the ", what, " ", path));
  // Read as it comes, not into a buffer of the bound: a few-kilobyte file
  // costs a few kilobytes, and reading stops one byte past the bound.
  std::string data;
  char chunk[1 << 16];
  while (data.size() <= static_cast<size_t>(kMaxTriageFileBytes) && in.read(chunk, sizeof chunk).gcount() > 0) {
    data.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read the ", what, " ", path));
  if (data.size() > static_cast<size_t>(kMaxTriageFileBytes)) {
    return absl::InvalidArgumentError(absl::StrCat("the ", what, " ", path, " is larger than 64 MiB"));
  }
  return data;
}

bool IsDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  const int day = (s[8] - '0') * 10 + (s[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool IsSha256Hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

absl::Status EntryError(size_t i, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("suppression #", i + 1, ": ", why));
}

absl::StatusOr<std::string> OptionalString(const Json& e, const char* field, size_t i) {
  auto it = e.find(field);
  if (it == e.end()) return std::string();
  if (!it->is_string()) return EntryError(i, absl::StrCat("\"", field, "\" is not a string"));
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

absl::StatusOr<Suppressions> LoadSuppressions(const std::string& path, std::string_view today) {
  absl::StatusOr<std::string> text = ReadSmallFile(path, "suppressions file");
  if (!text.ok()) return text.status();
  const Json doc = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("suppressions") || !doc["suppressions"].is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a suppressions file (a JSON object with a \"suppressions\" array)"));
  }
  static const std::set<std::string> kFields = {"rule", "sha256", "path", "key", "reason", "expires"};
  Suppressions out;
  const Json& list = doc["suppressions"];
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    if (!e.is_object()) return EntryError(i, "not an object");
    for (const auto& [field, value] : e.items()) {
      if (!kFields.contains(field)) {
        return EntryError(i, absl::StrCat("unknown field \"", EscapeForDisplay(field), "\""));
      }
    }
    Suppression s;
    absl::StatusOr<std::string> rule = OptionalString(e, "rule", i);
    if (!rule.ok()) return rule.status();
    const RuleInfo* info = FindRuleByCode(*rule);
    if (info == nullptr) return EntryError(i, absl::StrCat("no rule \"", EscapeForDisplay(*rule), "\""));
    s.rule = info->id;
    for (auto [field, dst] : {std::pair{"sha256", &s.sha256}, std::pair{"path", &s.path_pattern},
                              std::pair{"key", &s.subject}, std::pair{"reason", &s.reason},
                              std::pair{"expires", &s.expires}}) {
      absl::StatusOr<std::string> v = OptionalString(e, field, i);
      if (!v.ok()) return v.status();
      *dst = *std::move(v);
    }
    if (s.sha256.empty() && s.path_pattern.empty()) {
      return EntryError(i, "names no file (give \"sha256\" or \"path\")");
    }
    if (!s.sha256.empty() && !IsSha256Hex(s.sha256)) {
      return EntryError(i, "\"sha256\" is not 64 lower-case hex digits");
    }
    s.reason = EscapeForDisplay(s.reason, 1024);
    // Fail closed: the entry stays, so that the findings it names say why
    // they were not waived, but it waives nothing.
    if (s.reason.empty()) {
      s.inactive_because = "it has no reason";
    } else if (!IsDate(s.expires)) {
      s.inactive_because = "its \"expires\" is not a YYYY-MM-DD date";
      s.expires = EscapeForDisplay(s.expires);
    } else if (s.expires < today) {  // ISO dates compare as strings
      s.inactive_because = absl::StrCat("it expired on ", s.expires);
    }
    out.entries.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<Baseline> LoadBaseline(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path, "baseline");
  if (!text.ok()) return text.status();
  // One JSON report, or JSON lines (scan): the file entries either way.
  std::vector<Json> files;
  const Json doc = Json::parse(*text, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("files") && doc["files"].is_array()) {
    files.assign(doc["files"].begin(), doc["files"].end());
  } else {
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      Json j = Json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, " is not a baseline (a JSON report or scan's JSON lines)"));
      }
      if (j.value("type", "") == "file") files.push_back(std::move(j));
    }
  }
  Baseline b;
  b.name = EscapeForDisplay(path, kMaxPathBytes);
  for (const Json& f : files) {
    if (!f.is_object() || !f.contains("findings")) continue;  // an I/O error: nothing to compare
    const std::string sha = f.value("sha256", "");
    if (!IsSha256Hex(sha)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the baseline ", path, " has a file without its SHA-256 (make it with --hash, or --format json)"));
    }
    for (const Json& x : f["findings"]) {
      if (!x.is_object() || !x.contains("rule") || !x["rule"].is_string() || !x.contains("offset") ||
          !x["offset"].is_number_unsigned()) {
        return absl::InvalidArgumentError(absl::StrCat("the baseline ", path, " has a malformed finding"));
      }
      b.findings.emplace(x["rule"].get<std::string>(), sha, x["offset"].get<uint64_t>());
    }
  }
  return b;
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
