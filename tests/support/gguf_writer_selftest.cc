// Tests of the test writer itself: every expectation decodes bytes by hand,
// so a writer bug cannot hide behind the validator it feeds.
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ggufguard::testing {
namespace {

// Reads fields in a chosen byte order, advancing through the file.
class Cursor {
 public:
  Cursor(const std::vector<uint8_t>& bytes, uint64_t pos, bool big_endian = false)
      : bytes_(bytes), pos_(pos), big_endian_(big_endian) {}

  uint64_t Uint(int width) {
    EXPECT_LE(pos_ + width, bytes_.size());
    if (pos_ + width > bytes_.size()) return 0;
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) {
      int shift = 8 * (big_endian_ ? width - 1 - i : i);
      v |= static_cast<uint64_t>(bytes_[pos_ + i]) << shift;
    }
    pos_ += width;
    return v;
  }
  uint64_t U32() { return Uint(4); }
  uint64_t U64() { return Uint(8); }
  std::string Bytes(uint64_t n) {
    EXPECT_LE(pos_ + n, bytes_.size());
    if (pos_ + n > bytes_.size()) return "";
    std::string s(bytes_.begin() + pos_, bytes_.begin() + pos_ + n);
    pos_ += n;
    return s;
  }
  uint64_t pos() const { return pos_; }

 private:
  const std::vector<uint8_t>& bytes_;
  uint64_t pos_;
  bool big_endian_;
};

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(GgufWriterTest, EmptyV3IsTheBareHeader) {
  BuiltFile f = GgufBuilder().Build();
  const std::vector<uint8_t> expected = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0,
                                         0,   0,   0,   0,   0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(f.bytes, expected);
  EXPECT_EQ(f.file_size, 24u);
  EXPECT_EQ(f.header_end, 24u);
  EXPECT_EQ(f.data_offset, 24u);  // no tensors, so no header padding
}

TEST(GgufWriterTest, EmptyV3MatchesARealFile) {
  GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS();
  const std::string path = RealCorpusDir() / "valid" / "ollama_minimal-v3-empty.gguf";
  std::vector<uint8_t> real = ReadFile(path);
  ASSERT_FALSE(real.empty()) << path;
  EXPECT_EQ(GgufBuilder().Build().bytes, real);
}

TEST(GgufWriterTest, HeaderFieldsAndOverrides) {
  BuiltFile f = GgufBuilder()
                    .set_magic("GGML")
                    .set_version(0x12345678)
                    .set_tensor_count(7)
                    .set_kv_count(UINT64_MAX)
                    .AddKv("a", GgufValue::U8(1))
                    .Build();
  Cursor c(f.bytes, 0);
  EXPECT_EQ(c.Bytes(4), "GGML");
  EXPECT_EQ(c.U32(), 0x12345678u);
  EXPECT_EQ(c.U64(), 7u);
  EXPECT_EQ(c.U64(), UINT64_MAX);
  EXPECT_EQ(f.kv_offsets, std::vector<uint64_t>{24});
  EXPECT_EQ(f.kv_value_offsets, std::vector<uint64_t>{24 + 8 + 1});
  EXPECT_EQ(f.file_size, 24u + 8 + 1 + 4 + 1);
}

TEST(GgufWriterTest, StringsAreArbitraryBytes) {
  const std::string key("k\0\xff", 3);
  const std::string value("v\0\xc3\x28", 4);
  BuiltFile f = GgufBuilder().AddKv(key, GgufValue::Str(value)).Build();
  Cursor c(f.bytes, f.kv_offsets[0]);
  EXPECT_EQ(c.U64(), 3u);
  EXPECT_EQ(c.Bytes(3), key);
  EXPECT_EQ(c.pos(), f.kv_value_offsets[0]);
  EXPECT_EQ(c.U32(), 8u);
  EXPECT_EQ(c.U64(), 4u);
  EXPECT_EQ(c.Bytes(4), value);
  EXPECT_EQ(c.pos(), f.bytes.size());
}

TEST(GgufWriterTest, EveryScalarType) {
  GgufBuilder b;
  b.AddKv("u8", GgufValue::U8(0xAB))
      .AddKv("i8", GgufValue::I8(-2))
      .AddKv("u16", GgufValue::U16(0xBEEF))
      .AddKv("i16", GgufValue::I16(-3))
      .AddKv("u32", GgufValue::U32(0xDEADBEEF))
      .AddKv("i32", GgufValue::I32(-4))
      .AddKv("f32", GgufValue::F32(1.0f))
      .AddKv("bool", GgufValue::Bool(true))
      .AddKv("u64", GgufValue::U64(0x0102030405060708))
      .AddKv("i64", GgufValue::I64(-5))
      .AddKv("f64", GgufValue::F64(-2.0));
  BuiltFile f = b.Build();
  struct Want {
    uint32_t type;
    int width;
    uint64_t bits;
  };
  const Want want[] = {{0, 1, 0xAB},       {1, 1, 0xFE},
                       {2, 2, 0xBEEF},     {3, 2, 0xFFFD},
                       {4, 4, 0xDEADBEEF}, {5, 4, 0xFFFFFFFC},
                       {6, 4, 0x3F800000}, {7, 1, 1},
                       {10, 8, 0x0102030405060708}, {11, 8, 0xFFFFFFFFFFFFFFFB},
                       {12, 8, 0xC000000000000000}};
  ASSERT_EQ(f.kv_value_offsets.size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    Cursor c(f.bytes, f.kv_value_offsets[i]);
    EXPECT_EQ(c.U32(), want[i].type) << i;
    EXPECT_EQ(c.Uint(want[i].width), want[i].bits) << i;
  }
}

TEST(GgufWriterTest, ArraysAndEscapeHatches) {
  GgufBuilder b;
  b.AddKv("s", GgufValue::StrArray({"ab", ""}))
      .AddKv("n", GgufValue::Array(ValueType::kArray, {GgufValue::I32Array({-1})}))
      .AddKv("c", GgufValue::ArrayWithCount(ValueType::kUint8, {GgufValue::U8(9)}, 1000))
      .AddKv("t", GgufValue::ArrayWithElemType(4, {GgufValue::U8(9)}))
      .AddKv("r", GgufValue::Raw(13, {1, 2, 3}))
      .AddKv("b", GgufValue::BoolByte(2))
      .AddKv("l", GgufValue::StrWithLength("xy", 1ull << 40));
  BuiltFile f = b.Build();

  Cursor s(f.bytes, f.kv_value_offsets[0]);
  EXPECT_EQ(s.U32(), 9u);
  EXPECT_EQ(s.U32(), 8u);
  EXPECT_EQ(s.U64(), 2u);
  EXPECT_EQ(s.U64(), 2u);
  EXPECT_EQ(s.Bytes(2), "ab");
  EXPECT_EQ(s.U64(), 0u);

  Cursor n(f.bytes, f.kv_value_offsets[1]);  // a nested element is type, count, elements
  EXPECT_EQ(n.U32(), 9u);
  EXPECT_EQ(n.U32(), 9u);
  EXPECT_EQ(n.U64(), 1u);
  EXPECT_EQ(n.U32(), 5u);
  EXPECT_EQ(n.U64(), 1u);
  EXPECT_EQ(n.U32(), 0xFFFFFFFFu);

  Cursor c(f.bytes, f.kv_value_offsets[2]);
  EXPECT_EQ(c.U32(), 9u);
  EXPECT_EQ(c.U32(), 0u);
  EXPECT_EQ(c.U64(), 1000u);
  EXPECT_EQ(c.Uint(1), 9u);
  EXPECT_EQ(c.pos(), f.kv_offsets[3]);

  Cursor t(f.bytes, f.kv_value_offsets[3]);
  EXPECT_EQ(t.U32(), 9u);
  EXPECT_EQ(t.U32(), 4u);  // declared u32, but one byte follows
  EXPECT_EQ(t.U64(), 1u);
  EXPECT_EQ(t.Uint(1), 9u);
  EXPECT_EQ(t.pos(), f.kv_offsets[4]);

  Cursor r(f.bytes, f.kv_value_offsets[4]);
  EXPECT_EQ(r.U32(), 13u);
  EXPECT_EQ(r.Bytes(3), std::string("\1\2\3"));
  EXPECT_EQ(r.pos(), f.kv_offsets[5]);

  Cursor bb(f.bytes, f.kv_value_offsets[5]);
  EXPECT_EQ(bb.U32(), 7u);
  EXPECT_EQ(bb.Uint(1), 2u);

  Cursor l(f.bytes, f.kv_value_offsets[6]);
  EXPECT_EQ(l.U32(), 8u);
  EXPECT_EQ(l.U64(), 1ull << 40);
  EXPECT_EQ(l.Bytes(2), "xy");
  EXPECT_EQ(l.pos(), f.bytes.size());
}

TEST(GgufWriterTest, TensorInfosDataAndPadding) {
  BuiltFile f = GgufBuilder()
                    .AddTensor("a", {3}, /*F32*/ 0)
                    .AddTensor("bb", {64, 1}, /*Q4_0*/ 2)
                    .Build();
  ASSERT_EQ(f.tensor_info_offsets.size(), 2u);
  EXPECT_EQ(f.tensor_info_offsets[0], 24u);
  Cursor c(f.bytes, 24);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.Bytes(1), "a");
  EXPECT_EQ(c.U32(), 1u);   // n_dims
  EXPECT_EQ(c.U64(), 3u);   // ne0
  EXPECT_EQ(c.U32(), 0u);   // type
  EXPECT_EQ(c.U64(), 0u);   // offset
  EXPECT_EQ(c.pos(), f.tensor_info_offsets[1]);
  EXPECT_EQ(c.U64(), 2u);
  EXPECT_EQ(c.Bytes(2), "bb");
  EXPECT_EQ(c.U32(), 2u);
  EXPECT_EQ(c.U64(), 64u);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.U32(), 2u);
  EXPECT_EQ(c.U64(), 32u);  // 12 bytes of "a" padded to 32
  EXPECT_EQ(c.pos(), f.header_end);

  EXPECT_EQ(f.header_end, 24u + 33 + 42);
  EXPECT_EQ(f.data_offset, 128u);  // 99 padded to 32
  EXPECT_EQ(f.tensor_sizes, (std::vector<uint64_t>{12, 36}));
  EXPECT_EQ(f.tensor_relative_offsets, (std::vector<uint64_t>{0, 32}));
  EXPECT_EQ(f.tensor_data_offsets, (std::vector<uint64_t>{128, 160}));
  EXPECT_EQ(f.file_size, 128u + 32 + 64);  // 36 bytes padded to 64 at the end
  ASSERT_EQ(f.bytes.size(), f.file_size);

  auto all = [&](uint64_t from, uint64_t to, bool zero) {
    for (uint64_t i = from; i < to; ++i) {
      if ((f.bytes[i] == 0) != zero) return false;
    }
    return true;
  };
  EXPECT_TRUE(all(f.header_end, 128, true));
  EXPECT_TRUE(all(128, 128 + 12, false));
  EXPECT_TRUE(all(128 + 12, 160, true));
  EXPECT_TRUE(all(160, 160 + 36, false));
  EXPECT_TRUE(all(160 + 36, f.file_size, true));
}

