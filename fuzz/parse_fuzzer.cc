// parse_fuzzer: bytes -> ParseHeader, the layer that touches every byte of
// the header first.
//
// Checks, beyond "no memory error, no UB, no huge allocation":
//   - a complete parse never asks for more bytes, and fails only with an
//     error finding;
//   - a parsed header's counts match its views, every view points into the
//     input, every offset lies inside it, n_dims <= 4;
//   - parsing the same bytes as a prefix (complete=false) agrees: the same
//     result, or a request for more bytes than the input has (and then the
//     complete parse reports truncation);
//   - the vectorised text scan (ScanTextBulk) gives the scalar UTF-8
//     verdict and zero-byte count on the input and on every string value,
//     since the rules trust it for whole string arrays.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_common.h"
#include "ggufguard/base/text.h"
#include "ggufguard/parse/parser.h"

namespace ggufguard::fuzz {
namespace {

void CheckUtf8Agrees(const uint8_t* data, size_t size) {
  const bool scalar = IsValidUtf8(std::string_view(reinterpret_cast<const char*>(data), size));
  uint64_t zeros = 0;
  for (size_t i = 0; i < size; ++i) zeros += data[i] == 0;
  const TextScan scan = ScanTextBulk(data, size);
  GGUFGUARD_FUZZ_CHECK(scan.valid_utf8 == scalar, "vectorised and scalar UTF-8 checks disagree");
  GGUFGUARD_FUZZ_CHECK(scan.zero_bytes == zeros, "vectorised zero count " + std::to_string(scan.zero_bytes) +
                                                     ", scalar " + std::to_string(zeros));
}

void CheckParsed(const ParseResult& r, absl::Span<const uint8_t> bytes) {
  const GgufHeader& h = r.header;
  GGUFGUARD_FUZZ_CHECK(h.kvs.size() <= h.kv_count && h.tensors.size() <= h.tensor_count, "more views than declared");
  for (const KeyValue& kv : h.kvs) {
    if (kv.type() == ValueType::kString) CheckUtf8Agrees(kv.value().bytes.data(), kv.value().bytes.size());
    GGUFGUARD_FUZZ_CHECK(StringInside(kv.key(), bytes) && SpanInside(kv.value().bytes, bytes), "KV view outside input");
    GGUFGUARD_FUZZ_CHECK(kv.key_offset() + kv.key().size() <= bytes.size(), "key past the end");
    GGUFGUARD_FUZZ_CHECK(kv.value().offset + kv.value().bytes.size() <= bytes.size(), "value past the end");
    if (kv.type() == ValueType::kArray) {
      const ArrayView a = kv.value().array;
      GGUFGUARD_FUZZ_CHECK(SpanInside(a.element_bytes, bytes), "array view outside input");
      const uint32_t scalar = ScalarSize(a.element_type);
      if (scalar != 0) {
        GGUFGUARD_FUZZ_CHECK(a.element_bytes.size() == a.count * scalar,
                             "array of " + std::to_string(a.count) + " x " + std::to_string(scalar) + " has " +
                                 std::to_string(a.element_bytes.size()) + " bytes");
      } else {
        GGUFGUARD_FUZZ_CHECK(a.element_bytes.size() >= a.count * MinEncodedSize(a.element_type, a.length_size),
                             "array shorter than its count allows");
      }
    } else if (ScalarSize(kv.type()) != 0) {
      GGUFGUARD_FUZZ_CHECK(kv.value().bytes.size() == ScalarSize(kv.type()), "scalar of the wrong width");
    }
  }
  for (const TensorInfo& t : h.tensors) {
    GGUFGUARD_FUZZ_CHECK(StringInside(t.name, bytes), "tensor name outside input");
    GGUFGUARD_FUZZ_CHECK(t.n_dims <= kMaxDims, "n_dims " + std::to_string(t.n_dims));
    GGUFGUARD_FUZZ_CHECK(t.name_offset() == static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(t.name.data()) -
                                                                  bytes.data()),
                         "tensor name offset disagrees with its view");
    GGUFGUARD_FUZZ_CHECK(t.relative_offset_field() + 8 <= bytes.size(), "offset field past the end");
  }
  if (r.status == ParseStatus::kOk) {
    GGUFGUARD_FUZZ_CHECK(h.kvs.size() == h.kv_count && h.tensors.size() == h.tensor_count, "parsed, counts differ");
    GGUFGUARD_FUZZ_CHECK(h.infos_end <= bytes.size(), "infos_end past the end");
    GGUFGUARD_FUZZ_CHECK(h.version >= 1 && h.version <= 3, "version " + std::to_string(h.version));
  }
}

}  // namespace
}  // namespace ggufguard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  static const Policy policy = DefaultPolicy();
  const absl::Span<const uint8_t> bytes(data, size);
  CheckUtf8Agrees(data, size);

  FindingSink sink(policy);
  ParseResult whole = ParseHeader(bytes, ParseOptions{policy.limits, /*complete=*/true}, sink);
  GGUFGUARD_FUZZ_CHECK(whole.status != ParseStatus::kNeedMoreBytes, "a complete parse asked for more bytes");
  GGUFGUARD_FUZZ_CHECK((whole.status == ParseStatus::kOk) || sink.has_errors(), "failed without an error finding");
  CheckParsed(whole, bytes);
  std::vector<Finding> whole_findings = sink.TakeSorted();

  // The same bytes, read as a prefix of a longer file.
  FindingSink prefix_sink(policy);
  ParseResult prefix = ParseHeader(bytes, ParseOptions{policy.limits, /*complete=*/false}, prefix_sink);
  CheckParsed(prefix, bytes);
  if (prefix.status == ParseStatus::kNeedMoreBytes) {
    GGUFGUARD_FUZZ_CHECK(prefix.bytes_needed > size, "asked for " + std::to_string(prefix.bytes_needed) +
                                                         " bytes but has " + std::to_string(size));
    GGUFGUARD_FUZZ_CHECK(whole.status == ParseStatus::kFailed, "needs more bytes, yet the complete parse succeeded");
    bool truncated = false;
    for (const Finding& f : whole_findings) truncated |= f.rule == RuleId::kTruncated;
    GGUFGUARD_FUZZ_CHECK(truncated, "needs more bytes, yet no truncation finding:" + FindingsString(whole_findings));
  } else {
    GGUFGUARD_FUZZ_CHECK(prefix.status == whole.status, "prefix and complete parses disagree");
    std::vector<Finding> prefix_findings = prefix_sink.TakeSorted();
    GGUFGUARD_FUZZ_CHECK(prefix_findings.size() == whole_findings.size(),
                         "findings differ:" + FindingsString(prefix_findings) + "\nvs" + FindingsString(whole_findings));
    GGUFGUARD_FUZZ_CHECK(prefix.header.kvs.size() == whole.header.kvs.size() &&
                             prefix.header.tensors.size() == whole.header.tensors.size() &&
                             prefix.header.infos_end == whole.header.infos_end,
                         "headers differ");
  }
  return 0;
}
