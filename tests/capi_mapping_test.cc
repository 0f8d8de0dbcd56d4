// A mapping proves it holds the validated content (capi/identity.cc), or
// says it cannot (issue 38: identity was device and inode only, so NaNs
// written into the validated file after ggufguard_validate_path_deep were
// handed out by ggufguard_map_path).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "ggufguard/ggufguard.h"
#include "gtest/gtest.h"
#include "tests/support/zip_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

struct ReportHandle {
  ggufguard_report* r = nullptr;
  ~ReportHandle() { ggufguard_report_free(r); }
};
struct MappingHandle {
  ggufguard_mapping* m = nullptr;
  ~MappingHandle() { ggufguard_mapping_free(m); }
};

// Writes `bytes` at `offset` of the file in place: same inode, same size.
void Overwrite(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

std::vector<uint8_t> NanBytes() {
  const float nan = std::nanf("");
  std::vector<uint8_t> out(4);
  std::memcpy(out.data(), &nan, 4);
  return out;
}

TEST(CApiMappingTest, AFileWrittenAfterDeepValidationIsNotMapped) {
  const testing::BuiltFile f = testing::TinyModelWithCleanData();
  const std::string path = testing::TempPath("map_rewritten.gguf");
  // Again and again, the write coming at once after the validation: a
  // write in the same timestamp tick as the file's last change, which the
  // timestamps may not show, must be refused too (such a file's digest is
  // compared).
  for (int round = 0; round < 10; ++round) {
    testing::WriteFileBytes(path, f.bytes);
    ReportHandle r;
    ASSERT_EQ(ggufguard_validate_path_deep(path.c_str(), nullptr, 1, &r.r), GGUFGUARD_OK);
    ASSERT_EQ(ggufguard_report_verdict(r.r), GGUFGUARD_VERDICT_VALID) << ggufguard_last_error();
    Overwrite(path, f.tensor_data_offsets.back(), NanBytes());
    MappingHandle m;
    EXPECT_EQ(ggufguard_map_path(r.r, path.c_str(), &m.m), GGUFGUARD_ERR_CHANGED) << "round " << round;
    EXPECT_EQ(m.m, nullptr);
    const std::string why = ggufguard_last_error();
    EXPECT_TRUE(why.find("written since") != std::string::npos || why.find("not the ones validated") != std::string::npos)
        << why;
  }
  // Unwritten, it maps; a mere change of its metadata (chmod: the ctime) is
  // refused as well: it proves nothing of the bytes either way.
  testing::WriteFileBytes(path, f.bytes);
  ReportHandle r;
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r.r), GGUFGUARD_OK);
  MappingHandle ok;
  EXPECT_EQ(ggufguard_map_path(r.r, path.c_str(), &ok.m), GGUFGUARD_OK) << ggufguard_last_error();
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  MappingHandle changed;
  EXPECT_EQ(ggufguard_map_path(r.r, path.c_str(), &changed.m), GGUFGUARD_ERR_CHANGED);
  ::unlink(path.c_str());
}