TEST(GgufWriterTest, AlignmentKvSetsTheLayout) {
  BuiltFile f = GgufBuilder().AddAlignmentKv(64).AddTensor("t", {1}, 0).Build();
  Cursor c(f.bytes, f.kv_offsets[0]);
  EXPECT_EQ(c.Bytes(c.U64()), "general.alignment");
  EXPECT_EQ(c.U32(), 4u);
  EXPECT_EQ(c.U32(), 64u);
  EXPECT_EQ(f.data_offset % 64, 0u);
  EXPECT_EQ(f.file_size, f.data_offset + 64);
}

TEST(GgufWriterTest, BigEndianSwapsEveryFieldButTheMagic) {
  auto build = [](bool be) {
    return GgufBuilder()
        .set_big_endian(be)
        .AddKv("k", GgufValue::U32(0x01020304))
        .AddKv("s", GgufValue::StrArray({"x"}))
        .AddTensor("t", {2, 3}, /*F32*/ 0)
        .Build();
  };
  BuiltFile le = build(false);
  BuiltFile be = build(true);
  ASSERT_EQ(le.bytes.size(), be.bytes.size());
  EXPECT_EQ(be.data_offset, le.data_offset);
  Cursor c(be.bytes, 0, /*big_endian=*/true);
  EXPECT_EQ(c.Bytes(4), "GGUF");
  EXPECT_EQ(c.U32(), 3u);
  EXPECT_EQ(be.bytes[4], 0);
  EXPECT_EQ(be.bytes[7], 3);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.U64(), 2u);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.Bytes(1), "k");
  EXPECT_EQ(c.U32(), 4u);
  EXPECT_EQ(c.U32(), 0x01020304u);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.Bytes(1), "s");
  EXPECT_EQ(c.U32(), 9u);
  EXPECT_EQ(c.U32(), 8u);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.Bytes(1), "x");
  EXPECT_EQ(c.U64(), 1u);
  EXPECT_EQ(c.Bytes(1), "t");
  EXPECT_EQ(c.U32(), 2u);
  EXPECT_EQ(c.U64(), 2u);
  EXPECT_EQ(c.U64(), 3u);
  EXPECT_EQ(c.U32(), 0u);
  EXPECT_EQ(c.U64(), 0u);
  // Each f32 element of the data is the little-endian element reversed.
  for (uint64_t e = 0; e < 6; ++e) {
    for (uint64_t k = 0; k < 4; ++k) {
      EXPECT_EQ(be.bytes[be.data_offset + 4 * e + k], le.bytes[le.data_offset + 4 * e + 3 - k]);
    }
  }
}

