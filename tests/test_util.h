// Helpers shared by the validator's tests: findings as data, assertions that
// print the whole report when they fail, byte offsets of the fields a writer
// wrote, and the files beside the project (../shared, temp files).
//
// Header-only on purpose: tests/CMakeLists.txt compiles tests/*_test.cc, so a
// helper .cc here would not be built.
#ifndef GGUFGUARD_TESTS_TEST_UTIL_H_
#define GGUFGUARD_TESTS_TEST_UTIL_H_

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/report/render.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"

namespace ggufguard {

// So that gtest prints GG3004 rather than the enum's bytes.
inline void PrintTo(RuleId id, std::ostream* os) { *os << RuleCode(id); }

namespace testing {

// GGUF v2/v3 header layout: magic, version, tensor_count, kv_count.
inline constexpr uint64_t kVersionOffset = 4;
inline constexpr uint64_t kTensorCountOffset = 8;
inline constexpr uint64_t kKvCountOffset = 16;
inline constexpr uint64_t kV1KvCountOffset = 12;

// ggml tensor type ids used by the tests.
inline constexpr uint32_t kF32 = 0;
inline constexpr uint32_t kF16 = 1;
inline constexpr uint32_t kQ4_0 = 2;
inline constexpr uint32_t kQ8_1 = 9;
inline constexpr uint32_t kQ8_K = 15;
inline constexpr uint32_t kI8 = 24;

// --- Findings as data ---

struct RuleAt {
  RuleId rule;
  uint64_t offset;
  friend bool operator==(const RuleAt&, const RuleAt&) = default;
  friend std::ostream& operator<<(std::ostream& os, const RuleAt& r) {
    return os << RuleCode(r.rule) << "@" << r.offset;
  }
};

// Validates a file the writer built, in memory.
inline Report Check(const BuiltFile& f, const Policy& p = DefaultPolicy()) { return ValidateBytes(f.bytes, p); }

inline std::vector<RuleId> RuleIds(const Report& r) {
  std::vector<RuleId> ids;
  for (const Finding& f : r.findings) ids.push_back(f.rule);
  return ids;
}

inline std::vector<RuleAt> RulesAt(const Report& r) {
  std::vector<RuleAt> out;
  for (const Finding& f : r.findings) out.push_back(RuleAt{f.rule, f.offset});
  return out;
}

// Without the findings of `drop` (e.g. the big-endian note).
inline std::vector<RuleAt> RulesAtExcept(const Report& r, RuleId drop) {
  std::vector<RuleAt> out = RulesAt(r);
  out.erase(std::remove_if(out.begin(), out.end(), [&](const RuleAt& x) { return x.rule == drop; }), out.end());
  return out;
}

inline size_t CountRule(const Report& r, RuleId id) {
  return static_cast<size_t>(
      std::count_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.rule == id; }));
}

inline size_t CountSeverity(const Report& r, Severity s) {
  return static_cast<size_t>(
      std::count_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.severity == s; }));
}

// One line per finding, for failure messages.
inline std::string Describe(const Report& r) {
  std::ostringstream os;
  os << "report (header_parsed=" << r.header_parsed << ", has_errors=" << r.has_errors << ", file_size=" << r.file_size
     << "):\n";
  for (const Finding& f : r.findings) {
    os << "  " << RuleCode(f.rule) << "@" << f.offset << " " << SeverityName(f.severity) << ": " << f.message << "\n";
  }
  if (r.findings.empty()) os << "  (no findings)\n";
  return os.str();
}

