// Invariant checks shared by the fuzzers.
//
// A fuzzer finds more than memory errors only if it knows what "correct"
// means. These checks state the promises ggufguard makes to a loader (the
// header of a valid report describes tensors that lie inside the file,
// aligned, without overlap), to a CI log (findings in offset order, pointing
// inside the file) and to a terminal (rendered text is printable ASCII). A
// broken promise is a bug: GGUFGUARD_FUZZ_CHECK prints what broke and calls
// __builtin_trap(), so libFuzzer records the input as a crash (the Wuffs
// `fuzzlib` habit: crash on purpose when an invariant breaks).
#ifndef GGUFGUARD_FUZZ_FUZZ_COMMON_H_
#define GGUFGUARD_FUZZ_FUZZ_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/validate.h"

namespace ggufguard::fuzz {

[[noreturn]] inline void InvariantFailed(const char* file, int line, const char* cond, const std::string& detail) {
  std::fprintf(stderr, "\n==ggufguard invariant broken== %s:%d: %s\n  %s\n", file, line, cond, detail.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

// Checks `cond`; on failure prints it with `detail` (evaluated only then).
#define GGUFGUARD_FUZZ_CHECK(cond, detail)                                           \
  do {                                                                               \
    if (!(cond)) ::ggufguard::fuzz::InvariantFailed(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

// A hash of the input, for choices a fuzzer makes per input (which checks to
// sample, where to cut): deterministic, so a crash reproduces.
inline uint64_t InputHash(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

inline std::string FindingString(const Finding& f) {
  return RuleCode(f.rule) + " " + std::string(SeverityName(f.severity)) + " @" + std::to_string(f.offset) + ": " +
         f.message;
}

inline std::string FindingsString(const std::vector<Finding>& findings) {
  std::string s;
  for (const Finding& f : findings) s += "\n    " + FindingString(f);
  return s;
}

inline bool HasRule(const Report& r, RuleId id) {
  for (const Finding& f : r.findings) {
    if (f.rule == id) return true;
  }
  return r.suppressed.count(id) != 0;
}

// True when `s` points inside `bytes` (an empty span anywhere inside, end
// included, counts).
inline bool SpanInside(absl::Span<const uint8_t> s, absl::Span<const uint8_t> bytes) {
  if (s.empty()) return true;
  const uint8_t* b = bytes.data();
  return s.data() >= b && s.data() <= b + bytes.size() && s.size() <= static_cast<size_t>(b + bytes.size() - s.data());
}

inline bool StringInside(std::string_view s, absl::Span<const uint8_t> bytes) {
  return SpanInside(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()), bytes);
}

// Output meant for terminals and CI logs: printable ASCII and newlines only,
// whatever bytes the file held (a key with ESC [ 2 J must not clear a screen).
inline void CheckPrintable(std::string_view out, const char* what) {
  for (size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    GGUFGUARD_FUZZ_CHECK(c == '\n' || (c >= 0x20 && c < 0x7F),
                         std::string(what) + " has byte " + std::to_string(c) + " at " + std::to_string(i));
  }
}

inline bool PolicyDisablesAnyRule(const Policy& policy) {
  for (const RuleInfo& rule : AllRules()) {
    if (!policy.Enabled(rule.id)) return true;
  }
  return false;
}

// No rule disabled, and every rule that is an error by default still is.
inline bool PolicyKeepsEveryError(const Policy& policy) {
  for (const RuleInfo& rule : AllRules()) {
    if (!policy.Enabled(rule.id)) return false;
    if (rule.default_severity == Severity::kError && policy.SeverityOf(rule.id) != Severity::kError) return false;
  }
  return true;
}

// Everything a report promises, for any input and any policy.
//   `bytes`: the validated file; the report's views must point into
//   `view_bytes` (the bytes ValidateSource kept, or the file itself).
inline void CheckReport(const Report& r, absl::Span<const uint8_t> bytes, absl::Span<const uint8_t> view_bytes,
                        const Policy& policy) {
  if (r.member_offset) {
    // A llamafile: the report is its GGUF member's, which lies inside the file.
    GGUFGUARD_FUZZ_CHECK(*r.member_offset <= bytes.size() && r.file_size <= bytes.size() - *r.member_offset,
                         "llamafile member outside the file");
    // Views into the whole input (ValidateBytes) count from the member too;
    // a source's prefix buffer already starts at the member.
    const bool views_in_input = view_bytes.data() == bytes.data();
    bytes = bytes.subspan(*r.member_offset, r.file_size);
    if (views_in_input) view_bytes = bytes;
  }
  const uint64_t size = bytes.size();
  GGUFGUARD_FUZZ_CHECK(r.file_size == size, "file_size " + std::to_string(r.file_size));

  // Findings: known rules, severities as the policy says, inside the file,
  // sorted by offset then rule, capped per rule.
  bool listed_error = false;
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    GGUFGUARD_FUZZ_CHECK(FindRule(f.rule) != nullptr, FindingString(f));
    GGUFGUARD_FUZZ_CHECK(f.severity == policy.SeverityOf(f.rule), FindingString(f));
    GGUFGUARD_FUZZ_CHECK(f.offset <= size, FindingString(f) + " (file has " + std::to_string(size) + " bytes)");
    GGUFGUARD_FUZZ_CHECK(!f.message.empty(), FindingString(f));
    if (i > 0) {
      const Finding& p = r.findings[i - 1];
      GGUFGUARD_FUZZ_CHECK(p.offset < f.offset || (p.offset == f.offset && p.rule <= f.rule),
                           "findings out of order:" + FindingsString(r.findings));
    }
    listed_error |= f.severity == Severity::kError;
  }
  std::map<RuleId, uint64_t> per_rule;
  for (const Finding& f : r.findings) ++per_rule[f.rule];
  for (const auto& [rule, n] : per_rule) {
    GGUFGUARD_FUZZ_CHECK(n <= policy.limits.max_findings_per_rule, RuleCode(rule) + " listed " + std::to_string(n));
  }
  for (const auto& [rule, n] : r.suppressed) {
    GGUFGUARD_FUZZ_CHECK(n > 0 && per_rule[rule] == policy.limits.max_findings_per_rule,
                         RuleCode(rule) + " suppressed " + std::to_string(n) + " but listed " +
                             std::to_string(per_rule[rule]));
  }
  if (listed_error) GGUFGUARD_FUZZ_CHECK(!r.valid(), "an error finding in a valid report:" + FindingsString(r.findings));
  // Never silently invalid: a rejected file says why. A parsed file is
  // rejected for an error (listed, or counted when over the cap); one whose
  // header did not parse has the finding that stopped the parser, whatever
  // severity the policy gives it, unless the policy disabled that rule.
  if (!r.valid()) {
    bool suppressed_error = false;
    for (const auto& [rule, n] : r.suppressed) suppressed_error |= policy.SeverityOf(rule) == Severity::kError;
    if (r.header_parsed) {
      GGUFGUARD_FUZZ_CHECK(listed_error || suppressed_error,
                           "invalid without an error finding:" + FindingsString(r.findings));
    } else if (!PolicyDisablesAnyRule(policy)) {
      GGUFGUARD_FUZZ_CHECK(!r.findings.empty() || !r.suppressed.empty(), "header not parsed, and no finding says why");
    }
  }

  // Views: every string and span of the header lies in the bytes it borrows.
  const GgufHeader& h = r.header;
  for (const KeyValue& kv : h.kvs) {
    GGUFGUARD_FUZZ_CHECK(StringInside(kv.key(), view_bytes), "key view outside the buffer");
    GGUFGUARD_FUZZ_CHECK(SpanInside(kv.value().bytes, view_bytes), "value view outside the buffer");
    GGUFGUARD_FUZZ_CHECK(kv.offset() < size && kv.type_offset() < size, "KV offset outside the file");
    if (kv.type() == ValueType::kArray) {
      GGUFGUARD_FUZZ_CHECK(SpanInside(kv.value().array.element_bytes, view_bytes), "array view outside the buffer");
    }
  }
  for (const TensorInfo& t : h.tensors) {
    GGUFGUARD_FUZZ_CHECK(StringInside(t.name, view_bytes), "tensor name view outside the buffer");
    GGUFGUARD_FUZZ_CHECK(t.n_dims <= kMaxDims, "n_dims " + std::to_string(t.n_dims));
    // dims() and relative_offset() read through the name's pointer: the
    // derived positions must be where the name is, inside the buffer.
    GGUFGUARD_FUZZ_CHECK(t.name_offset() == static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(t.name.data()) -
                                                                  view_bytes.data()),
                         "tensor name offset disagrees with its view");
    GGUFGUARD_FUZZ_CHECK(t.relative_offset_field() + 8 <= view_bytes.size(), "offset field outside the buffer");
  }
  if (r.header_parsed) {
    GGUFGUARD_FUZZ_CHECK(h.kvs.size() == h.kv_count && h.tensors.size() == h.tensor_count, "counts differ from views");
    GGUFGUARD_FUZZ_CHECK(h.infos_end <= size, "infos_end " + std::to_string(h.infos_end));
  }

  // The loader's contract holds when the policy leaves every error an error
  // (the built-in policies do; a policy file may disable GG6002 and get what
  // it asked for).
  if (!r.valid() || !PolicyKeepsEveryError(policy)) return;
  // The loader's contract: a valid report's tensors lie inside the file,
  // aligned, with sizes free of overflow, and no two share a byte.
  GGUFGUARD_FUZZ_CHECK(h.data_offset_known, "valid without a data offset");
  GGUFGUARD_FUZZ_CHECK(h.alignment != 0 && (h.alignment & (h.alignment - 1)) == 0,
                       "alignment " + std::to_string(h.alignment));
  struct Range {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    const std::string who = "tensor " + std::to_string(i) + ": ";
    GGUFGUARD_FUZZ_CHECK(t.size_known && t.absolute_known, who + "size or offset unknown in a valid report");
    GGUFGUARD_FUZZ_CHECK(t.absolute_offset % h.alignment == 0,
                         who + "offset " + std::to_string(t.absolute_offset) + " not aligned to " +
                             std::to_string(h.alignment));
    GGUFGUARD_FUZZ_CHECK(t.absolute_offset >= h.data_offset, who + "before the data section");
    uint64_t end;
    GGUFGUARD_FUZZ_CHECK(!__builtin_add_overflow(t.absolute_offset, t.byte_size, &end), who + "end overflows");
    GGUFGUARD_FUZZ_CHECK(end <= size, who + "ends at " + std::to_string(end) + " past " + std::to_string(size));
    if (t.byte_size > 0) ranges.push_back({t.absolute_offset, end, i});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < ranges.size(); ++k) {
    GGUFGUARD_FUZZ_CHECK(ranges[k].begin >= ranges[k - 1].end,
                         "tensors " + std::to_string(ranges[k - 1].index) + " and " + std::to_string(ranges[k].index) +
                             " overlap in a valid report");
  }
}

// Same findings (rule, severity, offset, message), same verdict.
inline void CheckSameReport(const Report& a, const Report& b, const std::string& what) {
  GGUFGUARD_FUZZ_CHECK(a.valid() == b.valid() && a.header_parsed == b.header_parsed, what + ": verdicts differ");
  bool same = a.findings.size() == b.findings.size();
  for (size_t i = 0; same && i < a.findings.size(); ++i) {
    const Finding& x = a.findings[i];
    const Finding& y = b.findings[i];
    same = x.rule == y.rule && x.severity == y.severity && x.offset == y.offset && x.message == y.message;
  }
  GGUFGUARD_FUZZ_CHECK(same, what + ": findings differ\n  first:" + FindingsString(a.findings) + "\n  second:" +
                                 FindingsString(b.findings));
  GGUFGUARD_FUZZ_CHECK(a.suppressed == b.suppressed, what + ": suppressed counts differ");
}

}  // namespace ggufguard::fuzz

#endif  // GGUFGUARD_FUZZ_FUZZ_COMMON_H_
