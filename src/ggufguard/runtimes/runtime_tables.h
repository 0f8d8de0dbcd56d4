// What each runtime's GGUF reader and loader accept, generated from their
// sources by scripts/gen_runtime_tables.py into runtime_tables.inc (each
// table's repository, version and commit are in kSources; docs/runtimes.md
// says how to refresh them). The rules that read these tables are in
// runtime_rules.cc; what a finding of any rule means for each runtime is
// findings/runtime_effects.h.
#ifndef GGUFGUARD_RUNTIMES_RUNTIME_TABLES_H_
#define GGUFGUARD_RUNTIMES_RUNTIME_TABLES_H_

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "ggufguard/findings/profile.h"

namespace ggufguard {
namespace runtime_tables {

struct RuntimeSource {
  std::string_view name;        // "ollama", "vllm", "gguf-py", "mistral.rs", "candle"
  std::string_view repository;  // "ollama/ollama"
  std::string_view version;     // a release tag or crate version; "?" where the tree gives none
  std::string_view commit;      // 40 hex digits
  std::string_view date;        // the commit's date, YYYY-MM-DD; empty where unknown
  std::string_view files;       // what the generator read
};

#include "ggufguard/runtimes/runtime_tables.inc"

}  // namespace runtime_tables

// Whether a sorted table of type ids holds `id`.
inline bool TableHas(absl::Span<const uint32_t> sorted_ids, uint32_t id) {
  return std::binary_search(sorted_ids.begin(), sorted_ids.end(), id);
}
inline bool TableHas(absl::Span<const std::string_view> sorted_names, std::string_view name) {
  return std::binary_search(sorted_names.begin(), sorted_names.end(), name);
}

// The sources a runtime's verdict rests on: "EricLBuehler/mistral.rs 0.9.2
// @9e922623f24b (2026-08-22)"; for llama.cpp, ggufguard's own llama.cpp
// tables (rules/llama_tables.inc); for ollama, its reader and the llama.cpp
// build it runs; for vLLM, vLLM's and gguf-py's.
std::string RuntimeJudgedAt(Profile runtime);

}  // namespace ggufguard

#endif  // GGUFGUARD_RUNTIMES_RUNTIME_TABLES_H_
