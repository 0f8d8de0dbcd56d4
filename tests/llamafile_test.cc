// GG9166: a llamafile (an executable whose appended ZIP holds the GGUF model,
// stored) is judged as the GGUF it carries, on every route that can read the
// end of the file; what cannot be judged is said.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/format/zip.h"
#include "ggufguard/read/llamafile.h"
#include "ggufguard/report/render.h"
#include "ggufguard/validate.h"
#include "tests/support/zip_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::ApeStub;
using ::ggufguard::testing::BuildZip;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::ZipEntry;
using ::ggufguard::testing::ZipOptions;

std::vector<uint8_t> TinyGguf() { return MakeTinyModel().Build().bytes; }

std::vector<uint8_t> Llamafile(std::vector<ZipEntry> entries, ZipOptions options = {}) {
  if (options.stub.empty()) options.stub = ApeStub();
  return BuildZip(entries, options);
}

ZipEntry Member(std::vector<uint8_t> data, std::string name = "tiny.gguf") {
  return ZipEntry{std::move(name), std::move(data), 0, false, 4096};
}

std::string MessageOf(const Report& r, RuleId id) {
  for (const Finding& f : r.findings) {
    if (f.rule == id) return f.message;
  }
  return "";
}

// The member's report, without GG9166, must be the GGUF file's own.
void ExpectJudgedAsTheMember(const Report& wrapped, const Report& plain) {
  std::vector<testing::RuleAt> got = testing::RulesAtExcept(wrapped, RuleId::kLlamafile);
  EXPECT_EQ(got, testing::RulesAt(plain));
  EXPECT_EQ(wrapped.has_errors, plain.has_errors);
  EXPECT_EQ(wrapped.file_size, plain.file_size);
  EXPECT_EQ(wrapped.header.tensors.size(), plain.header.tensors.size());
}

TEST(LlamafileTest, AStoredMemberIsJudgedAsTheFile) {
  const std::vector<uint8_t> gguf = TinyGguf();
  const std::vector<uint8_t> file = Llamafile({Member(gguf)});
  const Report r = ValidateBytes(file, DefaultPolicy());
  ASSERT_TRUE(r.member_offset.has_value());
  EXPECT_EQ(*r.member_offset % 4096, 0u);  // the data lies where the writer aligned it
  EXPECT_TRUE(std::equal(gguf.begin(), gguf.end(), file.begin() + static_cast<ptrdiff_t>(*r.member_offset)));
  EXPECT_TRUE(HasFinding(r, RuleId::kLlamafile, 0)) << testing::Describe(r);
  EXPECT_NE(MessageOf(r, RuleId::kLlamafile).find("an Actually Portable Executable"), std::string::npos)
      << MessageOf(r, RuleId::kLlamafile);
  EXPECT_NE(MessageOf(r, RuleId::kLlamafile).find("member 'tiny.gguf'"), std::string::npos);
  EXPECT_TRUE(r.valid());  // a warning: the model is fine
  EXPECT_EQ(r.verdict(), Report::Verdict::kValid);
  EXPECT_FALSE(ValidateBytes(file, StrictPolicy()).valid());  // strict: an executable is an error
  ExpectJudgedAsTheMember(r, ValidateBytes(gguf, DefaultPolicy()));
  // Through a source (a path, a remote file): the same report.
  MemorySource source(file);
  absl::StatusOr<ValidatedFile> read = ValidateSource(source, DefaultPolicy());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(testing::RulesAt(read->report()), testing::RulesAt(r));
  EXPECT_EQ(read->report().member_offset, r.member_offset);
  // JSON says where the member is.
  const FileOutcome o{"x.llamafile", &r, ""};
  EXPECT_NE(RenderJson({o}, "default").find(absl::StrCat("\"member_offset\": ", *r.member_offset)), std::string::npos);
}

