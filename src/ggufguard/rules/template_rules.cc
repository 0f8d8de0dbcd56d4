// 8xxx: chat templates. llama.cpp (minja/jinja), llama-cpp-python and
// ollama render tokenizer.chat_template with a Jinja engine on every
// request; llama-cpp-python rendered it unsandboxed (CVE-2024-34359), so a
// template is code from the file. ScanChatTemplate lexes it without running
// it; each kind of issue it finds is one rule here.
#include "ggufguard/rules/template_rules.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/provenance/family.h"
#include "ggufguard/template/scan.h"
#include "ggufguard/rules/key_groups.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {

RuleId RuleForTemplateIssue(TemplateIssueKind kind) {
  switch (kind) {
    case TemplateIssueKind::kTooLarge: return RuleId::kChatTemplateTooLarge;
    case TemplateIssueKind::kNonPrintableByte: return RuleId::kChatTemplateNonPrintable;
    case TemplateIssueKind::kDunderAccess: return RuleId::kChatTemplateDunderAccess;
    case TemplateIssueKind::kAttrFilter: return RuleId::kChatTemplateAttrFilter;
    case TemplateIssueKind::kDangerousName: return RuleId::kChatTemplateDangerousName;
    case TemplateIssueKind::kGlobalsHelper: return RuleId::kChatTemplateGlobalsHelper;
    case TemplateIssueKind::kRecursiveMacro: return RuleId::kChatTemplateRecursiveMacro;
    case TemplateIssueKind::kUnboundedRecursion: return RuleId::kChatTemplateUnboundedRecursion;
    case TemplateIssueKind::kDeepNesting: return RuleId::kChatTemplateDeepNesting;
    case TemplateIssueKind::kExcessiveNesting: return RuleId::kChatTemplateExcessiveNesting;
    case TemplateIssueKind::kUnterminated: return RuleId::kChatTemplateUnterminated;
    case TemplateIssueKind::kComputedName: return RuleId::kChatTemplateComputedName;
    case TemplateIssueKind::kFileAccess: return RuleId::kChatTemplateFileAccess;
    case TemplateIssueKind::kRenderBomb: return RuleId::kChatTemplateRenderBomb;
    case TemplateIssueKind::kParseError: return RuleId::kChatTemplateParseError;
  }
  return RuleId::kChatTemplateUnterminated;  // unreachable: every kind is listed
}

bool IsChatTemplateKey(std::string_view key) {
  constexpr std::string_view kKey = "tokenizer.chat_template";
  return key.substr(0, kKey.size()) == kKey && (key.size() == kKey.size() || key[kKey.size()] == '.');
}

bool IsChatTemplateAlias(std::string_view key, std::string* scratch) {
  return IsChatTemplateKey(CanonicalView(key, scratch));
}

// A scan is a function of the template's bytes and the options alone, and a
// header may repeat one template under a million keys (hostile-1m-templates),
// so a template is analysed once per distinct bytes (keys borrowed from the
// header): a repeat costs one hash of its bytes. Templates without issues,
// nearly all of them, are remembered without bound (at most ~37 bytes of set
// each, for at least 43 bytes of header a template KV takes); the issues of the first kRememberedWithIssues
// distinct templates that have some, and of the last one analysed, are kept
// too (an issue holds a message: this bounds what they take). A template
// with issues past those is analysed again, in time linear in its bytes.
// The templates the report lists (the first max_list_entries keys) keep
// their whole analysis and digest, at most one per listed key.
constexpr size_t kRememberedWithIssues = 64;

void CheckChatTemplates(RuleContext& ctx, TemplateDigests& digests) {
  TemplateScanOptions options;
  options.max_bytes = ctx.policy.limits.max_chat_template_bytes;
  options.max_issues = ctx.policy.limits.max_findings_per_rule;
  options.max_iterations = ctx.policy.limits.max_chat_template_iterations;
  options.max_output_bytes = ctx.policy.limits.max_chat_template_output_bytes;
  const size_t max_listed = ctx.policy.limits.max_list_entries;
  digests = {};
  struct ListedScan {
    TemplateScan scan;
    std::string sha256;
    std::shared_ptr<const UpstreamProvenance> provenance;
  };
  absl::flat_hash_map<std::string_view, size_t> listed_index;  // template bytes -> listed_scans
  std::vector<ListedScan> listed_scans;
  absl::flat_hash_set<std::string_view> clean;
  absl::flat_hash_map<std::string_view, std::vector<TemplateIssue>> with_issues;
  std::optional<std::string_view> last;
  std::vector<TemplateIssue> last_issues;
  std::string scratch;
  bool family_known = false;
  for (const KeyValue& kv : ctx.header.kvs) {
    if (kv.type() != ValueType::kString || !IsChatTemplateAlias(kv.key(), &scratch)) continue;
    const Value value = kv.value();
    const std::string_view tmpl = value.AsString();
    const std::vector<TemplateIssue>* issues;
    if (digests.listed.size() < max_listed) {
      auto [it, first_time] = listed_index.try_emplace(tmpl, listed_scans.size());
      if (first_time) {
        if (!family_known) digests.model_family = ModelFamily(ctx.header);
        family_known = true;
        // Provenance where the policy analyses the template at all.
        std::shared_ptr<const UpstreamProvenance> provenance;
        if (tmpl.size() <= options.max_bytes && options.max_issues > 0) {
          provenance = std::make_shared<const UpstreamProvenance>(
              FindUpstream(tmpl, digests.model_family, ctx.policy.limits.max_list_entries));
        }
        listed_scans.push_back({AnalyseChatTemplate(tmpl, options), Sha256Hex(tmpl), std::move(provenance)});
      }
      const ListedScan& listed = listed_scans[it->second];
      digests.listed.push_back(TemplateDigest{kv.key(), value.offset, tmpl.size(), listed.sha256, listed.scan.roots,
                                              listed.scan.folded_names, tmpl, listed.provenance, {}});
      if (listed.provenance) ReportProvenance(ctx.sink, kv.key(), value.offset, *listed.provenance);
      issues = &listed.scan.issues;
    } else {
      ++digests.not_listed;
      if (clean.contains(tmpl)) continue;
      if (auto listed = listed_index.find(tmpl); listed != listed_index.end()) {
        issues = &listed_scans[listed->second].scan.issues;
      } else if (auto it = with_issues.find(tmpl); it != with_issues.end()) {
        issues = &it->second;
      } else if (last == tmpl) {
        issues = &last_issues;
      } else {
        std::vector<TemplateIssue> found = ScanChatTemplate(tmpl, options);
        if (found.empty()) {
          clean.insert(tmpl);
          continue;
        }
        if (with_issues.size() < kRememberedWithIssues) {
          issues = &with_issues.emplace(tmpl, std::move(found)).first->second;
        } else {
          last = tmpl;
          last_issues = std::move(found);
          issues = &last_issues;
        }
      }
    }
    for (const TemplateIssue& issue : *issues) {
      ctx.sink.AddLazy(RuleForTemplateIssue(issue.kind), value.offset + issue.offset, [&] {
        return absl::StrCat("'", EscapeForDisplay(kv.key()), "' ", TemplateIssueKindName(issue.kind), " at line ",
                            issue.line, ", column ", issue.column, " (template byte ", issue.offset,
                            "): ", issue.detail);
      });
    }
  }
}

}  // namespace ggufguard