TEST(GgufWriterTest, V1UsesNarrowCountsLengthsAndDims) {
  BuiltFile f = GgufBuilder()
                    .set_version(1)
                    .AddKv("k", GgufValue::Str("vv"))
                    .AddKv("a", GgufValue::U8Array({5, 6}))
                    .AddTensor("t", {4, 2}, /*F16*/ 1)
                    .Build();
  Cursor c(f.bytes, 0);
  EXPECT_EQ(c.Bytes(4), "GGUF");
  EXPECT_EQ(c.U32(), 1u);
  EXPECT_EQ(c.U32(), 1u);  // tensor count
  EXPECT_EQ(c.U32(), 2u);  // kv count
  EXPECT_EQ(c.pos(), f.kv_offsets[0]);
  EXPECT_EQ(c.U32(), 1u);
  EXPECT_EQ(c.Bytes(1), "k");
  EXPECT_EQ(c.U32(), 8u);
  EXPECT_EQ(c.U32(), 2u);
  EXPECT_EQ(c.Bytes(2), "vv");
  EXPECT_EQ(c.U32(), 1u);
  EXPECT_EQ(c.Bytes(1), "a");
  EXPECT_EQ(c.U32(), 9u);
  EXPECT_EQ(c.U32(), 0u);
  EXPECT_EQ(c.U32(), 2u);  // array count
  EXPECT_EQ(c.Bytes(2), "\5\6");
  EXPECT_EQ(c.pos(), f.tensor_info_offsets[0]);
  EXPECT_EQ(c.U32(), 1u);
  EXPECT_EQ(c.Bytes(1), "t");
  EXPECT_EQ(c.U32(), 2u);  // n_dims
  EXPECT_EQ(c.U32(), 4u);
  EXPECT_EQ(c.U32(), 2u);
  EXPECT_EQ(c.U32(), 1u);  // type
  EXPECT_EQ(c.U64(), 0u);  // offsets stay u64
  EXPECT_EQ(c.pos(), f.header_end);
  EXPECT_EQ(f.tensor_sizes[0], 16u);
}

