#include "ggufguard/findings/policy_file.h"

#include <algorithm>
#include <limits>
#include <set>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/strict_json.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/io/bounded_read.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxPolicyFileBytes = size_t{1} << 20;

struct LimitField {
  std::string_view name;
  std::variant<uint64_t Limits::*, uint32_t Limits::*> member;
};

// Every field of Limits, by the name it has in C++ (limits.def).
constexpr LimitField kLimitFields[] = {
#define GGUFGUARD_LIMIT(type, name, default_value) {#name, &Limits::name},
#include "ggufguard/findings/limits.def"
#undef GGUFGUARD_LIMIT
};

// Error with the document and the field path, e.g. "p.json: limits.max_kv_count: ...".
absl::Status Bad(std::string_view origin, std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("policy ", Sv(origin), ": ", Sv(path), path.empty() ? "" : ": ",
                                                 Sv(what)));
}

std::string TypeOf(const Json& j) {
  if (j.is_number_float()) return "a fractional number";
  if (j.is_number_integer() && j.get<int64_t>() < 0) return "a negative number";
  return absl::StrCat("a JSON ", j.type_name());
}

absl::Status ParseLimits(const Json& limits, std::string_view origin, Limits& out) {
  if (!limits.is_object()) return Bad(origin, "limits", absl::StrCat("expected an object, got ", TypeOf(limits)));
  for (const auto& [name, value] : limits.items()) {
    const std::string path = absl::StrCat("limits.", name);
    const LimitField* field = nullptr;
    for (const LimitField& f : kLimitFields) {
      if (f.name == name) field = &f;
    }
    if (field == nullptr) return Bad(origin, path, "unknown limit (see docs/policy.md for the list)");
    if (!value.is_number_unsigned()) {
      return Bad(origin, path, absl::StrCat("expected a non-negative integer, got ", TypeOf(value)));
    }
    const uint64_t v = value.get<uint64_t>();
    if (std::holds_alternative<uint32_t Limits::*>(field->member)) {
      if (v > std::numeric_limits<uint32_t>::max()) return Bad(origin, path, absl::StrCat(v, " exceeds 2^32 - 1"));
      out.*std::get<uint32_t Limits::*>(field->member) = static_cast<uint32_t>(v);
    } else {
      out.*std::get<uint64_t Limits::*>(field->member) = v;
    }
  }
  if (out.max_nesting_depth > kHardMaxNestingDepth) {
    return Bad(origin, "limits.max_nesting_depth",
               absl::StrCat(out.max_nesting_depth, " exceeds the hard ceiling of ", kHardMaxNestingDepth));
  }
  if (out.max_header_bytes > kHardMaxHeaderBytes) {
    return Bad(origin, "limits.max_header_bytes",
               absl::StrCat(out.max_header_bytes, " exceeds the hard ceiling of ", kHardMaxHeaderBytes));
  }
  if (out.min_alignment == 0 || out.min_alignment > out.max_alignment) {
    return Bad(origin, "limits.min_alignment",
               absl::StrCat("must be at least 1 and at most max_alignment (", out.max_alignment, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<const RuleInfo*> RuleNamed(const Json& j, std::string_view origin, std::string_view path) {
  if (!j.is_string()) return Bad(origin, path, absl::StrCat("expected a rule ID or name, got ", TypeOf(j)));
  const std::string& s = j.get_ref<const std::string&>();
  const RuleInfo* rule = FindRuleByCode(s);
  if (rule == nullptr) return Bad(origin, path, absl::StrCat("unknown rule '", s, "' (ggufguard rules lists them)"));
  return rule;
}

absl::StatusOr<bool> Bool(const Json& j, std::string_view origin, std::string_view path) {
  if (!j.is_boolean()) return Bad(origin, path, absl::StrCat("expected true or false, got ", TypeOf(j)));
  return j.get<bool>();
}

}  // namespace

std::vector<std::string_view> LimitFieldNames() {
  std::vector<std::string_view> out;
  for (const LimitField& f : kLimitFields) out.push_back(f.name);
  return out;
}

absl::StatusOr<Policy> ParsePolicyJson(std::string_view text, std::string_view origin) {
  // A repeated field (at any depth) is refused with its line: a policy must
  // not hide a setting behind a later copy (base/strict_json.h).
  absl::StatusOr<StrictJson> parsed = ParseStrictJson(text, absl::StrCat("policy ", Sv(origin)));
  if (!parsed.ok()) return parsed.status();
  const Json& doc = parsed->value;
  if (!doc.is_object()) return Bad(origin, "", absl::StrCat("expected a JSON object, got ", TypeOf(doc)));

  std::string base = "default";
  if (auto it = doc.find("base"); it != doc.end()) {
    if (!it->is_string() || (*it != "default" && *it != "strict")) {
      return Bad(origin, "base", "expected \"default\" or \"strict\"");
    }
    base = it->get<std::string>();
  }
  Policy p = base == "strict" ? StrictPolicy() : DefaultPolicy();
  p.name = absl::StrCat(base, "+", Sv(origin));

  for (const auto& [field, value] : doc.items()) {
    if (field == "base") continue;
    if (field == "name" || field == "description") {
      if (!value.is_string()) return Bad(origin, field, absl::StrCat("expected a string, got ", TypeOf(value)));
      if (field == "name") p.name = value.get<std::string>();
    } else if (field == "limits") {
      if (absl::Status s = ParseLimits(value, origin, p.limits); !s.ok()) return s;
    } else if (field == "strict_key_grammar" || field == "check_merges") {
      absl::StatusOr<bool> b = Bool(value, origin, field);
      if (!b.ok()) return b.status();
      (field == "check_merges" ? p.check_merges : p.strict_key_grammar) = *b;
    } else if (field == "severities") {
      if (!value.is_object()) return Bad(origin, field, absl::StrCat("expected an object, got ", TypeOf(value)));
      for (const auto& [rule_name, severity] : value.items()) {
        const std::string path = absl::StrCat("severities.", rule_name);
        absl::StatusOr<const RuleInfo*> rule = RuleNamed(Json(rule_name), origin, path);
        if (!rule.ok()) return rule.status();
        if (severity != "error" && severity != "warning" && severity != "info") {
          return Bad(origin, path, "expected \"error\", \"warning\" or \"info\"");
        }
        p.severity_override[static_cast<uint16_t>((*rule)->id)] =
            severity == "error" ? Severity::kError : severity == "warning" ? Severity::kWarning : Severity::kInfo;
      }
    } else if (field == "profile") {
      // One profile name, or a list of them, as --profile given once or more.
      std::vector<std::string> names;
      if (value.is_string()) names.push_back(value.get<std::string>());
      if (value.is_array()) {
        for (const Json& name : value) {
          if (!name.is_string()) return Bad(origin, field, "expected a profile name or a list of them");
          names.push_back(name.get<std::string>());
        }
      }
      std::string bad;
      if (!NameProfiles(names, &p, &bad)) {
        return Bad(origin, field, absl::StrCat("expected ", Sv(ProfileNamesForHelp()), ", or a list of them"));
      }
    } else if (field == "disable") {
      if (!value.is_array()) return Bad(origin, field, absl::StrCat("expected an array, got ", TypeOf(value)));
      for (size_t i = 0; i < value.size(); ++i) {
        absl::StatusOr<const RuleInfo*> rule = RuleNamed(value[i], origin, absl::StrCat("disable[", i, "]"));
        if (!rule.ok()) return rule.status();
        p.disabled[static_cast<uint16_t>((*rule)->id)] = true;
      }
    } else {
      return Bad(origin, field,
                 "unknown field (base, name, description, profile, limits, strict_key_grammar, check_merges, "
                 "severities, disable)");
    }
  }
  return p;
}

absl::StatusOr<Policy> LoadPolicyFile(const std::string& path, std::string* text) {
  absl::StatusOr<std::string> read = ReadBoundedFile(path, "the policy file", kMaxPolicyFileBytes);
  if (!read.ok()) return absl::Status(read.status().code(), absl::StrCat("policy ", read.status().message()));
  absl::StatusOr<Policy> policy = ParsePolicyJson(*read, path);
  if (policy.ok() && text != nullptr) *text = *std::move(read);
  return policy;
}

}  // namespace ggufguard
