// The policy each corpus/rules reproducer is checked with, shared by
// tests/tools/make_corpus.cc (which checks each file before writing it) and
// tests/corpus_rules_test.cc. Most rules fire under the default policy; the
// exceptions below are limits whose default is far above any file small
// enough to commit, a check the default policy leaves off, or a rule of the
// tensor data, which only a --deep validation reads. docs/fuzzing.md lists
// them.
#ifndef GGUFGUARD_TESTS_TOOLS_REPRODUCER_POLICIES_H_
#define GGUFGUARD_TESTS_TOOLS_REPRODUCER_POLICIES_H_

#include <string_view>

#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/findings/runtime_effects.h"

namespace ggufguard::corpus {

struct ReproducerPolicy {
  Policy policy;
  // Empty for the default policy; otherwise what was changed, and why.
  std::string_view change;
  // Validate with --deep (DeepOptions{.enabled = true}): GG6009-GG6011.
  bool deep = false;
};

inline ReproducerPolicy PolicyForReproducer(RuleId id) {
  ReproducerPolicy r{DefaultPolicy(), "", false};
  switch (id) {
    case RuleId::kHeaderSizeLimit:
      r.policy.limits.max_header_bytes = 64;
      r.change = "max_header_bytes = 64 (default 1 GiB: a header that large cannot be committed)";
      break;
    case RuleId::kMergeNotTokens:
      r.policy.check_merges = true;
      r.change = "check_merges = true (off by default for speed; on in the strict policy)";
      break;
    case RuleId::kChatTemplateTooLarge:
      r.policy.limits.max_chat_template_bytes = 64;
      r.change = "max_chat_template_bytes = 64 (default 1 MiB)";
      break;
    case RuleId::kVocabSizeLimit:
      r.policy.limits.max_vocab_size = 4;
      r.change = "max_vocab_size = 4 (default 2^22 tokens)";
      break;
    case RuleId::kHeaderMemory:
      r.policy.limits.max_header_memory_bytes = 1024;
      r.change = "max_header_memory_bytes = 1024 (default 256 MiB)";
      break;
    case RuleId::kLoaderScanCost:
      r.policy.limits.max_loader_scan_ms = 1;
      r.change = "max_loader_scan_ms = 1 (default 1000: a header that slow to read is hundreds of KiB)";
      break;
    case RuleId::kTensorDataNonFinite:
    case RuleId::kTensorDataUncheckable:
      r.deep = true;
      r.change = "--deep (tensor data is read only with --deep)";
      break;
    case RuleId::kDeepCheckLimit:
      r.deep = true;
      r.policy.limits.max_deep_bytes = 16;
      r.change = "--deep and max_deep_bytes = 16 (default: no limit)";
      break;
    case RuleId::kUnpaddedEnd:
      r.policy.profile = Profile::kGguf;
      r.change = "--profile gguf (llama.cpp accepts a file without its last padding; ggml's no_alloc=false reader does not)";
      break;
    case RuleId::kVllmParserCost:
      r.policy.limits.max_gguf_py_parse_seconds = 1;
      r.policy.profile = Profile::kVllm;
      r.policy.profiles_named = true;
      r.change = "--profile vllm and max_gguf_py_parse_seconds = 1 (default 120 s: a header that costs it cannot be "
                 "committed)";
      break;
    default:
      // A runtime rule is a finding when its runtime's profile is named.
      if (const std::optional<Profile> runtime = RuntimeOfRule(id); runtime && !RuntimeRuleAlwaysReported(id)) {
        r.policy.profile = *runtime;
        r.policy.profiles_named = true;
        r.change = "--profile RUNTIME (a runtime rule is a finding when its runtime must load the file)";
      }
      break;
  }
  return r;
}

}  // namespace ggufguard::corpus

#endif  // GGUFGUARD_TESTS_TOOLS_REPRODUCER_POLICIES_H_