TEST(GgufWriterTest, LyingTensorInfo) {
  TensorOptions lie;
  lie.offset = 5;
  lie.byte_size = 3;
  lie.n_dims = 9;
  lie.written_dims = std::vector<uint64_t>{UINT64_MAX};  // -1 as int64
  lie.declared_name_length = 100;
  BuiltFile f = GgufBuilder().AddTensor("t", {8}, 0, lie).AddTensor("u", {1}, 0).Build();
  Cursor c(f.bytes, f.tensor_info_offsets[0]);
  EXPECT_EQ(c.U64(), 100u);
  EXPECT_EQ(c.Bytes(1), "t");
  EXPECT_EQ(c.U32(), 9u);
  EXPECT_EQ(c.U64(), UINT64_MAX);
  EXPECT_EQ(c.U32(), 0u);
  EXPECT_EQ(c.U64(), 5u);
  EXPECT_EQ(f.tensor_relative_offsets, (std::vector<uint64_t>{5, 32}));
  EXPECT_EQ(f.tensor_data_offsets[0], f.data_offset);  // only the field lies
  EXPECT_EQ(f.tensor_sizes, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(f.file_size, f.data_offset + 64);
}

TEST(GgufWriterTest, GivenDataAndFills) {
  TensorOptions given;
  given.data = std::vector<uint8_t>{1, 2, 3};
  given.byte_size = 5;  // zero-extended
  TensorOptions zeros;
  zeros.fill = DataFill::kZeros;
  BuiltFile f = GgufBuilder().AddTensor("g", {1}, 24, given).AddTensor("z", {4}, 0, zeros).Build();
  const uint8_t* d = f.bytes.data() + f.data_offset;
  EXPECT_EQ(std::vector<uint8_t>(d, d + 5), (std::vector<uint8_t>{1, 2, 3, 0, 0}));
  for (uint64_t i = f.tensor_data_offsets[1]; i < f.file_size; ++i) EXPECT_EQ(f.bytes[i], 0);
}

TEST(GgufWriterTest, EndsTruncationAndTrailingBytes) {
  auto base = [] { return GgufBuilder().AddTensor("t", {3}, 0); };
  BuiltFile full = base().Build();
  EXPECT_EQ(full.file_size, full.data_offset + 32);

  BuiltFile no_pad = base().set_pad_end(false).Build();
  EXPECT_EQ(no_pad.file_size, no_pad.data_offset + 12);

  BuiltFile omitted = base().set_omit_tensor_data(true).Build();
  EXPECT_EQ(omitted.file_size, omitted.data_offset);
  EXPECT_EQ(omitted.bytes, std::vector<uint8_t>(full.bytes.begin(),
                                                full.bytes.begin() + full.data_offset));

  BuiltFile trailing = base().set_trailing_bytes({0xEE, 0xFF}).Build();
  EXPECT_EQ(trailing.file_size, full.file_size + 2);
  EXPECT_EQ(trailing.bytes[full.file_size + 1], 0xFF);

  BuiltFile cut = base().set_truncate_to(10).Build();
  EXPECT_EQ(cut.bytes, std::vector<uint8_t>(full.bytes.begin(), full.bytes.begin() + 10));

  BuiltFile no_header_pad = base().set_pad_header(false).Build();
  EXPECT_EQ(no_header_pad.data_offset, no_header_pad.header_end);
  BuiltFile empty_padded = GgufBuilder().set_pad_header(true).Build();
  EXPECT_EQ(empty_padded.file_size, 32u);
}

TEST(GgufWriterTest, GgmlSizes) {
  EXPECT_EQ(GgmlTensorBytes(0, {}), 4u);                     // scalar f32
  EXPECT_EQ(GgmlTensorBytes(8, {4096, 4096}), 4096u / 32 * 34 * 4096);
  EXPECT_EQ(GgmlTensorBytes(14, {256, 2, 3}), 210u * 6);
  EXPECT_EQ(GgmlTensorBytes(2, {33}), 18u);                  // rounded down
  EXPECT_EQ(GgmlTensorBytes(4, {32}), 0u);                   // removed id
  EXPECT_EQ(GgmlTensorBytes(kFirstUnknownGgmlType, {32}), 0u);  // unknown id
  EXPECT_EQ(GgmlTensorBytes(0, {1ull << 40, 1ull << 40, 0}), 0u);
  EXPECT_EQ(GgmlTypeSizeOf(39).block_size, 32u);
  EXPECT_EQ(GgmlTypeSizeOf(42).type_size, 18u);
}

TEST(GgufWriterDeathTest, AbortsOnMisuse) {
  EXPECT_DEATH(GgmlTensorBytes(0, {1ull << 40, 1ull << 40}), "overflow");
  EXPECT_DEATH(GgufValue::Array(ValueType::kUint8, {GgufValue::I8(1)}), "element type");
  EXPECT_DEATH(GgufBuilder().set_version(1).set_kv_count(1ull << 32).Build(), "u32");
}

TEST(GgufWriterTest, PatchHelpers) {
  std::vector<uint8_t> b(12, 0);
  PutU32LE(b, 0, 0x04030201);
  PutU64LE(b, 4, 0x0807060504030201);
  PutU8(b, 11, 0xAA);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[3], 4);
  EXPECT_EQ(GetU32LE(b, 0), 0x04030201u);
  EXPECT_EQ(GetU64LE(b, 4), 0xAA07060504030201u);
}