TEST(LlamafileTest, TheMembersFindingsAreTheMembers) {
  // A model with an error inside a llamafile: the same error, at the same
  // (member-relative) offset, and the file is invalid.
  testing::TinyModel m = MakeTinyModel();
  m.Set("llama.block_count", testing::GgufValue::U32(513));
  const std::vector<uint8_t> gguf = m.Build().bytes;
  const Report plain = ValidateBytes(gguf, DefaultPolicy());
  ASSERT_FALSE(plain.valid());
  const Report r = ValidateBytes(Llamafile({Member(gguf)}), DefaultPolicy());
  EXPECT_FALSE(r.valid());
  ExpectJudgedAsTheMember(r, plain);
}

TEST(LlamafileTest, ArchiveShapesTheReaderTakes) {
  const std::vector<uint8_t> gguf = TinyGguf();
  const Report plain = ValidateBytes(gguf, DefaultPolicy());
  ZipOptions cat;  // cat stub archive.zip > file: offsets count from the archive
  cat.offsets_from_archive = true;
  ZipOptions zip64;
  zip64.zip64 = true;
  ZipOptions both = zip64;
  both.offsets_from_archive = true;
  both.comment = "a comment that holds PK\x05\x06 inside it";
  for (const ZipOptions& o : {cat, zip64, both}) {
    const Report r = ValidateBytes(Llamafile({ZipEntry{"README", {'h', 'i'}}, Member(gguf)}, o), DefaultPolicy());
    EXPECT_TRUE(r.member_offset.has_value()) << testing::Describe(r);
    ExpectJudgedAsTheMember(r, plain);
  }
  // Names end in .gguf in any case; a plain ZIP (no executable) too.
  ZipOptions plain_zip;
  plain_zip.stub = {};
  const std::vector<uint8_t> zip = BuildZip({Member(gguf, "MODEL.GGUF")}, plain_zip);
  const Report r = ValidateBytes(zip, DefaultPolicy());
  EXPECT_NE(MessageOf(r, RuleId::kLlamafile).find("a ZIP archive"), std::string::npos) << MessageOf(r, RuleId::kLlamafile);
  ExpectJudgedAsTheMember(r, plain);
}

TEST(LlamafileTest, WhatIsNotJudgedIsSaid) {
  const std::vector<uint8_t> gguf = TinyGguf();
  auto refused = [](const std::vector<uint8_t>& file, const std::string& why) {
    const Report r = ValidateBytes(file, DefaultPolicy());
    EXPECT_FALSE(r.member_offset.has_value());
    EXPECT_TRUE(HasRule(r, RuleId::kBadMagic)) << why;  // the file itself is no GGUF
    EXPECT_NE(MessageOf(r, RuleId::kLlamafile).find(why), std::string::npos) << MessageOf(r, RuleId::kLlamafile);
    EXPECT_FALSE(r.valid());
  };
  ZipEntry deflated = Member(gguf);
  deflated.method = 8;
  refused(Llamafile({deflated}), "compressed (ZIP method 8)");
  ZipEntry encrypted = Member(gguf);
  encrypted.encrypted = true;
  refused(Llamafile({encrypted}), "is encrypted");
  refused(Llamafile({ZipEntry{"README", {'h', 'i'}}}), "holds no .gguf member");
  refused(Llamafile({Member({'n', 'o', 't', ' ', 'g', 'g', 'u', 'f'})}), "does not start with the GGUF magic");
  ZipOptions lying;
  lying.entries_delta = 1;
  refused(Llamafile({Member(gguf)}, lying), "its end record says 2");
  // A member that is itself a llamafile is not opened again.
  refused(Llamafile({Member(Llamafile({Member(gguf)}))}), "does not start with the GGUF magic");
  // Two models: the first is judged, the second is listed as not checked.
  const Report two = ValidateBytes(Llamafile({Member(gguf, "a.gguf"), Member(gguf, "b.gguf")}), DefaultPolicy());
  EXPECT_TRUE(two.member_offset.has_value());
  ASSERT_EQ(two.not_checked.size(), 1u);
  EXPECT_NE(two.not_checked[0].find("1 more .gguf member"), std::string::npos) << two.not_checked[0];
  EXPECT_EQ(two.verdict(), Report::Verdict::kInconclusive);
}

