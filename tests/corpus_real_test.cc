// Files written by other people's tools (../shared/corpus-real): every one
// gets the verdict its MANIFEST.md gives, through both the in-memory and the
// file-source paths, and the big-endian conversions say exactly what their
// little-endian originals say.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ggufguard/findings/policy.h"
#include "ggufguard/io/source.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using testing::Describe;
using testing::FindingsAre;
using testing::HasFinding;
using testing::RulesAt;

constexpr const char* kDirs[] = {"valid", "bigendian", "legacy", "malformed"};

fs::path CorpusDir() { return testing::RealCorpusDir(); }

#define SKIP_WITHOUT_CORPUS() GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS()

struct CorpusFile {
  std::string dir;   // valid, bigendian, legacy, malformed
  std::string name;  // file name
  fs::path path;
};

std::vector<CorpusFile> ListCorpus() {
  std::vector<CorpusFile> files;
  for (const char* dir : kDirs) {
    for (const fs::directory_entry& e : fs::directory_iterator(CorpusDir() / dir)) {
      if (e.is_regular_file()) files.push_back(CorpusFile{dir, e.path().filename().string(), e.path()});
    }
  }
  std::sort(files.begin(), files.end(), [](const CorpusFile& a, const CorpusFile& b) { return a.path < b.path; });
  return files;
}

// The two validation paths a caller can take; they must agree.
struct BothPaths {
  std::vector<uint8_t> bytes;
  Report in_memory;
  ValidatedFile from_file;
};

BothPaths ValidateBoth(const fs::path& path, const Policy& policy) {
  BothPaths out;
  std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(path);
  EXPECT_TRUE(bytes.has_value()) << path;
  if (bytes) out.bytes = std::move(*bytes);
  out.in_memory = ValidateBytes(out.bytes, policy);
  absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path.string());
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return out;
  absl::StatusOr<ValidatedFile> v = ValidateSource(**source, policy);
  EXPECT_TRUE(v.ok()) << v.status();
  if (v.ok()) out.from_file = std::move(*v);
  return out;
}

TEST(CorpusRealTest, EveryFileGetsTheManifestVerdict) {
  SKIP_WITHOUT_CORPUS();
  const std::vector<CorpusFile> files = ListCorpus();
  ASSERT_GE(files.size(), 37u);
  std::map<std::string, int> per_dir;
  for (const CorpusFile& f : files) {
    SCOPED_TRACE(f.dir + "/" + f.name);
    ++per_dir[f.dir];
    BothPaths v = ValidateBoth(f.path, DefaultPolicy());
    const Report& r = v.in_memory;
    const Report& rs = v.from_file.report();
    EXPECT_EQ(RulesAt(rs), RulesAt(r)) << "file source:\n" << Describe(rs) << "in memory:\n" << Describe(r);
    EXPECT_EQ(rs.valid(), r.valid());
    EXPECT_EQ(rs.header_parsed, r.header_parsed);
    EXPECT_EQ(rs.file_size, v.bytes.size());

    if (f.dir == "valid") {
      EXPECT_TRUE(testing::IsValid(r));
      EXPECT_TRUE(testing::LacksRule(r, RuleId::kBigEndian));
      EXPECT_EQ(r.header.byte_order, ByteOrder::kLittle);
    } else if (f.dir == "bigendian") {
      EXPECT_TRUE(testing::IsValid(r));
      EXPECT_TRUE(HasFinding(r, RuleId::kBigEndian, 4));
      EXPECT_EQ(r.header.byte_order, ByteOrder::kBig);
    } else if (f.dir == "legacy" && f.name.find("FUGG") != std::string::npos) {
      // 'FUGG' written little-endian: a pre-release magic, named as such.
      EXPECT_TRUE(FindingsAre(r, {{RuleId::kLegacyMagic, 0}}));
      EXPECT_FALSE(r.valid());
    } else if (f.dir == "legacy") {
      // v1: rejected by default, but only after a complete parse.
      EXPECT_TRUE(HasFinding(r, RuleId::kVersion1, 4));
      EXPECT_FALSE(r.valid());
      ASSERT_TRUE(r.header_parsed) << Describe(r);
      EXPECT_EQ(r.header.version, 1u);
      EXPECT_GT(r.header.kv_count, 0u);
      EXPECT_EQ(r.header.kvs.size(), r.header.kv_count);
      EXPECT_EQ(r.header.tensors.size(), r.header.tensor_count);
      ASSERT_NE(r.header.Find("tokenizer.ggml.tokens"), nullptr);
      EXPECT_EQ(r.header.Find("tokenizer.ggml.tokens")->value().array.count, 32000u);
    } else {
      ASSERT_EQ(f.dir, "malformed");
      EXPECT_FALSE(r.valid()) << Describe(r);
      EXPECT_GE(testing::CountSeverity(r, Severity::kError), 1u) << Describe(r);
    }
  }
  EXPECT_GE(per_dir["valid"], 19);
  EXPECT_EQ(per_dir["bigendian"], 2);
  EXPECT_EQ(per_dir["legacy"], 4);
  EXPECT_GE(per_dir["malformed"], 12);
}

