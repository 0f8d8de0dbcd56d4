#include "ggufguard/findings/runtime_effects.h"

#include <array>

namespace ggufguard {
namespace {

constexpr RuntimeOutcome L = RuntimeOutcome::kLoads;
constexpr RuntimeOutcome R = RuntimeOutcome::kRefuses;
constexpr RuntimeOutcome H = RuntimeOutcome::kHangs;
constexpr RuntimeOutcome C = RuntimeOutcome::kCrashes;

// One row per rule that some runtime's reader or loader answers. Three
// readers stand for five runtimes:
// - llama.cpp's (ggml's gguf reader and llama_model_loader), for llama.cpp
//   and for ollama, which serves every GGUF model through llama-server; what
//   ollama's own Go reader refuses first is GG9200/GG9201;
// - gguf-py's GGUFReader, for vLLM (and transformers, which vLLM asks for the
//   config and tokenizer);
// - candle-core's GGUF reader, for candle;
// - mistral.rs's own reader (mistralrs-quant's GgufArchive, 2026-08).
// A rule with no row is ggufguard's own judgement: every runtime loads the
// file. The rows for the limit rules (GG1004, GG1005) hold at the default
// limits, which are ggml's; a policy that lowers them finds more than the
// runtimes refuse.
struct Row {
  RuleId rule;
  RuntimeOutcome llama_cpp;
  RuntimeOutcome gguf_py;
  RuntimeOutcome candle;
  RuntimeOutcome mistral_rs;
  std::string_view gguf_py_says;
  std::string_view candle_says;
  std::string_view mistral_rs_says;
};

constexpr Row kRows[] = {
    // rule, llama.cpp, gguf-py, candle, mistral.rs; what gguf-py, candle and mistral.rs say
    {RuleId::kTruncated, R, R, R, R, "a read past the end of the file (numpy returns a short slice; IndexError or ValueError)", "failed to fill whole buffer, or 'exceeds remaining file bytes'", "the file ends inside the header (a read past the end)"},
    {RuleId::kStringLengthLimit, R, R, R, R, "a string past the end of the file (a short slice, then a misread header)", "gguf: string length exceeds max 1073741824", "GGUF string length exceeds maximum 1073741824"},
    {RuleId::kArrayLengthLimit, R, H, R, R,
     "reads the declared count one element at a time, past the end of the file without moving, until memory runs out",
     "gguf: array length exceeds max 1073741824", "GGUF array length exceeds maximum 1073741824"},
    {RuleId::kBadMagic, R, R, R, R, "GGUF magic invalid", "unknown magic", "invalid GGUF magic"},
    {RuleId::kLegacyMagic, R, R, R, R, "GGUF magic invalid, or FUGG read as big-endian with an unsupported version", "unknown magic, or FUGG read as GGUF with an unsupported version", "invalid GGUF magic, or FUGG read as big-endian with an unsupported version"},
    {RuleId::kUnsupportedVersion, R, R, R, R, "Sorry, file appears to be version N which we cannot handle", "gguf: unsupported magic/version", "unsupported GGUF version"},
    {RuleId::kVersion1, R, R, L, L, "Sorry, file appears to be version 1 which we cannot handle", "", ""},
    {RuleId::kBigEndian, R, L, R, R, "", "gguf: unsupported magic/version (the version read little-endian)", "big-endian GGUF tensor loading is not supported"},
    {RuleId::kInvalidValueType, R, R, R, R, "N is not a valid GGUFValueType", "unrecognized value-type", "unknown GGUF value type"},
    {RuleId::kInvalidArrayType, R, R, R, R, "N is not a valid GGUFValueType", "unrecognized value-type", "unknown GGUF value type"},
    {RuleId::kNestedArray, R, L, L, L, "", "", ""},
    {RuleId::kInvalidUtf8, L, R, L, L,
     "UnicodeDecodeError: keys and tensor names are decoded as they are read, string values as transformers reads the "
     "metadata",
     "", ""},
    {RuleId::kInvalidBool, L, L, R, R, "", "unexpected bool value", "invalid GGUF boolean value"},
    {RuleId::kEmptyKey, R, L, L, L, "", "", ""},
    {RuleId::kDuplicateKey, R, R, L, R, "KeyError: Duplicate KEY already in list at offset N", "", "GGUF metadata key is duplicated"},
    {RuleId::kAlignmentType, R, R, L, L, "Bad type for general.alignment field", "", ""},
    {RuleId::kAlignmentNotPowerOfTwo, R, R, L, R, "Invalid alignment: must be a non-zero power of two", "", "GGUF alignment is not a nonzero power of two"},
    {RuleId::kKnownKeyType, R, L, L, L, "", "", ""},
    {RuleId::kMissingArchitecture, R, L, L, L, "", "", ""},
    {RuleId::kArchitectureName, R, L, L, L, "", "", ""},
    {RuleId::kMissingHyperparameter, R, L, L, L, "", "", ""},
    {RuleId::kBlockCountLimit, R, L, L, L, "", "", ""},
    {RuleId::kPerLayerArrayLength, R, L, L, L, "", "", ""},
    {RuleId::kEmbeddingShape, R, L, L, L, "", "", ""},
    {RuleId::kUnknownArchitecture, R, L, L, L, "", "", ""},
    {RuleId::kAttentionHeads, C, L, L, L, "", "", ""},
    {RuleId::kNotALlamaModel, R, L, L, L, "", "", ""},
    {RuleId::kTensorNameTooLong, R, L, L, L, "", "", ""},
    {RuleId::kDuplicateTensorName, R, R, L, R, "Found duplicated tensor with name NAME", "", "GGUF tensor is duplicated"},
    {RuleId::kTooManyDims, R, L, R, R, "", "gguf: tensor has N dimensions, max is 4", "GGUF tensor has N dimensions, maximum is 4"},
    {RuleId::kNegativeDim, R, R, R, L, "cannot reshape the tensor's data to its shape", "tensor needs N bytes at offset, only M remaining in file", ""},
    {RuleId::kUnknownGgmlType, R, R, R, R, "N is not a valid GGMLQuantizationType", "unknown dtype for tensor N", "cannot determine the exact byte length of the GGUF tensor"},
    {RuleId::kRemovedGgmlType, R, R, R, R, "N is not a valid GGMLQuantizationType", "unknown dtype for tensor N", "cannot determine the exact byte length of the GGUF tensor"},
    {RuleId::kRowNotBlockMultiple, R, R, L, R, "Quantized tensor row size is not a multiple of its block size", "", "GGUF tensor has N elements per row, not a multiple of its block size"},
    {RuleId::kTensorSizeOverflow, R, L, L, R, "", "", "element count overflow for GGUF tensor"},
    {RuleId::kZeroDim, R, L, L, L, "", "", ""},
    {RuleId::kTensorMisaligned, R, L, L, L, "", "", ""},
    {RuleId::kTensorOutOfBounds, R, R, R, R, "cannot reshape the tensor's data to its shape (its bytes are past the end)", "tensor needs N bytes at offset, only M remaining in file", "the tensor's data lies past the end of the file"},
    {RuleId::kTensorOverlap, R, L, L, L, "", "", ""},
    {RuleId::kTensorGap, R, L, L, L, "", "", ""},
    {RuleId::kTensorOutOfOrder, R, L, L, L, "", "", ""},
    {RuleId::kMissingTensorData, R, R, R, R, "cannot reshape the tensor's data to its shape (the file ends first)", "tensor needs N bytes at offset, only M remaining in file", "the tensor's data lies past the end of the file"},
    {RuleId::kVocabLengthMismatch, C, L, L, L, "", "", ""},
    {RuleId::kUnknownTokenizerModel, R, L, L, L, "", "", ""},
    {RuleId::kUnknownPreTokenizer, R, L, L, L, "", "", ""},
    {RuleId::kAddSpecialTokenUnset, R, L, L, L, "", "", ""},
    {RuleId::kTokenizerArrayMissing, R, L, L, L, "", "", ""},
    {RuleId::kCharsmapSize, R, L, L, L, "", "", ""},
    {RuleId::kRwkvNewlineHang, H, L, L, L, "", "", ""},
    {RuleId::kTensorAllocation, R, R, R, R, "cannot reshape the tensor's data to its shape (the file is too short)", "tensor needs N bytes at offset, only M remaining in file", "the tensor's data lies past the end of the file"},
    {RuleId::kTensorDataAlignment, C, L, L, L, "", "", ""},
    {RuleId::kWordPieceByteToken, C, L, L, L, "", "", ""},
    {RuleId::kNextnLayersRange, C, L, L, L, "", "", ""},
    {RuleId::kRopeScalingType, C, L, L, L, "", "", ""},
    {RuleId::kDuplicateToken, C, L, L, L, "", "", ""},
    {RuleId::kExpertCounts, C, L, L, L, "", "", ""},
    {RuleId::kKvHeadsPerLayer, C, L, L, L, "", "", ""},
    {RuleId::kUncomputableTensorType, C, L, L, L, "", "", ""},
    {RuleId::kNegativeNormEpsilon, C, L, L, L, "", "", ""},
    {RuleId::kHyperparameterAssert, C, L, L, L, "", "", ""},
    {RuleId::kClipUnknownProjector, R, L, L, L, "", "", ""},
    {RuleId::kClipPatchGrid, C, L, L, L, "", "", ""},
    {RuleId::kClipMissingKey, R, L, L, L, "", "", ""},
    {RuleId::kClipArrayShape, C, L, L, L, "", "", ""},
    {RuleId::kClipHeadCount, C, L, L, L, "", "", ""},
    {RuleId::kClipMergeSize, C, L, L, L, "", "", ""},
    {RuleId::kClipFeatureLayer, C, L, L, L, "", "", ""},
    {RuleId::kClipValueRefused, R, L, L, L, "", "", ""},
    {RuleId::kLoraAdapterRefused, R, L, L, L, "", "", ""},
    {RuleId::kControlVectorRefused, R, L, L, L, "", "", ""},
    {RuleId::kControlVectorLayerRange, C, L, L, L, "", "", ""},
    {RuleId::kAdapterBaseArchitecture, R, L, L, L, "", "", ""},
    {RuleId::kAdapterBaseTensorMissing, R, L, L, L, "", "", ""},
    {RuleId::kAdapterBaseShape, R, L, L, L, "", "", ""},
    {RuleId::kAdapterBaseExpertCount, C, L, L, L, "", "", ""},
    {RuleId::kControlVectorBaseEmbedding, R, L, L, L, "", "", ""},
};

// The runtime rules: each is one runtime's, with what that runtime does.
struct OwnRow {
  RuleId rule;
  Profile runtime;
  RuntimeOutcome outcome;
};

constexpr OwnRow kOwnRows[] = {
    {RuleId::kOllamaReaderLimit, Profile::kOllama, R},
    {RuleId::kOllamaTensorType, Profile::kOllama, R},
    {RuleId::kVllmReaderRefused, Profile::kVllm, R},
    {RuleId::kVllmTensorType, Profile::kVllm, R},
    {RuleId::kVllmDimensionInt32, Profile::kVllm, C},
    {RuleId::kVllmParserCost, Profile::kVllm, H},
    {RuleId::kMistralRsArchitecture, Profile::kMistralRs, R},
    {RuleId::kMistralRsSpecialToken, Profile::kMistralRs, R},
    {RuleId::kMistralRsTensorType, Profile::kMistralRs, R},
    {RuleId::kMistralRsTokenizer, Profile::kMistralRs, R},
    {RuleId::kCandleTensorType, Profile::kCandle, R},
    {RuleId::kCandleAlignmentZero, Profile::kCandle, C},
};

// Per rule position: the effect on each runtime (indexed by Profile; the
// gguf slot stays kLoads).
struct Effects {
  std::array<RuleEffect, kProfileCount> on{};
  ProfileSet stopped;
  std::optional<Profile> own;
};

using Table = std::array<Effects, kMaxRules + 1>;

Table MakeTable() {
  Table t{};
  auto at = [&](RuleId id) -> Effects& {
    const int pos = RulePosition(id);
    return t[pos < 0 ? kMaxRules : static_cast<size_t>(pos)];
  };
  auto set = [](Effects& e, Profile p, RuntimeOutcome o, std::string_view says) {
    e.on[static_cast<size_t>(p)] = RuleEffect{o, says};
    if (o != RuntimeOutcome::kLoads) e.stopped.Add(p);
  };
  for (const Row& r : kRows) {
    Effects& e = at(r.rule);
    set(e, Profile::kLlamaCpp, r.llama_cpp, "");
    set(e, Profile::kOllama, r.llama_cpp, "");  // llama-server
    set(e, Profile::kVllm, r.gguf_py, r.gguf_py_says);
    set(e, Profile::kCandle, r.candle, r.candle_says);
    set(e, Profile::kMistralRs, r.mistral_rs, r.mistral_rs_says);
  }
  for (const OwnRow& r : kOwnRows) {
    Effects& e = at(r.rule);
    set(e, r.runtime, r.outcome, "");
    e.own = r.runtime;
  }
  t[kMaxRules] = Effects{};  // an ID outside the catalog (a bug) stops nothing
  return t;
}

const Table& TheTable() {
  static const Table table = MakeTable();
  return table;
}

const Effects& EffectsOf(RuleId id) {
  const int pos = RulePosition(id);
  return TheTable()[pos < 0 ? kMaxRules : static_cast<size_t>(pos)];
}

}  // namespace

std::string_view RuntimeOutcomeName(RuntimeOutcome o) {
  switch (o) {
    case RuntimeOutcome::kLoads: return "loads";
    case RuntimeOutcome::kRefuses: return "refuses";
    case RuntimeOutcome::kHangs: return "hangs";
    case RuntimeOutcome::kCrashes: return "crashes";
  }
  return "crashes";  // unreachable: every value is listed
}

RuleEffect EffectOn(Profile runtime, RuleId id) { return EffectsOf(id).on[static_cast<size_t>(runtime)]; }

ProfileSet RuntimesStoppedBy(RuleId id) { return EffectsOf(id).stopped; }

std::optional<Profile> RuntimeOfRule(RuleId id) { return EffectsOf(id).own; }

}  // namespace ggufguard