TEST(LlamafileTest, AnyFileThatIsNoArchiveIsLeftAlone) {
  // Bad magic and no ZIP: GG2001 alone, as before.
  std::vector<uint8_t> junk(1000, 'x');
  const Report r = ValidateBytes(junk, DefaultPolicy());
  EXPECT_TRUE(HasRule(r, RuleId::kBadMagic));
  EXPECT_TRUE(LacksRule(r, RuleId::kLlamafile));
  // A GGUF file is never probed, whatever its end holds.
  const std::vector<uint8_t> gguf = TinyGguf();
  EXPECT_TRUE(LacksRule(ValidateBytes(gguf, DefaultPolicy()), RuleId::kLlamafile));
  // An end record whose comment length does not reach the end is no record.
  std::vector<uint8_t> fake = {'P', 'K', 5, 6};
  fake.resize(22, 0);
  fake[20] = 9;  // a comment of 9 bytes that is not there
  MemorySource source(fake);
  absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(source);
  ASSERT_TRUE(dir.ok());
  EXPECT_FALSE(dir->found);
}

// The routes that judge a file in the pass that hashes it (--hash, scan
// --cache, the C API on a file changed within a timestamp tick) judge a
// llamafile's member as the in-place route does, and the digest is the
// whole file's (before: the file was "bad magic", its model never read).
TEST(LlamafileTest, TheHashingRouteJudgesTheMemberAsInPlace) {
  const std::vector<uint8_t> gguf = TinyGguf();
  testing::TinyModel broken = MakeTinyModel();
  broken.Set("llama.block_count", testing::GgufValue::U32(513));
  ZipOptions cat;
  cat.offsets_from_archive = true;
  for (const std::vector<uint8_t>& file :
       {Llamafile({Member(gguf)}), Llamafile({Member(broken.Build().bytes)}),
        Llamafile({ZipEntry{"README", {'h', 'i'}}, Member(gguf)}, cat),
        Llamafile({Member(gguf, "a.gguf"), Member(gguf, "b.gguf")})}) {
    MemorySource in_place_source(file);
    absl::StatusOr<ValidatedFile> in_place = ValidateSource(in_place_source, DefaultPolicy());
    MemorySource source(file);
    absl::StatusOr<ValidatedFile> hashed = ValidateSourceHashed(source, DefaultPolicy());
    ASSERT_TRUE(in_place.ok() && hashed.ok()) << hashed.status();
    const Report& r = hashed->report();
    ASSERT_TRUE(r.member_offset.has_value()) << testing::Describe(r);
    EXPECT_EQ(r.member_offset, in_place->report().member_offset);
    EXPECT_EQ(testing::RulesAt(r), testing::RulesAt(in_place->report()));
    EXPECT_EQ(MessageOf(r, RuleId::kLlamafile), MessageOf(in_place->report(), RuleId::kLlamafile));
    EXPECT_EQ(r.verdict(), in_place->report().verdict());
    EXPECT_EQ(r.not_checked, in_place->report().not_checked);
    EXPECT_EQ(r.sha256, Sha256Hex(std::string_view(reinterpret_cast<const char*>(file.data()), file.size())));
  }
  // A member that is not judged anywhere keeps its own reason.
  ZipEntry deflated = Member(gguf);
  deflated.method = 8;
  const std::vector<uint8_t> deflated_file = Llamafile({deflated});
  MemorySource deflated_source(deflated_file);
  absl::StatusOr<ValidatedFile> d = ValidateSourceHashed(deflated_source, DefaultPolicy());
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(HasFinding(d->report(), RuleId::kBadMagic, 0));
  EXPECT_NE(MessageOf(d->report(), RuleId::kLlamafile).find("compressed (ZIP method 8)"), std::string::npos)
      << MessageOf(d->report(), RuleId::kLlamafile);
  EXPECT_EQ(d->report().sha256,
            Sha256Hex(std::string_view(reinterpret_cast<const char*>(deflated_file.data()), deflated_file.size())));
  // A GGUF file and a file that is no archive are as before.
  MemorySource plain(gguf);
  absl::StatusOr<ValidatedFile> p = ValidateSourceHashed(plain, DefaultPolicy());
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(LacksRule(p->report(), RuleId::kLlamafile));
  EXPECT_EQ(testing::RulesAt(p->report()), testing::RulesAt(ValidateBytes(gguf, DefaultPolicy())));
  const std::vector<uint8_t> junk(1000, 'x');
  MemorySource junk_source(junk);
  absl::StatusOr<ValidatedFile> j = ValidateSourceHashed(junk_source, DefaultPolicy());
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(LacksRule(j->report(), RuleId::kLlamafile));
  EXPECT_TRUE(HasRule(j->report(), RuleId::kBadMagic));
  EXPECT_FALSE(j->report().sha256.empty());
  // Fewer bytes than the magic: judged (truncated), not an I/O error.
  const std::vector<uint8_t> two = {'G', 'G'};
  MemorySource two_source(two);
  ASSERT_TRUE(ValidateSourceHashed(two_source, DefaultPolicy()).ok());
}