// Issue 40: naming llama.cpp ("this file must load there") keeps every real
// file's verdict and findings (rule and byte), but for the big-endian
// conversions, which llama.cpp refuses on a little-endian host: there
// GG2005's note becomes the one error, at the same byte.
TEST(CorpusRealTest, NamingLlamaCppKeepsEveryVerdictButBigEndiansRefusal) {
  SKIP_WITHOUT_CORPUS();
  Policy llama_cpp = DefaultPolicy();
  std::string bad;
  ASSERT_TRUE(NameProfiles({"llama.cpp"}, &llama_cpp, &bad)) << bad;
  for (const CorpusFile& f : ListCorpus()) {
    SCOPED_TRACE(f.dir + "/" + f.name);
    BothPaths unnamed = ValidateBoth(f.path, DefaultPolicy());
    BothPaths named = ValidateBoth(f.path, llama_cpp);
    const Report& u = unnamed.in_memory;
    const Report& named_memory = named.in_memory;
    for (const Report* n : {&named_memory, &named.from_file.report()}) {
      EXPECT_EQ(RulesAt(*n), RulesAt(u)) << "named:\n" << Describe(*n) << "unnamed:\n" << Describe(u);
      if (f.dir != "bigendian") {
        // A malformed file may gain an error (a warning llama.cpp refuses
        // on); its verdict, like every other file's, stays.
        EXPECT_EQ(n->verdict(), u.verdict()) << Describe(*n);
        continue;
      }
      EXPECT_TRUE(testing::IsValid(u));
      EXPECT_EQ(n->verdict(), Report::Verdict::kInvalid) << Describe(*n);
      EXPECT_EQ(testing::CountSeverity(*n, Severity::kError), 1u) << Describe(*n);
      for (const Finding& finding : n->findings) {
        if (finding.severity == Severity::kError) {
          EXPECT_EQ(finding.rule, RuleId::kBigEndian) << Describe(*n);
        }
      }
    }
  }
}

// The manifest lists exactly the files that are there.
TEST(CorpusRealTest, ManifestAndDirectoriesAgree) {
  SKIP_WITHOUT_CORPUS();
  std::optional<std::vector<uint8_t>> manifest = testing::ReadFileBytes(CorpusDir() / "MANIFEST.md");
  ASSERT_TRUE(manifest.has_value());
  const std::string text(manifest->begin(), manifest->end());
  for (const CorpusFile& f : ListCorpus()) {
    EXPECT_NE(text.find("| `" + f.dir + "/" + f.name + "` |"), std::string::npos) << f.dir << "/" << f.name;
  }
}

