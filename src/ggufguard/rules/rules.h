// The rule families. Each reads the parsed view and records findings; the
// tensor and known-key rules also fill in what later rules depend on (the
// effective alignment, data offset and tensor byte sizes), always with checked
// arithmetic.
#ifndef GGUFGUARD_RULES_RULES_H_
#define GGUFGUARD_RULES_RULES_H_

#include "absl/status/status.h"
#include "ggufguard/format/header.h"
#include "ggufguard/io/source.h"
#include "ggufguard/rules/finding.h"
#include "ggufguard/rules/policy.h"

namespace ggufguard {

struct RuleContext {
  GgufHeader& header;
  FileView& file;
  FindingSink& sink;
  const Policy& policy;
};

// 3xxx: keys (grammar, bytes, duplicates, collisions) and value encodings
// (UTF-8, NUL, bools, finite floats).
void CheckMetadataEncoding(RuleContext& ctx);
// 4xxx: general.alignment; sets header.alignment and header.data_offset.
void CheckAlignment(RuleContext& ctx);
// 5xxx: tensor names, dims and types; fills each tensor's byte size.
void CheckTensorInfos(RuleContext& ctx);
// 6xxx: where tensor data lies in the file. Reads padding bytes past the
// header, so it can fail with an I/O error.
absl::Status CheckDataLayout(RuleContext& ctx);

// The normal form a key takes in the readers that disagree with byte
// equality (C-string truncation at NUL, white-space trimming, case folding).
std::string CanonicalKey(std::string_view key);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_RULES_H_