// Serves `before` for its first `switch_after` reads and `after` from then
// on: a file rewritten between the llamafile probe and the hashing pass.
class SwitchingSource final : public ByteSource {
 public:
  SwitchingSource(std::vector<uint8_t> before, std::vector<uint8_t> after, size_t switch_after)
      : before_(std::move(before)), after_(std::move(after)), switch_after_(switch_after) {}
  uint64_t size() const override { return before_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    const std::vector<uint8_t>& now = reads_++ < switch_after_ ? before_ : after_;
    if (offset > now.size() || out.size() > now.size() - offset) return absl::OutOfRangeError("past the end");
    std::copy_n(now.begin() + static_cast<ptrdiff_t>(offset), out.size(), out.begin());
    return absl::OkStatus();
  }

 private:
  std::vector<uint8_t> before_, after_;
  size_t switch_after_;
  size_t reads_ = 0;
};

// The probe's answer stands only for the bytes the pass hashes: a file whose
// ZIP, member place or member magic changes after the probe read them gets
// no verdict (either state's verdict under the other's digest would let a
// scan cache pass the other), and bytes the probe never read are judged as
// the pass reads them.
TEST(LlamafileTest, TheHashingRouteHoldsTheProbeToTheHashedBytes) {
  std::vector<uint8_t> stub = ApeStub();
  stub.resize(256 << 10, 0);  // past the ZIP tail the probe reads (64 KiB + 22)
  ZipOptions options;
  options.stub = stub;
  const std::vector<uint8_t> file = BuildZip({Member(TinyGguf())}, options);
  // How many reads the probe makes: the route's first read, then the probe's.
  MemorySource counted(file);
  RecordingSource recording(counted);
  uint8_t head[4];
  ASSERT_TRUE(recording.ReadAt(0, absl::MakeSpan(head)).ok());
  ASSERT_TRUE(ProbeLlamafile(recording).ok());
  const size_t probe_reads = recording.reads().size();
  const uint64_t member = ValidateBytes(file, DefaultPolicy()).member_offset.value_or(0);
  ASSERT_GT(member, stub.size());
  auto changed = [&](uint64_t at) {
    std::vector<uint8_t> after = file;
    after[at] ^= 0x20;
    return after;
  };
  // The member's magic and the end record's signature: both read by the probe.
  for (uint64_t at : {member, uint64_t{file.size() - 22}}) {
    SwitchingSource source(file, changed(at), probe_reads);
    absl::StatusOr<ValidatedFile> r = ValidateSourceHashed(source, DefaultPolicy());
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
    EXPECT_NE(r.status().message().find(absl::StrCat("byte ", at, " ")), std::string::npos) << r.status();
  }
  // A stub byte the probe did not read: judged and hashed as it now is.
  const std::vector<uint8_t> after = changed(100 << 10);
  SwitchingSource source(file, after, probe_reads);
  absl::StatusOr<ValidatedFile> r = ValidateSourceHashed(source, DefaultPolicy());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->report().member_offset, std::optional<uint64_t>(member));
  EXPECT_EQ(r->report().verdict(), Report::Verdict::kValid);
  EXPECT_EQ(r->report().sha256, Sha256Hex(std::string_view(reinterpret_cast<const char*>(after.data()), after.size())));
  SwitchingSource unchanged(file, file, probe_reads);
  ASSERT_TRUE(ValidateSourceHashed(unchanged, DefaultPolicy()).ok());
}