// The point of each malformed file, where the manifest names it.
TEST(CorpusRealTest, MalformedFilesFailForTheirReason) {
  SKIP_WITHOUT_CORPUS();
  struct Want {
    const char* name;
    RuleId rule;
  };
  const Want wants[] = {
      {"llamacpp_test_writer_value-type-13.gguf", RuleId::kInvalidValueType},
      {"ollama_api-test_6-bytes.gguf", RuleId::kTruncated},
      {"gridcore_fuzz_magic-only.gguf", RuleId::kTruncated},
      {"gridcore_fuzz_huge-counts.gguf", RuleId::kTensorCountLimit},
      {"gridcore_fuzz_kv-arr-huge-n.gguf", RuleId::kArrayLengthLimit},
      {"gridcore_fuzz_tensor-huge-dims.gguf", RuleId::kTensorSizeOverflow},
      {"gridcore_fuzz_hdr-wrap-first-offset.gguf", RuleId::kTensorOutOfBounds},
      // Despite its name, a v1 header (with 8 zero bytes of padding after it).
      {"gridcore_fuzz_bad-version.gguf", RuleId::kVersion1},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.name);
    BothPaths v = ValidateBoth(CorpusDir() / "malformed" / w.name, DefaultPolicy());
    EXPECT_TRUE(testing::HasRule(v.in_memory, w.rule));
    EXPECT_FALSE(v.in_memory.valid());
  }
  // A real vocab whose invalid bytes were replaced by U+FFFD, so a string's
  // length no longer matches its bytes: the parse runs off the rails in the
  // first KVs and reads text as the next key's length (the manifest: "fails
  // at offset 339").
  BothPaths mangled = ValidateBoth(CorpusDir() / "malformed" / "ushure_vocab-gpt-2_utf8-mangled.gguf", DefaultPolicy());
  EXPECT_FALSE(mangled.in_memory.header_parsed);
  EXPECT_TRUE(FindingsAre(mangled.in_memory, {{RuleId::kStringLengthLimit, 339}}));
}

// gguf-py's own endian converter: the same findings at the same offsets, the
// big-endian note apart, and the same parsed header.
TEST(CorpusRealTest, BigEndianConversionsMatchTheirOriginals) {
  SKIP_WITHOUT_CORPUS();
  const std::pair<const char*, const char*> pairs[] = {
      {"valid/llamacpp_vocab-llama-spm.gguf", "bigendian/bigendian_llamacpp_vocab-llama-spm.gguf"},
      {"valid/ollama_llama-2-tiny-random.gguf", "bigendian/bigendian_ollama_llama-2-tiny-random.gguf"},
  };
  for (const auto& [le_name, be_name] : pairs) {
    SCOPED_TRACE(be_name);
    BothPaths le = ValidateBoth(CorpusDir() / le_name, DefaultPolicy());
    BothPaths be = ValidateBoth(CorpusDir() / be_name, DefaultPolicy());
    EXPECT_EQ(testing::RulesAtExcept(be.in_memory, RuleId::kBigEndian), RulesAt(le.in_memory));
    EXPECT_EQ(testing::RulesAtExcept(be.from_file.report(), RuleId::kBigEndian), RulesAt(le.from_file.report()));
    EXPECT_EQ(testing::CountRule(be.in_memory, RuleId::kBigEndian), 1u);
    const GgufHeader& l = le.in_memory.header;
    const GgufHeader& b = be.in_memory.header;
    EXPECT_EQ(b.version, l.version);
    EXPECT_EQ(b.infos_end, l.infos_end);
    EXPECT_EQ(b.data_offset, l.data_offset);
    ASSERT_EQ(b.kvs.size(), l.kvs.size());
    for (size_t i = 0; i < l.kvs.size(); ++i) {
      EXPECT_EQ(b.kvs[i].key(), l.kvs[i].key());
      EXPECT_EQ(b.kvs[i].type(), l.kvs[i].type());
      EXPECT_EQ(b.kvs[i].value().AsUnsigned(), l.kvs[i].value().AsUnsigned()) << l.kvs[i].key();
      if (l.kvs[i].type() == ValueType::kString) {
        EXPECT_EQ(b.kvs[i].value().AsString(), l.kvs[i].value().AsString());
      }
      EXPECT_EQ(b.kvs[i].value().array.count, l.kvs[i].value().array.count);
    }
    ASSERT_EQ(b.tensors.size(), l.tensors.size());
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      EXPECT_EQ(b.tensors[i].name, l.tensors[i].name);
      EXPECT_EQ(b.tensors[i].dims(), l.tensors[i].dims());
      EXPECT_EQ(b.tensors[i].ggml_type, l.tensors[i].ggml_type);
      EXPECT_EQ(b.tensors[i].absolute_offset, l.tensors[i].absolute_offset);
      EXPECT_EQ(b.tensors[i].byte_size, l.tensors[i].byte_size);
    }
  }
}

}  // namespace
}  // namespace ggufguard