// The same through a descriptor the caller keeps.
TEST(CApiMappingTest, TheDescriptorRouteChecksTheSame) {
  const testing::BuiltFile f = testing::TinyModelWithCleanData();
  const std::string path = testing::TempPath("map_fd.gguf");
  testing::WriteFileBytes(path, f.bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ReportHandle r;
  ASSERT_EQ(ggufguard_validate_fd(fd, nullptr, &r.r), GGUFGUARD_OK);
  MappingHandle before;
  EXPECT_EQ(ggufguard_map_fd(r.r, fd, &before.m), GGUFGUARD_OK) << ggufguard_last_error();
  Overwrite(path, f.tensor_data_offsets.back(), NanBytes());
  MappingHandle after;
  EXPECT_EQ(ggufguard_map_fd(r.r, fd, &after.m), GGUFGUARD_ERR_CHANGED);
  ::close(fd);
  ::unlink(path.c_str());
}

// Without a file identity, the bytes themselves are compared: a buffer's
// report maps only a file that holds the buffer's bytes, a prefix's only
// one that starts with them; a pipe's report maps nothing.
TEST(CApiMappingTest, ABufferPrefixOrPipeReportIsComparedByItsBytes) {
  const testing::BuiltFile f = testing::TinyModelWithCleanData();
  const std::string same = testing::TempPath("map_same.gguf"), other = testing::TempPath("map_other.gguf");
  testing::WriteFileBytes(same, f.bytes);
  std::vector<uint8_t> nan = f.bytes;
  std::memcpy(nan.data() + f.tensor_data_offsets.back(), NanBytes().data(), 4);
  testing::WriteFileBytes(other, nan);  // the same size, other data
  ReportHandle buffer;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &buffer.r), GGUFGUARD_OK);
  MappingHandle m1, m2;
  EXPECT_EQ(ggufguard_map_path(buffer.r, same.c_str(), &m1.m), GGUFGUARD_OK) << ggufguard_last_error();
  EXPECT_EQ(ggufguard_map_path(buffer.r, other.c_str(), &m2.m), GGUFGUARD_ERR_CHANGED);
  EXPECT_NE(std::string(ggufguard_last_error()).find("not the"), std::string::npos) << ggufguard_last_error();

  // A prefix: its header is compared (its data was never judged: the
  // verdict is inconclusive).
  const size_t header = static_cast<size_t>(f.header_end);
  ReportHandle prefix;
  ASSERT_EQ(ggufguard_validate_prefix(f.bytes.data(), header, f.bytes.size(), nullptr, &prefix.r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_verdict(prefix.r), GGUFGUARD_VERDICT_INCONCLUSIVE);
  std::vector<uint8_t> renamed = f.bytes;
  renamed[f.tensor_info_offsets[0] + 8] ^= 0x20;  // a tensor name's first letter, in the header
  const std::string other_header = testing::TempPath("map_other_header.gguf");
  testing::WriteFileBytes(other_header, renamed);
  MappingHandle m3, m4;
  EXPECT_EQ(ggufguard_map_path(prefix.r, same.c_str(), &m3.m), GGUFGUARD_OK) << ggufguard_last_error();
  EXPECT_EQ(ggufguard_map_path(prefix.r, other_header.c_str(), &m4.m), GGUFGUARD_ERR_CHANGED);

  // A pipe: nothing holds the bytes that were judged.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], f.bytes.data(), f.bytes.size()), static_cast<ssize_t>(f.bytes.size()));
  ::close(fds[1]);
  ReportHandle piped;
  ASSERT_EQ(ggufguard_validate_fd(fds[0], nullptr, &piped.r), GGUFGUARD_OK);
  ::close(fds[0]);
  EXPECT_EQ(ggufguard_report_verdict(piped.r), GGUFGUARD_VERDICT_VALID);
  MappingHandle m5;
  EXPECT_EQ(ggufguard_map_path(piped.r, same.c_str(), &m5.m), GGUFGUARD_ERR_CHANGED);
  EXPECT_NE(std::string(ggufguard_last_error()).find("stream"), std::string::npos) << ggufguard_last_error();
  for (const std::string& p : {same, other, other_header}) ::unlink(p.c_str());
}

// A llamafile through the path and descriptor routes, changed within a
// timestamp tick of now: such a file is validated in the pass that hashes
// it, which validates its member as a stream (before: bad magic alone, then
// GG9166 saying the member was not judged). Every route gives the buffer
// route's verdict. The file is mapped on no route (the table is the
// member's).
TEST(CApiMappingTest, ALlamafileJustWrittenIsJudgedAsItsMember) {
  testing::ZipOptions options;
  options.stub = testing::ApeStub();
  const std::vector<uint8_t> file =
      testing::BuildZip({testing::ZipEntry{"tiny.gguf", testing::MakeTinyModel().Build().bytes, 0, false, 4096}}, options);
  const std::string path = testing::TempPath("just_written.llamafile");
  testing::WriteFileBytes(path, file);
  // A future mtime is within a tick of now however slow the machine is.
  const struct timespec future[2] = {{::time(nullptr) + 3600, 0}, {::time(nullptr) + 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), future, 0), 0);
  auto llamafile_message = [](const ggufguard_report* r) {
    for (size_t i = 0; i < ggufguard_finding_count(r); ++i) {
      ggufguard_finding f;
      if (ggufguard_finding_at(r, i, &f) == GGUFGUARD_OK && std::string(f.rule) == "GG9166") return std::string(f.message);
    }
    return std::string();
  };
  ReportHandle by_path;
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &by_path.r), GGUFGUARD_OK) << ggufguard_last_error();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ReportHandle by_fd;
  ASSERT_EQ(ggufguard_validate_fd(fd, nullptr, &by_fd.r), GGUFGUARD_OK) << ggufguard_last_error();
  ReportHandle buffer;
  ASSERT_EQ(ggufguard_validate_buffer(file.data(), file.size(), nullptr, &buffer.r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_verdict(buffer.r), GGUFGUARD_VERDICT_VALID);
  for (const ggufguard_report* r : {by_path.r, by_fd.r, buffer.r}) {
    const std::string why = llamafile_message(r);
    EXPECT_EQ(ggufguard_report_verdict(r), GGUFGUARD_VERDICT_VALID) << why;
    EXPECT_NE(why.find("judged as the file here"), std::string::npos) << why;
    EXPECT_EQ(why, llamafile_message(buffer.r));
  }
  MappingHandle m;
  EXPECT_NE(ggufguard_map_fd(by_fd.r, fd, &m.m), GGUFGUARD_OK);
  EXPECT_EQ(m.m, nullptr);
  ::close(fd);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace ggufguard