// Serves `bytes`, but once the first `free_reads` reads are done, a read
// that reaches past `cut` spends the budget (a remote transfer's).
class BudgetedSource final : public ByteSource {
 public:
  BudgetedSource(std::vector<uint8_t> bytes, size_t free_reads, uint64_t cut)
      : bytes_(std::move(bytes)), free_reads_(free_reads), cut_(cut) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    if (reads_++ >= free_reads_ && offset + out.size() > cut_) return BudgetSpentError("the budget is spent");
    if (offset > bytes_.size() || out.size() > bytes_.size() - offset) return absl::OutOfRangeError("past the end");
    std::copy_n(bytes_.begin() + static_cast<ptrdiff_t>(offset), out.size(), out.begin());
    return absl::OkStatus();
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t free_reads_;
  uint64_t cut_;
  size_t reads_ = 0;
};

// A budget that ends the hashing pass inside the member leaves what the
// in-place route leaves: an inconclusive report with no digest, not an
// I/O error from reading on past the budget for the digest.
TEST(LlamafileTest, ABudgetThatEndsTheHashingPassLeavesAnInconclusiveReport) {
  const std::vector<uint8_t> file = Llamafile({Member(TinyGguf())});
  MemorySource counted(file);
  RecordingSource recording(counted);
  uint8_t head[4];
  ASSERT_TRUE(recording.ReadAt(0, absl::MakeSpan(head)).ok());
  ASSERT_TRUE(ProbeLlamafile(recording).ok());
  const uint64_t member = ValidateBytes(file, DefaultPolicy()).member_offset.value_or(0);
  ASSERT_GT(member, 0u);
  BudgetedSource source(file, recording.reads().size(), member + 8);
  absl::StatusOr<ValidatedFile> r = ValidateSourceHashed(source, DefaultPolicy());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->report().coverage, Report::Coverage::kStoppedAtBudget);
  EXPECT_NE(r->report().verdict(), Report::Verdict::kValid);
  EXPECT_TRUE(r->report().sha256.empty());
}

TEST(LlamafileTest, ASubrangeReadsOnlyItsBytes) {
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8};
  MemorySource inner(bytes);
  SubrangeSource sub(inner, 2, 4);
  EXPECT_EQ(sub.size(), 4u);
  uint8_t out[4] = {};
  ASSERT_TRUE(sub.ReadAt(0, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[3], 6);
  EXPECT_FALSE(sub.ReadAt(1, absl::MakeSpan(out)).ok());  // one byte past its end
  EXPECT_FALSE(sub.ReadAt(UINT64_MAX, absl::MakeSpan(out)).ok());
  EXPECT_EQ(sub.Memory().size(), 4u);
  EXPECT_EQ(sub.Memory()[0], 3);
}

}  // namespace
}  // namespace ggufguard
