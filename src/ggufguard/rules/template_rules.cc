// 8xxx: chat templates. llama.cpp (minja/jinja), llama-cpp-python and
// ollama render tokenizer.chat_template with a Jinja engine on every
// request; llama-cpp-python rendered it unsandboxed (CVE-2024-34359), so a
// template is code from the file. ScanChatTemplate lexes it without running
// it; each kind of issue it finds is one rule here.
#include "ggufguard/rules/template_rules.h"

#include <memory>
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
    case TemplateIssueKind::kContentGatedText: return RuleId::kChatTemplateContentGatedText;
    case TemplateIssueKind::kOwnText: return RuleId::kChatTemplateOwnText;
    case TemplateIssueKind::kTextUrl: return RuleId::kChatTemplateTextUrl;
    case TemplateIssueKind::kTextMarkup: return RuleId::kChatTemplateTextMarkup;
    case TemplateIssueKind::kTextCommand: return RuleId::kChatTemplateTextCommand;
    case TemplateIssueKind::kTextBlob: return RuleId::kChatTemplateTextBlob;
    case TemplateIssueKind::kInvisibleText: return RuleId::kChatTemplateInvisibleText;
    case TemplateIssueKind::kSystemDropped: return RuleId::kChatTemplateSystemDropped;
    case TemplateIssueKind::kContentDropped: return RuleId::kChatTemplateContentDropped;
    case TemplateIssueKind::kContentRewritten: return RuleId::kChatTemplateContentRewritten;
    case TemplateIssueKind::kContentMoved: return RuleId::kChatTemplateContentMoved;
    case TemplateIssueKind::kForgedTurn: return RuleId::kChatTemplateForgedTurn;
    case TemplateIssueKind::kInsertedText: return RuleId::kChatTemplateInsertedText;
    case TemplateIssueKind::kUnknownSpecialToken: return RuleId::kChatTemplateUnknownSpecialToken;
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

namespace {

// GG8028: the special-token-shaped literals a template writes (<|im_start|>)
// that the file's vocabulary lacks; they reach the model as plain text. Only
// a vocabulary that has tokens of that shape is judged (a shape it never
// uses says the template is another family's, which this cannot tell from a
// forgery), and a file without one (tokenizer.ggml.tokens absent or empty)
// not at all. One walk over the tokens, which stops once every literal is
// found: special tokens sit at the start of most vocabularies.
void AddMissingSpecialTokens(const GgufHeader& header, const TemplateBehaviour& behaviour, size_t max,
                             std::vector<TemplateIssue>* issues) {
  if (behaviour.tokens.empty()) return;
  const KeyValue* tokens_kv = nullptr;
  for (const KeyValue& kv : header.kvs) {
    if (kv.key() == kTokenArrayKey) {
      tokens_kv = &kv;
      break;
    }
  }
  if (tokens_kv == nullptr || tokens_kv->type() != ValueType::kArray) return;
  const Value tokens = tokens_kv->value();
  if (tokens.array.element_type != ValueType::kString || tokens.array.count == 0) return;
  constexpr std::string_view kFullwidthBar = "\xef\xbd\x9c";  // U+FF5C: DeepSeek's <｜...｜>
  auto shape = [&](std::string_view s) {
    return s.starts_with("<|") && s.ends_with("|>") ? 1 : s.starts_with(std::string("<").append(kFullwidthBar)) ? 2 : 0;
  };
  absl::flat_hash_set<std::string_view> missing;
  for (const TemplateTokenUse& t : behaviour.tokens) missing.insert(t.token);
  bool has[3] = {false, false, false};  // the shapes the vocabulary has (all of them, when a token is missing)
  tokens.array.ForEachString(tokens.array.count, [&](uint64_t, std::string_view s, uint64_t) {
    missing.erase(s);
    has[shape(s)] = true;
    return !missing.empty();
  });
  size_t added = 0;
  for (const TemplateTokenUse& t : behaviour.tokens) {
    if (!missing.contains(t.token) || !has[shape(t.token)] || added++ >= max) continue;
    issues->push_back({TemplateIssueKind::kUnknownSpecialToken, t.offset, 0, 0,
                       absl::StrCat("writes '", EscapeForDisplay(t.token, 48),
                                    "', which is no token of tokenizer.ggml.tokens: the model reads it as plain text, "
                                    "a marker it never learned")});
  }
}

// Every issue of one template: the code checks', the behaviour's, GG8028's.
std::vector<TemplateIssue> AllIssues(const GgufHeader& header, const TemplateScan& scan, size_t max) {
  std::vector<TemplateIssue> all = scan.issues;
  all.insert(all.end(), scan.behaviour_issues.begin(), scan.behaviour_issues.end());
  AddMissingSpecialTokens(header, scan.behaviour, max, &all);
  return all;
}

}  // namespace

void CheckChatTemplates(RuleContext& ctx, TemplateDigests& digests) {
  TemplateScanOptions options;
  options.max_bytes = ctx.policy.limits.max_chat_template_bytes;
  options.max_issues = ctx.policy.limits.max_findings_per_rule;
  options.max_iterations = ctx.policy.limits.max_chat_template_iterations;
  options.max_output_bytes = ctx.policy.limits.max_chat_template_output_bytes;
  options.max_listed = ctx.policy.limits.max_list_entries;
  const size_t max_listed = ctx.policy.limits.max_list_entries;
  digests = {};
  struct ListedScan {
    TemplateScan scan;
    std::vector<TemplateIssue> issues;  // AllIssues
    std::string sha256;
    std::shared_ptr<const UpstreamProvenance> provenance;
    std::shared_ptr<const TemplateBehaviour> behaviour;
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
        // Provenance where the policy analyses the template at all. The
        // segments a near match inserted into its upstream are judged by the
        // behaviour rules without the leniency real templates get (GG8029).
        std::shared_ptr<const UpstreamProvenance> provenance;
        TemplateScanOptions judged = options;
        if (tmpl.size() <= options.max_bytes && options.max_issues > 0) {
          provenance = std::make_shared<const UpstreamProvenance>(
              FindUpstream(tmpl, digests.model_family, ctx.policy.limits.max_list_entries));
          for (const ByteRange& r : provenance->InsertedRanges()) judged.inserted.push_back({r.begin, r.end});
        }
        ListedScan listed{AnalyseChatTemplate(tmpl, judged), {}, Sha256Hex(tmpl), std::move(provenance), nullptr};
        listed.issues = AllIssues(ctx.header, listed.scan, options.max_issues);
        listed.behaviour = std::make_shared<const TemplateBehaviour>(std::move(listed.scan.behaviour));
        listed_scans.push_back(std::move(listed));
      }
      const ListedScan& listed = listed_scans[it->second];
      digests.listed.push_back(TemplateDigest{kv.key(), value.offset, tmpl.size(), listed.sha256, listed.scan.roots,
                                              listed.scan.folded_names, tmpl, listed.provenance, {},
                                              listed.behaviour});
      if (listed.provenance) ReportProvenance(ctx.sink, kv.key(), value.offset, *listed.provenance);
      issues = &listed.issues;
    } else {
      ++digests.not_listed;
      if (clean.contains(tmpl)) continue;
      if (auto listed = listed_index.find(tmpl); listed != listed_index.end()) {
        issues = &listed_scans[listed->second].issues;
      } else if (auto it = with_issues.find(tmpl); it != with_issues.end()) {
        issues = &it->second;
      } else if (last == tmpl) {
        issues = &last_issues;
      } else {
        std::vector<TemplateIssue> found = AllIssues(ctx.header, AnalyseChatTemplate(tmpl, options), options.max_issues);
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
