// zip_fuzzer: llamafiles (GG9166), an executable whose appended ZIP holds
// the GGUF model.
//
// 1. The input as a whole file: the ZIP reader (format/zip.h) never fails on
//    memory, and a member whose data it locates lies inside the input;
//    ValidateBytes keeps every report promise (fuzz_common.h CheckReport),
//    which for a judged member are the member's.
// 2. A GGUF input wrapped as a llamafile's stored member (an APE-shaped stub,
//    the member's data at an offset taken from the input's hash): the
//    wrapper is judged exactly as the input, findings, suppressions and
//    verdict, plus one GG9166; from memory and through a source alike.
// 3. Both, on the route that judges a file in the pass that hashes it
//    (ValidateSourceHashed: --hash, scan --cache, the C API on a file just
//    written): the report the in-place route gives, and the digest of every
//    byte of the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/format/zip.h"
#include "ggufguard/io/source.h"
#include "ggufguard/read/llamafile.h"
#include "tests/support/zip_writer.h"

namespace ggufguard::fuzz {
namespace {

std::vector<Finding> WithoutLlamafile(const Report& r) {
  std::vector<Finding> out;
  for (const Finding& f : r.findings) {
    if (f.rule != RuleId::kLlamafile) out.push_back(f);
  }
  return out;
}

void CheckWrapped(const Report& inner, const Report& wrapped, uint64_t member_offset, const char* route) {
  const std::string where = std::string(route) + ": ";
  GGUFGUARD_FUZZ_CHECK(wrapped.member_offset && *wrapped.member_offset == member_offset,
                       where + "the member was not judged at its offset");
  GGUFGUARD_FUZZ_CHECK(HasRule(wrapped, RuleId::kLlamafile), where + "no GG9166");
  const std::vector<Finding> got = WithoutLlamafile(wrapped);
  GGUFGUARD_FUZZ_CHECK(got.size() == inner.findings.size(),
                       where + "findings differ:" + FindingsString(got) + " vs" + FindingsString(inner.findings));
  for (size_t i = 0; i < got.size(); ++i) {
    const Finding& a = got[i];
    const Finding& b = inner.findings[i];
    GGUFGUARD_FUZZ_CHECK(a.rule == b.rule && a.offset == b.offset && a.severity == b.severity && a.message == b.message,
                         where + "finding " + std::to_string(i) + " differs: " + FindingString(a) + " vs " +
                             FindingString(b));
  }
  GGUFGUARD_FUZZ_CHECK(wrapped.has_errors == inner.has_errors && wrapped.header_parsed == inner.header_parsed &&
                           wrapped.not_checked == inner.not_checked && wrapped.file_size == inner.file_size,
                       where + "verdicts differ");
}

// The hashing route's report of `bytes` against the in-place route's.
void CheckHashed(absl::Span<const uint8_t> bytes, const Report& in_place, const Policy& policy) {
  MemorySource source(bytes);
  absl::StatusOr<ValidatedFile> hashed = ValidateSourceHashed(source, policy);
  GGUFGUARD_FUZZ_CHECK(hashed.ok(), "ValidateSourceHashed failed on memory: " + std::string(hashed.status().message()));
  const Report& r = hashed->report();
  CheckSameReport(r, in_place, "hashed and in place");
  GGUFGUARD_FUZZ_CHECK(r.member_offset == in_place.member_offset && r.has_errors == in_place.has_errors &&
                           r.not_checked == in_place.not_checked && r.file_size == in_place.file_size,
                       "hashed: the member, errors, what was not checked or the size differ");
  GGUFGUARD_FUZZ_CHECK(r.sha256 == Sha256Hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())),
                       "hashed: the digest is not the whole file's");
}

}  // namespace
}  // namespace ggufguard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  static const Policy policy = DefaultPolicy();
  const absl::Span<const uint8_t> bytes(data, size);

  // 1. The input as a file that may end with a ZIP.
  MemorySource source(bytes);
  absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(source);
  GGUFGUARD_FUZZ_CHECK(dir.ok(), "ReadZipDirectory failed on memory: " + std::string(dir.status().message()));
  GGUFGUARD_FUZZ_CHECK(dir->problem.empty() || dir->members.empty(), "an unusable archive with members");
  GGUFGUARD_FUZZ_CHECK(dir->members.size() <= dir->gguf_members && dir->gguf_members <= dir->entries,
                       "more members than entries");
  for (const ZipMember& m : dir->members) {
    if (!m.data_known) continue;
    GGUFGUARD_FUZZ_CHECK(m.data_offset <= size && m.compressed_size <= size - m.data_offset,
                         "a member's data outside the file");
  }
  const Report whole = ValidateBytes(bytes, policy);
  CheckReport(whole, bytes, bytes, policy);
  {
    absl::StatusOr<ValidatedFile> in_place = ValidateSource(source, policy);
    GGUFGUARD_FUZZ_CHECK(in_place.ok(), "ValidateSource failed on memory: " + std::string(in_place.status().message()));
    CheckHashed(bytes, in_place->report(), policy);
  }

  // 2. A GGUF input carried by a llamafile.
  if (!StartsWithGgufMagic(bytes)) return 0;
  const uint64_t hash = InputHash(data, size);
  testing::ZipEntry entry{"model.gguf", std::vector<uint8_t>(bytes.begin(), bytes.end()), 0, false,
                          static_cast<uint32_t>(1u << (hash % 13))};  // data aligned to 1..4096
  testing::ZipOptions options;
  options.stub = testing::ApeStub();
  options.offsets_from_archive = (hash >> 8) % 4 == 0;
  options.zip64 = (hash >> 10) % 4 == 0;
  const std::vector<uint8_t> file = testing::BuildZip({entry}, options);
  const uint64_t member_offset = static_cast<uint64_t>(
      std::search(file.begin() + static_cast<ptrdiff_t>(options.stub.size()), file.end(), bytes.begin(), bytes.end()) -
      file.begin());
  const Report inner = ValidateBytes(bytes, policy);
  const Report wrapped = ValidateBytes(file, policy);
  CheckReport(wrapped, file, file, policy);
  CheckWrapped(inner, wrapped, member_offset, "ValidateBytes");
  MemorySource wrapped_source(file);
  absl::StatusOr<ValidatedFile> read = ValidateSource(wrapped_source, policy);
  GGUFGUARD_FUZZ_CHECK(read.ok(), "ValidateSource failed on memory: " + std::string(read.status().message()));
  CheckWrapped(inner, read->report(), member_offset, "ValidateSource");
  CheckHashed(file, read->report(), policy);
  return 0;
}