TEST(GgufWriterTest, WriteToFileMatchesBuild) {
  GgufBuilder b;
  b.AddKv("k", GgufValue::Str("v")).AddTensor("p", {100}, 0).AddTensor("z", {3, 5}, 1,
                                                                       {.fill = DataFill::kZeros});
  const std::vector<uint8_t> expected = b.Build().bytes;
  for (bool sparse : {false, true}) {
    const std::string path = ::testing::TempDir() + "gguf_writer_selftest.gguf";
    ASSERT_TRUE(b.WriteToFile(path, sparse).ok());
    EXPECT_EQ(ReadFile(path), expected) << "sparse=" << sparse;
    std::remove(path.c_str());
  }
}

TEST(GgufWriterTest, SparseWriteOfABigZeroTensor) {
  GgufBuilder b;
  b.set_default_fill(DataFill::kZeros).AddTensor("big", {1ull << 28}, /*F32*/ 0);  // 1 GiB
  BuiltFile layout = b.Layout();
  EXPECT_TRUE(layout.bytes.empty());
  EXPECT_EQ(layout.file_size, layout.data_offset + (1ull << 30));
  const std::string path = ::testing::TempDir() + "gguf_writer_selftest_big.gguf";
  ASSERT_TRUE(b.WriteToFile(path, /*sparse_data=*/true).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), layout.file_size);
  // Every Linux file system a test runs on (ext4, xfs, btrfs, tmpfs,
  // overlayfs) supports holes; a 1 GiB allocation means the hole was lost.
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{1} << 20)
      << "the data section was not written as a hole";
  std::vector<uint8_t> head(layout.data_offset);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  GgufBuilder small = b;
  EXPECT_EQ(head, small.set_omit_tensor_data(true).Build().bytes);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ggufguard::testing
