// prefix_fuzzer: the streaming path must agree with the in-memory path, and
// a cut file must say it was cut.
//
// 1. ValidateBytes(file), ValidateSource(MemorySource(file)) with a tiny
//    first read and a small growth factor (so the header is parsed again and
//    again from growing prefixes, every kNeedMoreBytes path taken), and
//    ValidateStream(MemoryStream(file)) in small reads give the same findings
//    (rule, severity, offset, message) and the same verdict.
// 2. For a prefix of the file: if the file is valid, the prefix is valid too
//    (only end padding was cut) or reports why it is short: GG1001 truncated,
//    GG6002 tensor-out-of-bounds or GG6008 missing-tensor-data. If the prefix
//    is valid, no error of the whole file lies inside the prefix: validation
//    never depends on bytes it has not seen.
// 3. --header-only --file-size on a stream of a prefix of at least the
//    header: it reads only bytes it was given, and never finds what the
//    whole file lacks: a valid whole file stays valid.
//
// The read sizes and the cut come from a hash of the input, not from bytes
// taken off its front: the input stays a GGUF file, so the corpus that seeds
// the other fuzzers seeds this one too, and every mutation draws new sizes.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_common.h"
#include "ggufguard/io/source.h"

namespace {

// SplitMix64: one hash, several independent draws.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  static const Policy policy = DefaultPolicy();
  const absl::Span<const uint8_t> bytes(data, size);
  uint64_t rng = InputHash(data, size);

  const Report whole = ValidateBytes(bytes, policy);
  CheckReport(whole, bytes, bytes, policy);

  // 1. Streaming through a growing prefix.
  SourceOptions options;
  options.first_prefix = 1 + Next(rng) % 64;  // 1..64 bytes: cuts inside the magic, counts, first KV
  options.growth = 2 + Next(rng) % 3;         // x2, x3 or x4
  MemorySource source(bytes);
  absl::StatusOr<ValidatedFile> streamed = ValidateSource(source, policy, options);
  GGUFGUARD_FUZZ_CHECK(streamed.ok(), "ValidateSource failed on memory: " + std::string(streamed.status().message()));
  CheckReport(streamed->report(), bytes, streamed->prefix(), policy);
  CheckSameReport(whole, streamed->report(),
                  "ValidateBytes vs ValidateSource(first_prefix=" + std::to_string(options.first_prefix) +
                      ", growth=" + std::to_string(options.growth) + ")");

  // A llamafile (GG9166) is opened only where the end of the file can be
  // read: a stream of one is the executable it starts with (GG2001), and
  // its cut prefixes no archive at all.
  if (std::any_of(whole.findings.begin(), whole.findings.end(),
                  [](const Finding& f) { return f.rule == RuleId::kLlamafile; })) {
    return 0;
  }

  // 1b. Read forward once, as standard input is (ValidateStream): the
  // header buffered from growing prefixes, the data section through a small
  // chunk, its zero checks answered from the zero map.
  MemoryStream stream(bytes, 1 + Next(rng) % 4096);
  StreamOptions stream_options;
  stream_options.prefix = options;
  stream_options.chunk = 1 + Next(rng) % 8192;
  stream_options.hash = false;
  absl::StatusOr<ValidatedFile> piped = ValidateStream(stream, policy, stream_options);
  GGUFGUARD_FUZZ_CHECK(piped.ok(), "ValidateStream failed on memory: " + std::string(piped.status().message()));
  CheckReport(piped->report(), bytes, piped->prefix(), policy);
  CheckSameReport(whole, piped->report(),
                  "ValidateBytes vs ValidateStream(reads of at most " + std::to_string(stream_options.chunk) + ")");

  // 3. Header only, with the whole file's size, from a prefix that holds
  // the header (and a hash-chosen number of bytes after it).
  if (whole.header_parsed) {
    const uint64_t extra = Next(rng) % (size - whole.header.infos_end + 1);
    const absl::Span<const uint8_t> range = bytes.first(whole.header.infos_end + extra);
    MemoryStream ranged(range, 1 + Next(rng) % 4096);
    StreamOptions head_options = stream_options;
    head_options.header_only = true;
    head_options.file_size = size;
    absl::StatusOr<ValidatedFile> head = ValidateStream(ranged, policy, head_options);
    GGUFGUARD_FUZZ_CHECK(head.ok(), "header-only ValidateStream failed: " + std::string(head.status().message()));
    CheckReport(head->report(), bytes, head->prefix(), policy);
    GGUFGUARD_FUZZ_CHECK(head->report().bytes_read <= range.size(), "header-only read past its range");
    GGUFGUARD_FUZZ_CHECK(head->report().file_size == size, "header-only lost --file-size");
    GGUFGUARD_FUZZ_CHECK(!whole.valid() || head->report().valid(),
                         "header-only finds an error the whole file does not have:" +
                             FindingsString(head->report().findings));
  }

  // 2. A cut file. Where to cut: anywhere, inside the header, inside the data
  // section, or within the last 64 bytes (end padding, the last tensor).
  if (size == 0) return 0;
  uint64_t cut;
  const uint64_t header_end = whole.header_parsed ? whole.header.infos_end : size;
  const uint64_t data_start = whole.header.data_offset_known ? std::min<uint64_t>(whole.header.data_offset, size) : 0;
  switch (Next(rng) % 4) {
    case 0: cut = Next(rng) % size; break;
    case 1: cut = Next(rng) % (header_end + 1); break;
    case 2: cut = data_start + Next(rng) % (size - data_start + 1); break;
    default: cut = size - 1 - Next(rng) % std::min<uint64_t>(size, 64); break;
  }
  if (cut >= size) cut = size - 1;
  const absl::Span<const uint8_t> prefix = bytes.first(cut);
  const Report part = ValidateBytes(prefix, policy);
  CheckReport(part, prefix, prefix, policy);
  const std::string where = "prefix of " + std::to_string(cut) + " of " + std::to_string(size) + " bytes";
  if (whole.valid() && !part.valid()) {
    GGUFGUARD_FUZZ_CHECK(HasRule(part, RuleId::kTruncated) || HasRule(part, RuleId::kTensorOutOfBounds) ||
                             HasRule(part, RuleId::kMissingTensorData),
                         where + " of a valid file is invalid without saying it is cut:" +
                             FindingsString(part.findings));
  }
  if (part.valid() && !whole.valid()) {
    for (const Finding& f : whole.findings) {
      GGUFGUARD_FUZZ_CHECK(f.severity != Severity::kError || f.offset >= cut,
                           where + " is valid, yet the whole file has an error inside it: " + FindingString(f));
    }
  }
  return 0;
}