inline ::testing::AssertionResult HasFinding(const Report& r, RuleId id, uint64_t offset) {
  for (const Finding& f : r.findings) {
    if (f.rule == id && f.offset == offset) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no " << RuleCode(id) << " at offset " << offset << " in " << Describe(r);
}

inline ::testing::AssertionResult HasRule(const Report& r, RuleId id) {
  if (CountRule(r, id) > 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no " << RuleCode(id) << " in " << Describe(r);
}

inline ::testing::AssertionResult LacksRule(const Report& r, RuleId id) {
  if (CountRule(r, id) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected " << RuleCode(id) << " in " << Describe(r);
}

// Exactly these (rule, offset) pairs, in report order (offset, then rule).
inline ::testing::AssertionResult FindingsAre(const Report& r, const std::vector<RuleAt>& want) {
  if (RulesAt(r) == want) return ::testing::AssertionSuccess();
  std::ostringstream os;
  for (const RuleAt& w : want) os << " " << w;
  return ::testing::AssertionFailure() << "wanted findings" << os.str() << "; got " << Describe(r);
}

// GG8030-GG8032 say where a chat template comes from: a note on every file
// that holds one (docs/provenance.md). A test that wants "no finding" of a
// file with a template asks for none but these.
inline bool IsProvenanceNote(RuleId id) {
  return id == RuleId::kChatTemplateUpstreamExact || id == RuleId::kChatTemplateUpstreamModified ||
         id == RuleId::kChatTemplateNoUpstream;
}
inline std::vector<Finding> FindingsBesidesProvenance(const Report& r) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings) {
    if (!IsProvenanceNote(f.rule)) out.push_back(f);
  }
  return out;
}

inline ::testing::AssertionResult IsValid(const Report& r) {
  if (r.valid()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not valid: " << Describe(r);
}

// --- Policies ---

// The structural families this suite covers: limits and truncation (1xxx),
// the file header (2xxx), metadata encoding (3xxx), general.alignment
// (4001-4003), tensor infos (5xxx) and the data layout (6xxx).
inline bool IsStructuralRule(RuleId id) {
  const int n = static_cast<int>(id);
  if (n >= 4000 && n < 5000) return n <= 4003;
  // The --deep rules read tensor data, not the structure: deep_data_test.cc.
  if (id == RuleId::kTensorDataNonFinite || id == RuleId::kDeepCheckLimit || id == RuleId::kTensorDataUncheckable) {
    return false;
  }
  return n >= 1000 && n < 7000;
}

// `base` with every non-structural rule disabled (known keys and
// hyperparameters, tokenizer, chat templates, resource estimates), so that a
// test file need not be a complete model to be valid: those families have
// their own tests. Limits, severities and names are `base`'s.
// Arrays of arrays (GG3003, an error under both policies) stay a warning
// here: the parser and encoding tests nest arrays to reach what lies inside
// them, and their neighbours must be valid.
inline Policy StructuralOnly(Policy base) {
  for (const RuleInfo& r : AllRules()) {
    if (!IsStructuralRule(r.id)) base.disabled[static_cast<uint16_t>(r.id)] = true;
  }
  base.severity_override[static_cast<uint16_t>(RuleId::kNestedArray)] = Severity::kWarning;
  return base;
}
inline Policy StructuralPolicy() { return StructuralOnly(DefaultPolicy()); }
inline Policy StructuralStrictPolicy() { return StructuralOnly(StrictPolicy()); }

// --- Validation of built files ---

// The report's views point into f.bytes: `f` must outlive it.
inline Report Validate(const BuiltFile& f, const Policy& policy = StructuralPolicy()) {
  return ValidateBytes(f.bytes, policy);
}
Report Validate(BuiltFile&&, const Policy& = StructuralPolicy()) = delete;  // would dangle

// The same bytes through ValidateSource over memory, reading in small steps
// so that the growing-prefix path runs. Fails the test on an I/O error.
inline std::optional<ValidatedFile> ValidateThroughSource(absl::Span<const uint8_t> bytes, const Policy& policy,
                                                          SourceOptions options = {.first_prefix = 64, .growth = 4}) {
  MemorySource source(bytes);
  absl::StatusOr<ValidatedFile> v = ValidateSource(source, policy, options);
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok()) return std::nullopt;
  return std::move(*v);
}

// A policy that demotes the v1 error to a note, for v1 files whose other
// findings are the point of a test.
inline Policy V1AllowedPolicy() {
  Policy p = StructuralPolicy();
  p.name = "default+v1";
  p.severity_override[static_cast<uint16_t>(RuleId::kVersion1)] = Severity::kInfo;
  return p;
}

// --- Field offsets of a written file ---

// Where one KV's fields are. `length_size` is 8 (v2/v3) or 4 (v1).
struct KvFields {
  uint64_t start;    // the key's length field
  uint64_t key;      // the key's first byte
  uint64_t type;     // the value type id
  uint64_t payload;  // what follows the type id
  uint64_t length_size;

  uint64_t string_bytes() const { return payload + length_size; }  // a string value's first byte
  uint64_t array_elem_type() const { return payload; }
  uint64_t array_count() const { return payload + 4; }
  uint64_t array_elements() const { return payload + 4 + length_size; }
};

inline KvFields KvAt(const BuiltFile& f, size_t i, uint64_t length_size = 8) {
  return KvFields{f.kv_offsets.at(i), f.kv_offsets.at(i) + length_size, f.kv_value_offsets.at(i),
                  f.kv_value_offsets.at(i) + 4, length_size};
}

// Where one tensor info's fields are. The type and offset fields are found
// from the end of the record (the next record's start), so a lying n_dims or
// dims list cannot shift them.
struct TensorFields {
  uint64_t start;  // the name's length field
  uint64_t name;   // the name's first byte
  uint64_t n_dims;
  uint64_t type;
  uint64_t offset_field;
};

inline TensorFields TensorAt(const BuiltFile& f, size_t i, uint64_t name_length, uint64_t length_size = 8) {
  const uint64_t end = i + 1 < f.tensor_info_offsets.size() ? f.tensor_info_offsets[i + 1] : f.header_end;
  const uint64_t start = f.tensor_info_offsets.at(i);
  return TensorFields{start, start + length_size, start + length_size + name_length, end - 8 - 4, end - 8};
}

// The byte offset of string `index` of a string array (its first byte, after
// its length), given the strings written before it.
inline uint64_t StringArrayElement(const KvFields& kv, const std::vector<std::string>& strings, size_t index) {
  uint64_t at = kv.array_elements();
  for (size_t i = 0; i < index; ++i) at += kv.length_size + strings.at(i).size();
  return at + kv.length_size;
}

// `levels` arrays of arrays around `innermost` (an array value): levels = 1
// is an array whose one element is `innermost`.
inline GgufValue NestedArray(int levels, GgufValue innermost) {
  GgufValue v = std::move(innermost);
  for (int i = 0; i < levels; ++i) v = GgufValue::Array(ValueType::kArray, {std::move(v)});
  return v;
}

// The offset of the element-type field of the array at nesting `depth` (0:
// the KV's own array) along the first-element path of a NestedArray value.
// Each level is elem type (4) + count (length_size) before its first element.
inline uint64_t NestedArrayAt(const KvFields& kv, uint64_t depth) { return kv.payload + depth * (4 + kv.length_size); }

// --- Files ---

// ../shared beside the project root, or $GGUFGUARD_SHARED_DIR.
inline std::filesystem::path SharedDir() {
  if (const char* env = std::getenv("GGUFGUARD_SHARED_DIR"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(GGUFGUARD_SOURCE_DIR) / ".." / "shared";
}

// ../shared/corpus-real, the real files other tools wrote. Every test that
// needs it starts with GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS(), so that all of
// them skip the same way, with the same message, where it is absent.
inline std::filesystem::path RealCorpusDir() { return SharedDir() / "corpus-real"; }
inline bool RealCorpusPresent() {
  return std::filesystem::is_directory(RealCorpusDir()) &&
         std::filesystem::is_regular_file(RealCorpusDir() / "MANIFEST.md");
}
#define GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS()                                                             \
  if (!::ggufguard::testing::RealCorpusPresent()) {                                                      \
    GTEST_SKIP() << "real-file corpus not found at " << ::ggufguard::testing::RealCorpusDir()            \
                 << " (expected ../shared beside the project root; set GGUFGUARD_SHARED_DIR to point at it)"; \
  }

inline std::optional<std::vector<uint8_t>> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

// A fresh path under the test temp dir, unique per process and name.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "ggufguard_" + std::to_string(::getpid()) + "_" + name;
}

// TempPath(name) as an empty directory: whatever an earlier run left there
// is removed first.
inline std::string FreshDir(const std::string& name) {
  const std::string dir = TempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void WriteFileBytes(const std::string& path, absl::Span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// What a streaming report writer (MakeMarkdownWriter, MakeCycloneDxWriter)
// writes for one outcome, finished.
template <typename MakeWriter>
std::string RenderThroughWriter(MakeWriter make, const FileOutcome& outcome) {
  std::ostringstream out;
  {
    std::unique_ptr<ReportWriter> w = make(out);
    w->Add(outcome);
    w->Finish();
  }
  return out.str();
}

// The (name, value) properties of a CycloneDX document's components whose
// name starts with `prefix` ("ggufguard:sampling:"), in document order.
inline std::vector<std::pair<std::string, std::string>> CycloneDxProperties(const std::string& bom,
                                                                            const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> found;
  const nlohmann::json doc = nlohmann::json::parse(bom);
  for (const auto& c : doc["components"]) {
    if (!c.contains("properties")) continue;
    for (const auto& p : c["properties"]) {
      const std::string name = p["name"].get<std::string>();
      if (name.rfind(prefix, 0) == 0) found.emplace_back(name, p["value"].get<std::string>());
    }
  }
  return found;
}

}  // namespace testing
}  // namespace ggufguard

#endif  // GGUFGUARD_TESTS_TEST_UTIL_H_
