#include "ggufguard/findings/rule_catalog.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "absl/strings/str_format.h"

namespace ggufguard {
namespace {

constexpr Severity E = Severity::kError;
constexpr Severity W = Severity::kWarning;
constexpr Severity N = Severity::kInfo;

// The single table of rules. Keep in ID order; docs/rules.md mirrors it.
constexpr RuleInfo kRules[] = {
    {RuleId::kTruncated, "truncated", E, E, "the file ends before a field, string, array or count it declares"},
    {RuleId::kTensorCountLimit, "tensor-count-limit", E, E, "tensor_count exceeds the policy limit"},
    {RuleId::kKvCountLimit, "kv-count-limit", E, E, "kv_count exceeds the policy limit"},
    {RuleId::kStringLengthLimit, "string-length-limit", E, E, "a string is longer than the policy limit"},
    {RuleId::kArrayLengthLimit, "array-length-limit", E, E, "an array has more elements than the policy limit"},
    {RuleId::kNestingDepthLimit, "nesting-depth-limit", E, E, "arrays nest deeper than the policy limit"},
    {RuleId::kHeaderSizeLimit, "header-size-limit", E, E, "the header is larger than the policy limit"},

    {RuleId::kBadMagic, "bad-magic", E, E, "the file does not start with the GGUF magic"},
    {RuleId::kLegacyMagic, "legacy-magic", E, E, "a pre-GGUF (GGML/GGMF/GGJT) or pre-release (FUGG) magic"},
    {RuleId::kUnsupportedVersion, "unsupported-version", E, E, "version 0, above 3, or an impossible byte order"},
    {RuleId::kVersion1, "version-1", E, E, "GGUF v1 (u32 counts), rejected by today's loaders"},
    {RuleId::kBigEndian, "big-endian", N, N, "the file is big-endian; little-endian loaders cannot use it"},

    {RuleId::kInvalidValueType, "invalid-value-type", E, E, "a metadata value type id outside 0..12"},
    {RuleId::kInvalidArrayType, "invalid-array-type", E, E, "an array element type id outside 0..12"},
    {RuleId::kNestedArray, "nested-array", E, E, "an array of arrays, which ggml and llama.cpp reject"},
    {RuleId::kInvalidUtf8, "invalid-utf8", E, E, "a key or string value that is not strict UTF-8"},
    {RuleId::kInvalidBool, "invalid-bool", E, E, "a bool byte other than 0 or 1"},
    {RuleId::kNonFiniteFloat, "non-finite-float", E, E, "a NaN or infinite float in metadata"},
    {RuleId::kEmptyKey, "empty-key", E, E, "a metadata key of length 0"},
    {RuleId::kKeyGrammar, "key-grammar", W, E, "a key outside the spec's dotted lower_snake_case grammar"},
    {RuleId::kKeyControlBytes, "key-control-bytes", E, E, "a key with NUL, control or non-ASCII bytes"},
    {RuleId::kKeyTooLong, "key-too-long", E, E, "a key longer than 65535 bytes"},
    {RuleId::kDuplicateKey, "duplicate-key", E, E, "the same key twice; parsers disagree on which wins"},
    {RuleId::kKeyCollision, "key-collision", E, E, "keys that differ as bytes but collide in common readers"},
    {RuleId::kNulInString, "nul-in-string", W, E, "a string value containing NUL, truncated by C readers"},
    {RuleId::kValueTypeVersion, "value-type-version", E, E, "a 64-bit value type in a v1 file"},

    {RuleId::kAlignmentType, "alignment-type", E, E, "general.alignment is not a u32"},
    {RuleId::kAlignmentNotPowerOfTwo, "alignment-not-power-of-two", E, E, "general.alignment is 0 or not a power of two"},
    {RuleId::kAlignmentOutOfRange, "alignment-out-of-range", E, E, "general.alignment outside the policy bounds"},
    {RuleId::kKnownKeyType, "known-key-type", E, E, "a standard key whose value type is not the one loaders require"},
    {RuleId::kUnknownKey, "unknown-key", N, N, "a key outside the table of standard keys (for review)"},
    {RuleId::kMissingArchitecture, "missing-architecture", E, E, "general.architecture is absent from a non-empty file"},
    {RuleId::kArchitectureName, "architecture-name", E, E, "general.architecture is empty or has bytes outside [a-z0-9_-]"},
    {RuleId::kMissingHyperparameter, "missing-hyperparameter", E, E, "a model lacks a key its loader requires: a hyperparameter, or tokenizer.ggml.model"},
    {RuleId::kBlockCountLimit, "block-count-limit", E, E, "{arch}.block_count above 512 (LLAMA_MAX_LAYERS), or 0 in a model (llama.cpp asserts)"},
    {RuleId::kPerLayerArrayLength, "per-layer-array-length", E, E, "a hyperparameter array of a length llama.cpp rejects (per-layer: block_count, or block_count less nextn_predict_layers where read after it; rope.dimension_sections: 4)"},
    {RuleId::kHyperparameterRange, "hyperparameter-range", W, E, "a hyperparameter outside its sane range (zero size, eps not in (0, 1), ...)"},
    {RuleId::kEmbeddingShape, "embedding-shape", E, E, "token_embd/output weights that disagree with the vocabulary or embedding size"},
    {RuleId::kQuantizationVersion, "quantization-version", W, E, "quantized tensors without general.quantization_version 2"},
    {RuleId::kFileTypeMismatch, "file-type-mismatch", W, E, "general.file_type contradicts the tensor types"},
    {RuleId::kSplitKeys, "split-keys", E, E, "split.no/split.count/split.tensors.count inconsistent"},
    {RuleId::kUnknownArchitecture, "unknown-architecture", W, E, "general.architecture names no model llama.cpp builds (so no per-architecture check ran)"},
    {RuleId::kAttentionHeads, "attention-heads", E, E, "a layer's head counts that abort llama.cpp (0 query or K/V heads on an attention layer, query heads not a multiple of K/V heads, a head count it divides by)"},

    {RuleId::kEmptyTensorName, "empty-tensor-name", E, E, "a tensor with an empty name"},
    {RuleId::kTensorNameTooLong, "tensor-name-too-long", E, E, "a tensor name of 64 bytes or more (GGML_MAX_NAME)"},
    {RuleId::kTensorNameEncoding, "tensor-name-encoding", E, E, "a tensor name with invalid UTF-8, NUL or control bytes"},
    {RuleId::kDuplicateTensorName, "duplicate-tensor-name", E, E, "two tensors with the same name"},
    {RuleId::kTooManyDims, "too-many-dims", E, E, "n_dims above 4 (GGML_MAX_DIMS)"},
    {RuleId::kNegativeDim, "negative-dim", E, E, "a dimension that is negative read as int64"},
    {RuleId::kUnknownGgmlType, "unknown-ggml-type", E, E, "a ggml type id this version does not know"},
    {RuleId::kRemovedGgmlType, "removed-ggml-type", E, E, "a ggml type id that was removed (block size 0)"},
    {RuleId::kIntermediateGgmlType, "intermediate-ggml-type", W, E, "a compute-only ggml type (Q8_1, Q8_K) stored in a file"},
    {RuleId::kRowNotBlockMultiple, "row-not-block-multiple", E, E, "ne[0] is not a multiple of the type's block size"},
    {RuleId::kTensorSizeOverflow, "tensor-size-overflow", E, E, "element count or byte size overflows 64 bits"},
    {RuleId::kZeroDim, "zero-dim", E, E, "a tensor dimension of 0 (ggml divides by ne[1..3]: SIGFPE)"},

    {RuleId::kTensorMisaligned, "tensor-misaligned", E, E, "a tensor offset that is not a multiple of the alignment"},
    {RuleId::kTensorOutOfBounds, "tensor-out-of-bounds", E, E, "a tensor whose bytes lie past the end of the file"},
    {RuleId::kTensorOverlap, "tensor-overlap", E, E, "two tensors share bytes"},
    {RuleId::kTensorGap, "tensor-gap", E, E, "unused bytes between tensors beyond the alignment padding"},
    {RuleId::kTensorOutOfOrder, "tensor-out-of-order", W, E, "tensor data not in the order of the tensor infos"},
    {RuleId::kNonZeroPadding, "nonzero-padding", E, E, "alignment padding bytes that are not zero"},
    {RuleId::kTrailingBytes, "trailing-bytes", E, E, "bytes after the end of the last tensor's padded data (polyglot risk)"},
    {RuleId::kMissingTensorData, "missing-tensor-data", E, E, "the file ends at or before the data section"},
    {RuleId::kTensorDataNonFinite, "tensor-data-non-finite", E, E, "--deep: a NaN or infinity in tensor data or in a block's scale, as ggml_validate_row_data finds them"},
    {RuleId::kDeepCheckLimit, "deep-check-limit", N, N, "--deep: data left unchecked by the policy's max_deep_bytes, or shared by overlapping tensors"},
    {RuleId::kTensorDataUncheckable, "tensor-data-uncheckable", W, E, "--deep: a tensor type ggml_validate_row_data refuses (Q8_1), so llama.cpp with --check-tensors will not load it"},

    {RuleId::kVocabLengthMismatch, "vocab-length-mismatch", E, E, "tokenizer scores or token_type not as long as tokens"},
    {RuleId::kTokenTypeValue, "token-type-value", W, E, "a token_type outside 1..6"},
    {RuleId::kSpecialTokenId, "special-token-id", E, E, "a special token id at or above the vocabulary size"},
    {RuleId::kMergeNotTokens, "merge-not-tokens", W, E, "a BPE merge that is not a pair of tokens (strict or check_merges)"},
    {RuleId::kByteTokenFormat, "byte-token-format", E, E, "a BYTE-type token that is not <0xNN>"},

    {RuleId::kChatTemplateTooLarge, "chat-template-too-large", E, E, "a chat template larger than the policy limit"},
    {RuleId::kChatTemplateNonPrintable, "chat-template-non-printable", W, E, "control or invalid bytes in a chat template"},
    {RuleId::kChatTemplateDunderAccess, "chat-template-dunder-access", E, E, "a chat template reaching __dunder__ or _private attributes (SSTI)"},
    {RuleId::kChatTemplateAttrFilter, "chat-template-attr-filter", E, E, "a chat template using the attr filter (sandbox bypass)"},
    {RuleId::kChatTemplateDangerousName, "chat-template-dangerous-name", W, E, "a chat template naming os, eval, self, config, import, ..."},
    {RuleId::kChatTemplateGlobalsHelper, "chat-template-globals-helper", E, E, "a chat template using lipsum/cycler/joiner/... as an object"},
    {RuleId::kChatTemplateRecursiveMacro, "chat-template-recursive-macro", N, N, "a chat template macro that recurses under a condition (bounded recursion, as in tool-use templates)"},
    {RuleId::kChatTemplateExcessiveNesting, "chat-template-excessive-nesting", W, E, "a chat template nested deeper than the scanner limit"},
    {RuleId::kChatTemplateUnterminated, "chat-template-unterminated", W, E, "a chat template with an unterminated tag, string or block"},
    {RuleId::kChatTemplateUnboundedRecursion, "chat-template-unbounded-recursion", E, E, "a chat template recursion nothing ends: macros calling each other with no condition, self-application, loop() on anything but the item"},
    {RuleId::kChatTemplateDeepNesting, "chat-template-deep-nesting", E, E, "a chat template nested more than 256 levels deep (on the way to a renderer's stack overflow)"},
    {RuleId::kChatTemplateComputedName, "chat-template-computed-name", E, E, "a chat template reaching an attribute by a name computed at render time"},
    {RuleId::kChatTemplateFileAccess, "chat-template-file-access", E, E, "a chat template using include, extends, import or from (reads templates through the loader)"},
    {RuleId::kChatTemplateRenderBomb, "chat-template-render-bomb", E, E, "a chat template whose rendering would do more work or make more output than the policy allows"},
    {RuleId::kChatTemplateParseError, "chat-template-parse-error", W, E, "a chat template Jinja2 cannot parse"},

    {RuleId::kTensorAllocation, "tensor-allocation", E, E, "tensors declare more bytes than the file holds"},
    {RuleId::kKvCacheEstimate, "kv-cache-estimate", E, E, "context x layers x KV width would need a KV cache above the policy limit"},
    {RuleId::kVocabSizeLimit, "vocab-size-limit", E, E, "more tokens or merges than the policy limit"},
    {RuleId::kHeaderMemory, "header-memory", E, E, "the parsed header would take more loader memory than the policy limit"},

    {RuleId::kTensorDataAlignment, "tensor-data-alignment", E, E, "the first tensor of llama.cpp's CPU buffer at a file offset that is not a multiple of 32 (its default mmap load asserts)"},
    {RuleId::kWordPieceByteToken, "wordpiece-byte-token", E, E, "a BYTE-type token in a WordPiece (bert) vocabulary (llama.cpp aborts)"},
    {RuleId::kNextnLayersRange, "nextn-layers-range", E, E, "{arch}.nextn_predict_layers not below block_count where the architecture asserts it, or above it (llama.cpp aborts or wraps its layer count)"},
    {RuleId::kRopeScalingType, "rope-scaling-type", E, E, "{arch}.rope.scaling.type not none, linear, yarn or longrope (llama.cpp asserts)"},
    {RuleId::kDuplicateToken, "duplicate-token", E, E, "two tokens with the same text, as llama.cpp reads it (llama.cpp asserts)"},
    {RuleId::kExpertCounts, "expert-counts", E, E, "{arch}.expert_count / expert_used_count / expert groups that llama.cpp asserts on"},
    {RuleId::kKvHeadsPerLayer, "kv-heads-per-layer", E, E, "head_count_kv that differs between attention layers of an architecture whose K/V tensors have one width (llama.cpp asserts on a context)"},
    {RuleId::kUncomputableTensorType, "uncomputable-tensor-type", E, E, "a model tensor of a ggml type llama.cpp's CPU kernels cannot compute with (integer, f64, Q8_1/Q8_K; a 1-D weight not in f32)"},
    {RuleId::kNegativeNormEpsilon, "negative-norm-epsilon", E, E, "{arch}.attention.layer_norm_epsilon or layer_norm_rms_epsilon below 0 (every ggml backend asserts on the first token)"},
    {RuleId::kHyperparameterAssert, "hyperparameter-assert", E, E, "a hyperparameter value that an architecture's llama.cpp loader asserts against as it reads it (GGML_ASSERT: the process aborts)"},
    {RuleId::kTensorDataAlignmentOffload, "tensor-data-alignment-offload", W, E, "a tensor at a file offset that is not a multiple of 32 that starts llama.cpp's CPU buffer when only some layers are offloaded to a GPU (the mmap load asserts)"},
    {RuleId::kSplitShardMissing, "split-shard-missing", W, W, "a shard of a split set is absent: the set cannot be verified (inconclusive)"},
    {RuleId::kSplitCountMismatch, "split-count-mismatch", E, E, "a shard's split.count differs from the number of shards its set's names give (or it has no split.* keys)"},
    {RuleId::kSplitNumberMismatch, "split-number-mismatch", E, E, "a shard's split.no is not its file name's number minus one (llama.cpp refuses the set)"},
    {RuleId::kSplitDuplicateTensor, "split-duplicate-tensor", E, E, "a tensor name that appears in two shards of a split set (llama.cpp refuses the model)"},
    {RuleId::kSplitTensorTotal, "split-tensor-total", E, E, "split.tensors.count differs from the number of tensors the shards of the set hold"},
    {RuleId::kSplitMetadataOutsideFirst, "split-metadata-outside-first", W, E, "model metadata (general.architecture, {arch}.*, tokenizer.*) in a shard other than the first, where llama.cpp never reads it"},
    {RuleId::kSplitShardLimit, "split-shard-limit", E, E, "a split set of more shards than the policy's max_split_shards"},
};

static_assert([] {
  for (size_t i = 1; i < sizeof(kRules) / sizeof(kRules[0]); ++i) {
    if (static_cast<int>(kRules[i - 1].id) >= static_cast<int>(kRules[i].id)) return false;
  }
  return true;
}(), "kRules must be sorted by ID without repeats");

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

absl::Span<const RuleInfo> AllRules() { return kRules; }

namespace {

// RuleId -> position in kRules + 1 (0: no such rule), so that FindRule, which
// every finding calls, is one load, not a walk of the table.
constexpr size_t kIdSpace = 10000;  // IDs are four digits
static_assert(std::size(kRules) <= kMaxRules);
constexpr std::array<uint8_t, kIdSpace> kPositionOf = [] {
  std::array<uint8_t, kIdSpace> at{};
  for (size_t i = 0; i < std::size(kRules); ++i) at[static_cast<uint16_t>(kRules[i].id)] = static_cast<uint8_t>(i + 1);
  return at;
}();

}  // namespace

int RulePosition(RuleId id) {
  const uint16_t v = static_cast<uint16_t>(id);
  return v < kIdSpace ? static_cast<int>(kPositionOf[v]) - 1 : -1;
}

const RuleInfo* FindRule(RuleId id) {
  const int at = RulePosition(id);
  return at < 0 ? nullptr : &kRules[at];
}

const RuleInfo* FindRuleByCode(std::string_view code_or_name) {
  for (const RuleInfo& r : kRules) {
    if (r.name == code_or_name || RuleCode(r.id) == code_or_name) return &r;
  }
  return nullptr;
}

std::string RuleCode(RuleId id) { return absl::StrFormat("GG%04d", static_cast<int>(id)); }

std::string RuleCatalogVersion() {
  // FNV-1a over each rule's fields, with a separator so that fields cannot
  // run into each other.
  uint32_t h = 2166136261u;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 16777619u;
    h = (h ^ 0xffu) * 16777619u;
  };
  for (const RuleInfo& r : kRules) {
    mix(RuleCode(r.id));
    mix(r.name);
    mix(SeverityName(r.default_severity));
    mix(SeverityName(r.strict_severity));
  }
  return absl::StrFormat("%d-%08x", std::size(kRules), h);
}

}  // namespace ggufguard
