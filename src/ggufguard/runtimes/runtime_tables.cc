#include "ggufguard/runtimes/runtime_tables.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/rules/known_keys.h"

namespace ggufguard {
namespace {

namespace t = runtime_tables;

// TableHas searches: a generated table out of order would answer wrong.
template <typename T, size_t N>
constexpr bool Sorted(const T (&a)[N]) {
  return std::is_sorted(a, a + N);
}
static_assert(Sorted(t::kOllamaSizedTypes) && Sorted(t::kGgufPyTypes) && Sorted(t::kGgufPyOwnFields) &&
                  Sorted(t::kVllmWeightTypes) && Sorted(t::kCandleReaderTypes) && Sorted(t::kCandleLoadTypes) &&
                  Sorted(t::kCandleAlignmentTypes) && Sorted(t::kMistralRsKnownTypes) &&
                  Sorted(t::kMistralRsTokenizerModels) && Sorted(t::kMistralRsBpeModels),
              "runtime_tables.inc: every table is sorted (regenerate it with scripts/gen_runtime_tables.py)");

std::string Describe(std::string_view name) {
  for (const t::RuntimeSource& s : t::kSources) {
    if (s.name != name) continue;
    std::string out = absl::StrCat(Sv(s.repository), s.version == "?" ? "" : " ", s.version == "?" ? "" : Sv(s.version),
                                   " @", Sv(s.commit.substr(0, 12)));
    if (!s.date.empty()) absl::StrAppend(&out, " (", Sv(s.date), ")");
    return out;
  }
  return std::string(name);  // unreachable: every runtime has a source
}

}  // namespace

std::string RuntimeJudgedAt(Profile runtime) {
  switch (runtime) {
    case Profile::kLlamaCpp:
      return absl::StrCat("ggml-org/llama.cpp @", Sv(LlamaCppCommit().substr(0, 12)));
    case Profile::kOllama:
      return absl::StrCat(Describe("ollama"), ", llama-server ", Sv(t::kOllamaLlamaCppBuild), " as ggml-org/llama.cpp @",
                          Sv(LlamaCppCommit().substr(0, 12)));
    case Profile::kVllm:
      return absl::StrCat(Describe("vllm"), ", gguf-py ", Describe("gguf-py"));
    case Profile::kMistralRs:
      return Describe("mistral.rs");
    case Profile::kCandle:
      return Describe("candle");
    case Profile::kGguf:
      break;
  }
  return "";
}

}  // namespace ggufguard
