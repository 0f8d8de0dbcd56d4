// What a validation enforces: limits, severities, disabled rules.
//
// `default` protects today's loaders (llama.cpp, ollama, candle, gguf-py);
// `strict` enforces the spec's letter and turns warnings into errors. A policy
// file (JSON, see docs/policy.md) starts from one of them and changes limits,
// severities and disabled rules.
#ifndef GGUFGUARD_FINDINGS_POLICY_H_
#define GGUFGUARD_FINDINGS_POLICY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

struct Limits {
  uint64_t max_tensor_count = uint64_t{1} << 20;
  uint64_t max_kv_count = uint64_t{1} << 20;
  uint64_t max_string_length = uint64_t{1} << 30;  // ggml's GGUF_MAX_STRING_LENGTH
  uint64_t max_array_length = uint64_t{1} << 30;   // ggml's GGUF_MAX_ARRAY_ELEMENTS
  uint32_t max_nesting_depth = 4;                  // arrays inside arrays
  uint64_t max_key_length = 65535;                 // the spec's bound
  uint64_t max_tensor_name_length = 63;            // GGML_MAX_NAME - 1
  uint64_t max_header_bytes = uint64_t{1} << 30;   // everything before the data section
  uint64_t min_alignment = 1;
  uint64_t max_alignment = uint64_t{1} << 20;      // ggml accepts 2^31: a pad that hides gigabytes
  uint32_t max_findings_per_rule = 100;            // the rest are counted, not listed
  // Entries of every other list in a report (templates, key collision
  // groups, the keys listed in those groups); the rest are counted.
  uint32_t max_list_entries = 100;
  // Semantic limits (docs/policy.md). Each is far above every real model so
  // that only absurd values, which exist to exhaust a loader, trip them.
  uint64_t max_chat_template_bytes = uint64_t{1} << 20;  // real templates are < 64 KiB
  // What one render may be made to do (GG8014): loop iterations, range and
  // list sizes; bytes one expression makes. Real templates loop over the
  // messages and use ranges and padding of a few dozen.
  uint64_t max_chat_template_iterations = 1000000;
  uint64_t max_chat_template_output_bytes = uint64_t{16} << 20;
  uint64_t max_kv_cache_bytes = uint64_t{1} << 44;       // 16 TiB; Llama 4 Scout at 10M context is ~2 TiB
  uint64_t max_vocab_size = uint64_t{1} << 22;           // tokens or merges; real vocabularies are < 300k
  uint64_t max_header_memory_bytes = uint64_t{1} << 28;  // 256 MiB of loader objects for the header
  // --deep (GG6009-GG6011): how many bytes of tensor data to check at most
  // (the rest is GG6010), and how many bad values to list per tensor (the
  // rest are counted).
  uint64_t max_deep_bytes = UINT64_MAX;
  uint32_t max_deep_findings_per_tensor = 8;
  // Shards of one split set (GG9106): llama.cpp's names allow 99999, its
  // u16 split.count 65535; real sets have a few dozen.
  uint32_t max_split_shards = 1024;
};
// policy_file.cc names every field of Limits; it static_asserts on
// sizeof(Limits) so that a new field cannot be left out of policy files.

// The hard ceiling on nesting depth whatever a policy file says: the parser
// recurses once per level.
inline constexpr uint32_t kHardMaxNestingDepth = 64;
// The hard ceiling on max_header_bytes: the parsed view keeps 32-bit
// positions for its KVs (format/header.h, KeyValue). Real headers are
// megabytes; ggml reads no header this large into memory either.
inline constexpr uint64_t kHardMaxHeaderBytes = UINT32_MAX;

struct Policy {
  std::string name = "default";
  Limits limits;
  bool strict_key_grammar = false;  // spec grammar instead of the lenient one
  bool strict_severities = false;   // use RuleInfo::strict_severity
  // Check that every BPE merge is a pair of tokens (GG7004). Off by default:
  // it builds a hash set of the vocabulary, which costs more than the rest of
  // a validation together.
  bool check_merges = false;
  // Per-rule overrides, indexed by rule ID (IDs are < 10000).
  std::array<std::optional<Severity>, 10000> severity_override{};
  std::array<bool, 10000> disabled{};

  bool Enabled(RuleId id) const { return !disabled[static_cast<uint16_t>(id)]; }
  Severity SeverityOf(RuleId id) const;
};

Policy DefaultPolicy();
Policy StrictPolicy();

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_POLICY_H_
