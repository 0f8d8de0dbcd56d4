// Every rule ggufguard knows: stable ID, kebab-case name, default severity.
//
// IDs are grouped by thousands and never reused once retired:
//   1xxx limits and truncation     2xxx file header
//   3xxx metadata encoding         4xxx known keys and hyperparameters
//   5xxx tensor infos              6xxx data layout
//   7xxx tokenizer                 8xxx chat templates
//   9xxx loader confusion and resource bombs
// docs/rules.md explains each one; a test keeps the two in step.
#ifndef GGUFGUARD_FINDINGS_RULE_CATALOG_H_
#define GGUFGUARD_FINDINGS_RULE_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace ggufguard {

enum class Severity : uint8_t { kInfo = 0, kWarning = 1, kError = 2 };
std::string_view SeverityName(Severity s);  // "info", "warning", "error"

enum class RuleId : uint16_t {
  // 1xxx limits and truncation
  kTruncated = 1001,
  kTensorCountLimit = 1002,
  kKvCountLimit = 1003,
  kStringLengthLimit = 1004,
  kArrayLengthLimit = 1005,
  kNestingDepthLimit = 1006,
  kHeaderSizeLimit = 1007,
  // 2xxx file header
  kBadMagic = 2001,
  kLegacyMagic = 2002,
  kUnsupportedVersion = 2003,
  kVersion1 = 2004,
  kBigEndian = 2005,
  // 3xxx metadata encoding
  kInvalidValueType = 3001,
  kInvalidArrayType = 3002,
  kNestedArray = 3003,
  kInvalidUtf8 = 3004,
  kInvalidBool = 3005,
  kNonFiniteFloat = 3006,
  kEmptyKey = 3007,
  kKeyGrammar = 3008,
  kKeyControlBytes = 3009,
  kKeyTooLong = 3010,
  kDuplicateKey = 3011,
  kKeyCollision = 3012,
  kNulInString = 3013,
  kValueTypeVersion = 3014,
  // 4xxx known keys
  kAlignmentType = 4001,
  kAlignmentNotPowerOfTwo = 4002,
  kAlignmentOutOfRange = 4003,
  kKnownKeyType = 4004,
  kUnknownKey = 4005,
  kMissingArchitecture = 4006,
  kArchitectureName = 4007,
  kMissingHyperparameter = 4008,
  kBlockCountLimit = 4009,
  kPerLayerArrayLength = 4010,
  kHyperparameterRange = 4011,
  kEmbeddingShape = 4012,
  kQuantizationVersion = 4013,
  kFileTypeMismatch = 4014,
  kSplitKeys = 4015,
  kUnknownArchitecture = 4016,
  kAttentionHeads = 4017,
  // 5xxx tensor infos
  kEmptyTensorName = 5001,
  kTensorNameTooLong = 5002,
  kTensorNameEncoding = 5003,
  kDuplicateTensorName = 5004,
  kTooManyDims = 5005,
  kNegativeDim = 5006,
  kUnknownGgmlType = 5007,
  kRemovedGgmlType = 5008,
  kIntermediateGgmlType = 5009,
  kRowNotBlockMultiple = 5010,
  kTensorSizeOverflow = 5011,
  kZeroDim = 5012,
  // 6xxx data layout
  kTensorMisaligned = 6001,
  kTensorOutOfBounds = 6002,
  kTensorOverlap = 6003,
  kTensorGap = 6004,
  kTensorOutOfOrder = 6005,
  kNonZeroPadding = 6006,
  kTrailingBytes = 6007,
  kMissingTensorData = 6008,
  kTensorDataNonFinite = 6009,   // --deep
  kDeepCheckLimit = 6010,        // --deep
  kTensorDataUncheckable = 6011, // --deep
  // 7xxx tokenizer
  kVocabLengthMismatch = 7001,
  kTokenTypeValue = 7002,
  kSpecialTokenId = 7003,
  kMergeNotTokens = 7004,
  kByteTokenFormat = 7005,
  // 8xxx chat templates
  kChatTemplateTooLarge = 8001,
  kChatTemplateNonPrintable = 8002,
  kChatTemplateDunderAccess = 8003,
  kChatTemplateAttrFilter = 8004,
  kChatTemplateDangerousName = 8005,
  kChatTemplateGlobalsHelper = 8006,
  kChatTemplateRecursiveMacro = 8007,
  kChatTemplateExcessiveNesting = 8008,
  kChatTemplateUnterminated = 8009,
  kChatTemplateUnboundedRecursion = 8010,
  kChatTemplateDeepNesting = 8011,
  kChatTemplateComputedName = 8012,
  kChatTemplateFileAccess = 8013,
  kChatTemplateRenderBomb = 8014,
  kChatTemplateParseError = 8015,
  // 9xxx loader confusion and resource bombs
  kTensorAllocation = 9001,
  kKvCacheEstimate = 9002,
  kVocabSizeLimit = 9003,
  kHeaderMemory = 9004,
  // 9050-9099 loader aborts found by the loader oracle (fuzz/oracle)
  kTensorDataAlignment = 9050,
  kWordPieceByteToken = 9051,
  kNextnLayersRange = 9052,
  kRopeScalingType = 9053,
  kDuplicateToken = 9054,
  kExpertCounts = 9055,
  kKvHeadsPerLayer = 9056,
  kUncomputableTensorType = 9057,
  kNegativeNormEpsilon = 9058,
  kHyperparameterAssert = 9059,
  kTensorDataAlignmentOffload = 9060,
  // 91xx: a split set judged as one model (split/split_set.h).
  kSplitShardMissing = 9100,
  kSplitCountMismatch = 9101,
  kSplitNumberMismatch = 9102,
  kSplitDuplicateTensor = 9103,
  kSplitTensorTotal = 9104,
  kSplitMetadataOutsideFirst = 9105,
  kSplitShardLimit = 9106,
};

struct RuleInfo {
  RuleId id;
  std::string_view name;      // kebab-case, stable
  Severity default_severity;  // under the default policy
  Severity strict_severity;   // under the strict policy
  std::string_view summary;   // one line: what it catches
};

absl::Span<const RuleInfo> AllRules();      // in ID order
const RuleInfo* FindRule(RuleId id);        // nullptr only for a bug
// The rule's position in AllRules() (0 .. kMaxRules - 1), or -1 for an ID no
// rule has (a bug). Constant time: sinks index per-rule counters with it.
inline constexpr size_t kMaxRules = 255;
int RulePosition(RuleId id);
const RuleInfo* FindRuleByCode(std::string_view code_or_name);  // "GG3011" or "duplicate-key"
std::string RuleCode(RuleId id);            // "GG3011"
// "<rule count>-<8 hex digits>": a hash of every rule's ID, name and
// severities, so that the version changes with the catalog without anyone
// having to remember to bump it. Compare it for equality only.
std::string RuleCatalogVersion();

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_RULE_CATALOG_H_
