// Hostile headers: GGUF files whose header is valid or nearly so but is built
// to make a validator's time, memory or report grow with the number of items
// (issue 13). Deterministic, built with the test writer; shared by
// make_hostile_inputs (bench/, docs/performance.md) and by the tests that
// check that their reports stay bounded (tests/hostile_headers_test.cc),
// which use smaller counts.
#ifndef GGUFGUARD_BENCH_HOSTILE_INPUTS_H_
#define GGUFGUARD_BENCH_HOSTILE_INPUTS_H_

#include <cstdint>
#include <string_view>

#include "tests/support/gguf_writer.h"

namespace ggufguard::bench {

enum class HostileKind {
  // `n` distinct small keys ("k.0000000" ... with a u8 value each): ~22 bytes
  // per KV, every one an unknown key.
  kManyKeys,
  // A valid llama vocabulary-less header with `n` keys
  // "tokenizer.chat_template.tN", each a short template: `n` templates to
  // scan, hash and list.
  kManyTemplates,
  // `n` keys that collide once cut at NUL, trimmed or case-folded: half of
  // them in pairs ("c.N" / "C.N"), the other half in one group of keys
  // "general.name\0N" that all read as general.name to C code.
  kKeyCollisions,
  // `n` empty keys with a u8 value each (13 bytes per KV, the smallest KV
  // there is): `n` empty-key and duplicate-key findings, one group of `n`
  // identical keys.
  kEmptyKeys,
  // `n` tensor infos of one F32 element each, every name given twice
  // ("t.0", "t.0", "t.1", ...): ~40 bytes of header per tensor, `n` / 2
  // duplicate-name findings, and a view of `n` tensors.
  kManyTensors,
};

struct HostileInput {
  const char* file_name;
  HostileKind kind;
  uint32_t count;  // the number of hostile KVs (or tensor infos) in the benchmark file
};

// The benchmark files: a million items each (the default policy's kv_count
// limit is 2^20).
inline constexpr HostileInput kHostileInputs[] = {
    {"hostile-1m-keys.gguf", HostileKind::kManyKeys, 1000000},
    {"hostile-1m-templates.gguf", HostileKind::kManyTemplates, 1000000},
    {"hostile-1m-collisions.gguf", HostileKind::kKeyCollisions, 1000000},
    {"hostile-1m-empty-keys.gguf", HostileKind::kEmptyKeys, 1000000},
    {"hostile-1m-tensors.gguf", HostileKind::kManyTensors, 1000000},
};

std::string_view HostileKindName(HostileKind kind);

// The file of `kind` with `n` hostile KVs (tensor infos for kManyTensors).
testing::GgufBuilder HostileBuilder(HostileKind kind, uint32_t n);

}  // namespace ggufguard::bench

#endif  // GGUFGUARD_BENCH_HOSTILE_INPUTS_H_
