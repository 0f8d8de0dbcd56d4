// 8xxx: chat templates. llama.cpp (minja/jinja), llama-cpp-python and
// ollama render tokenizer.chat_template with a Jinja engine on every
// request; llama-cpp-python rendered it unsandboxed (CVE-2024-34359), so a
// template is code from the file. ScanChatTemplate lexes it without running
// it; each kind of issue it finds is one rule here.
#include "ggufguard/rules/template_rules.h"

#include <nettle/sha2.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/chat_template_scan.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

RuleId RuleFor(TemplateIssueKind kind) {
  switch (kind) {
    case TemplateIssueKind::kTooLarge: return RuleId::kChatTemplateTooLarge;
    case TemplateIssueKind::kNonPrintableByte: return RuleId::kChatTemplateNonPrintable;
    case TemplateIssueKind::kDunderAccess: return RuleId::kChatTemplateDunderAccess;
    case TemplateIssueKind::kAttrFilter: return RuleId::kChatTemplateAttrFilter;
    case TemplateIssueKind::kDangerousName: return RuleId::kChatTemplateDangerousName;
    case TemplateIssueKind::kGlobalsHelper: return RuleId::kChatTemplateGlobalsHelper;
    case TemplateIssueKind::kRecursiveMacro: return RuleId::kChatTemplateRecursiveMacro;
    case TemplateIssueKind::kExcessiveNesting: return RuleId::kChatTemplateExcessiveNesting;
    case TemplateIssueKind::kUnterminated: return RuleId::kChatTemplateUnterminated;
  }
  return RuleId::kChatTemplateUnterminated;  // unreachable: every kind is listed
}

// Nettle, not OpenSSL: OpenSSL 3 loads its provider machinery on the first
// digest, which cost ~1.3 ms of CPU per process here, plus ~1 ms to load
// libcrypto.so at all; nettle's SHA-256 is a plain function with no global
// state, linked from its static archive (docs/performance.md, "Whole process").
std::string Sha256Hex(std::string_view data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof md, md);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(md), sizeof md));
}

}  // namespace

bool IsChatTemplateKey(std::string_view key) {
  constexpr std::string_view kKey = "tokenizer.chat_template";
  return key.substr(0, kKey.size()) == kKey && (key.size() == kKey.size() || key[kKey.size()] == '.');
}

void CheckChatTemplates(RuleContext& ctx) {
  TemplateScanOptions options;
  options.max_bytes = ctx.policy.limits.max_chat_template_bytes;
  options.max_issues = ctx.policy.limits.max_findings_per_rule;
  for (const KeyValue& kv : ctx.header.kvs) {
    if (kv.value.type != ValueType::kString || !IsChatTemplateKey(CStringKey(kv.key))) continue;
    std::string_view tmpl = kv.value.AsString();
    for (const TemplateIssue& issue : ScanChatTemplate(tmpl, options)) {
      ctx.sink.Add(RuleFor(issue.kind), kv.value.offset + issue.offset,
                   absl::StrCat("'", EscapeForDisplay(kv.key), "' ", TemplateIssueKindName(issue.kind), " at byte ",
                                issue.offset, ": ", issue.detail));
    }
  }
}

std::vector<TemplateDigest> ChatTemplateDigests(const GgufHeader& header, size_t max_listed, uint64_t* not_listed) {
  std::vector<TemplateDigest> out;
  *not_listed = 0;
  for (const KeyValue& kv : header.kvs) {
    if (kv.value.type != ValueType::kString || !IsChatTemplateKey(CStringKey(kv.key))) continue;
    if (out.size() == max_listed) {
      ++*not_listed;
      continue;
    }
    std::string_view tmpl = kv.value.AsString();
    out.push_back(TemplateDigest{kv.key, kv.value.offset, tmpl.size(), Sha256Hex(tmpl)});
  }
  return out;
}

}  // namespace ggufguard
