// The C API (include/ggufguard/ggufguard.h): what a loader in C reads from a
// report, how every getter answers a key or an index it has no business
// asking for, and the mapping that refuses a file other than the validated
// one.
#include "ggufguard/ggufguard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/ggufguard.hpp"
#include "ggufguard/report/render.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using testing::GgufBuilder;
using testing::GgufValue;

// Owns a report and frees it.
struct ReportPtr {
  ggufguard_report* r = nullptr;
  ~ReportPtr() { ggufguard_report_free(r); }
};

// A file with a value of every type, for the getters.
testing::BuiltFile EveryType() {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("t.u8", GgufValue::U8(200))
      .AddKv("t.i8", GgufValue::I8(-5))
      .AddKv("t.u32", GgufValue::U32(4000000000u))
      .AddKv("t.i64", GgufValue::I64(-7))
      .AddKv("t.u64big", GgufValue::U64(UINT64_MAX))
      .AddKv("t.f32", GgufValue::F32(0.5f))
      .AddKv("t.f64", GgufValue::F64(-2.25))
      .AddKv("t.bool", GgufValue::Bool(true))
      .AddKv("t.strs", GgufValue::StrArray({"alpha", "", "gamma"}))
      .AddKv("t.i32s", GgufValue::I32Array({-1, 2, -3}))
      .AddKv("t.f32s", GgufValue::F32Array({1.5f, -0.25f}))
      .AddKv("t.bools", GgufValue::BoolArray({false, true}))
      .AddKv("t.nested", GgufValue::Array(testing::ValueType::kArray, {GgufValue::U8Array({1, 2})}));
  return b.Build();
}

// The tiny model with tensor `index`'s offset field (relative) or type
// rewritten: one lie, the data still written where it belongs.
testing::BuiltFile TinyModelWith(size_t index, testing::TensorOptions lie, std::optional<uint32_t> type) {
  const testing::TinyModel m = testing::MakeTinyModel();
  GgufBuilder b;
  for (const auto& [key, value] : m.kvs) b.AddKv(key, value);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const testing::TinyModel::Tensor& t = m.tensors[i];
    b.AddTensor(t.name, t.dims, i == index ? type.value_or(t.type) : t.type,
                i == index ? lie : testing::TensorOptions{});
  }
  return b.Build();
}

// A policy document that gives `severity` to every rule the file's findings
// name under the default policy ("off": disables them).
std::string PolicyForgiving(const testing::BuiltFile& f, const std::string& severity) {
  ReportPtr r;
  EXPECT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &r.r), GGUFGUARD_OK);
  std::vector<std::string> names;
  for (size_t i = 0; i < ggufguard_finding_count(r.r); ++i) {
    ggufguard_finding finding;
    EXPECT_EQ(ggufguard_finding_at(r.r, i, &finding), GGUFGUARD_OK);
    if (std::find(names.begin(), names.end(), finding.name) == names.end()) names.emplace_back(finding.name);
  }
  std::string doc = R"({"base": "default", )";
  if (severity == "off") {
    doc += R"("disable": [)";
    for (size_t i = 0; i < names.size(); ++i) doc += (i ? ", \"" : "\"") + names[i] + "\"";
    doc += "]}";
  } else {
    doc += R"("severities": {)";
    for (size_t i = 0; i < names.size(); ++i) doc += (i ? ", \"" : "\"") + names[i] + "\": \"" + severity + "\"";
    doc += "}}";
  }
  return doc;
}

TEST(CApi, VersionsAreTheLibrarys) {
  EXPECT_EQ(std::string(ggufguard_version()), std::to_string(GGUFGUARD_VERSION_MAJOR) + "." +
                                                   std::to_string(GGUFGUARD_VERSION_MINOR) + "." +
                                                   std::to_string(GGUFGUARD_VERSION_PATCH));
  EXPECT_EQ(ggufguard_report_schema_version(), kReportSchemaVersion);
  const std::string catalog = ggufguard_rule_catalog_version();
  EXPECT_EQ(catalog, RuleCatalogVersion());
  EXPECT_EQ(catalog.substr(0, catalog.find('-')), std::to_string(AllRules().size()));
  EXPECT_EQ(catalog.size() - catalog.find('-') - 1, 8u) << catalog;
}

TEST(CApi, RulesMatchTheCatalog) {
  ASSERT_EQ(ggufguard_rule_count(), AllRules().size());
  for (size_t i = 0; i < ggufguard_rule_count(); ++i) {
    ggufguard_rule_info info;
    ASSERT_EQ(ggufguard_rule_at(i, &info), GGUFGUARD_OK);
    EXPECT_EQ(info.code, RuleCode(AllRules()[i].id));
    EXPECT_EQ(info.name, AllRules()[i].name);
    EXPECT_EQ(info.default_severity, static_cast<int>(AllRules()[i].default_severity));
  }
  ggufguard_rule_info info;
  EXPECT_EQ(ggufguard_rule_at(ggufguard_rule_count(), &info), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_rule_at(0, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
}

TEST(CApi, ValidFileGivesTheTrustedTable) {
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &r.r), GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_report_valid(r.r), 1);
  EXPECT_EQ(ggufguard_report_file_size(r.r), f.bytes.size());
  EXPECT_EQ(ggufguard_report_gguf_version(r.r), 3u);
  ASSERT_EQ(ggufguard_tensor_count(r.r), f.tensor_data_offsets.size());
  for (size_t i = 0; i < ggufguard_tensor_count(r.r); ++i) {
    ggufguard_tensor t;
    ASSERT_EQ(ggufguard_tensor_at(r.r, i, &t), GGUFGUARD_OK);
    EXPECT_EQ(t.offset, f.tensor_data_offsets[i]);
    EXPECT_EQ(t.size, f.tensor_sizes[i]);
    EXPECT_EQ(std::strlen(t.name), t.name_length);
  }
  ggufguard_tensor t;
  ASSERT_EQ(ggufguard_tensor_at(r.r, 0, &t), GGUFGUARD_OK);
  EXPECT_STREQ(t.name, "token_embd.weight");
  EXPECT_EQ(t.n_dims, 2u);
  EXPECT_EQ(t.ne[0], 8u);
  EXPECT_EQ(t.ne[1], 7u);
  EXPECT_EQ(t.ne[2], 1u);
  EXPECT_EQ(t.size, 8u * 7u * 4u);  // F32
  EXPECT_EQ(ggufguard_tensor_at(r.r, ggufguard_tensor_count(r.r), &t), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_tensor_at(r.r, SIZE_MAX, &t), GGUFGUARD_ERR_RANGE);
}

TEST(CApi, GettersReadEveryType) {
  const testing::BuiltFile f = EveryType();
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &r.r), GGUFGUARD_OK);
  const char* s;
  size_t n;
  ASSERT_EQ(ggufguard_get_string(r.r, "general.architecture", &s, &n), GGUFGUARD_OK);
  EXPECT_EQ(std::string_view(s, n), "llama");
  uint64_t u;
  int64_t i;
  double d;
  int b;
  ASSERT_EQ(ggufguard_get_uint64(r.r, "t.u8", &u), GGUFGUARD_OK);
  EXPECT_EQ(u, 200u);
  ASSERT_EQ(ggufguard_get_int64(r.r, "t.i8", &i), GGUFGUARD_OK);
  EXPECT_EQ(i, -5);
  EXPECT_EQ(ggufguard_get_uint64(r.r, "t.i8", &u), GGUFGUARD_ERR_RANGE);  // negative
  ASSERT_EQ(ggufguard_get_int64(r.r, "t.u32", &i), GGUFGUARD_OK);
  EXPECT_EQ(i, 4000000000);
  EXPECT_EQ(ggufguard_get_int64(r.r, "t.u64big", &i), GGUFGUARD_ERR_RANGE);
  ASSERT_EQ(ggufguard_get_uint64(r.r, "t.u64big", &u), GGUFGUARD_OK);
  EXPECT_EQ(u, UINT64_MAX);
  ASSERT_EQ(ggufguard_get_float64(r.r, "t.f32", &d), GGUFGUARD_OK);
  EXPECT_EQ(d, 0.5);
  ASSERT_EQ(ggufguard_get_float64(r.r, "t.f64", &d), GGUFGUARD_OK);
  EXPECT_EQ(d, -2.25);
  ASSERT_EQ(ggufguard_get_bool(r.r, "t.bool", &b), GGUFGUARD_OK);
  EXPECT_EQ(b, 1);
  // Wrong types are refused, not converted.
  EXPECT_EQ(ggufguard_get_float64(r.r, "t.u8", &d), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_int64(r.r, "t.f32", &i), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_string(r.r, "t.u8", &s, &n), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_bool(r.r, "t.u8", &b), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_uint64(r.r, "t.strs", &u), GGUFGUARD_ERR_TYPE);

  int type;
  uint64_t count;
  ASSERT_EQ(ggufguard_get_type(r.r, "t.strs", &type), GGUFGUARD_OK);
  EXPECT_EQ(type, GGUFGUARD_TYPE_ARRAY);
  ASSERT_EQ(ggufguard_get_array(r.r, "t.strs", &type, &count), GGUFGUARD_OK);
  EXPECT_EQ(type, GGUFGUARD_TYPE_STRING);
  EXPECT_EQ(count, 3u);
  const std::vector<std::string> want = {"alpha", "", "gamma"};
  for (uint64_t k = 0; k < count; ++k) {
    ASSERT_EQ(ggufguard_get_array_string(r.r, "t.strs", k, &s, &n), GGUFGUARD_OK);
    EXPECT_EQ(std::string_view(s, n), want[k]);
  }
  EXPECT_EQ(ggufguard_get_array_string(r.r, "t.strs", 3, &s, &n), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_get_array_string(r.r, "t.strs", UINT64_MAX, &s, &n), GGUFGUARD_ERR_RANGE);
  ASSERT_EQ(ggufguard_get_array_int64(r.r, "t.i32s", 2, &i), GGUFGUARD_OK);
  EXPECT_EQ(i, -3);
  EXPECT_EQ(ggufguard_get_array_int64(r.r, "t.i32s", 3, &i), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_get_array_int64(r.r, "t.i32s", UINT64_MAX / 2, &i), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_get_array_uint64(r.r, "t.i32s", 0, &u), GGUFGUARD_ERR_RANGE);  // -1
  ASSERT_EQ(ggufguard_get_array_float64(r.r, "t.f32s", 1, &d), GGUFGUARD_OK);
  EXPECT_EQ(d, -0.25);
  ASSERT_EQ(ggufguard_get_array_bool(r.r, "t.bools", 1, &b), GGUFGUARD_OK);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(ggufguard_get_array_string(r.r, "t.i32s", 0, &s, &n), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_array_int64(r.r, "t.strs", 0, &i), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_array_int64(r.r, "t.nested", 0, &i), GGUFGUARD_ERR_TYPE);
  EXPECT_EQ(ggufguard_get_array_int64(r.r, "t.u8", 0, &i), GGUFGUARD_ERR_TYPE);

  // Enumeration in file order.
  ASSERT_EQ(ggufguard_kv_count(r.r), 14u);
  const char* key;
  size_t key_length;
  ASSERT_EQ(ggufguard_kv_at(r.r, 1, &key, &key_length, &type), GGUFGUARD_OK);
  EXPECT_STREQ(key, "t.u8");
  EXPECT_EQ(key_length, 4u);
  EXPECT_EQ(type, GGUFGUARD_TYPE_UINT8);
  EXPECT_EQ(ggufguard_kv_at(r.r, 14, &key, &key_length, &type), GGUFGUARD_ERR_RANGE);
}

TEST(CApi, HostileKeysAndArgumentsAreRefused) {
  const testing::BuiltFile f = EveryType();
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &r.r), GGUFGUARD_OK);
  uint64_t u;
  const char* s;
  size_t n;
  EXPECT_EQ(ggufguard_get_uint64(r.r, "no.such.key", &u), GGUFGUARD_ERR_NOT_FOUND);
  EXPECT_NE(std::string(ggufguard_last_error()).find("no.such.key"), std::string::npos);
  EXPECT_EQ(ggufguard_get_uint64(r.r, "", &u), GGUFGUARD_ERR_NOT_FOUND);
  EXPECT_EQ(ggufguard_get_uint64(r.r, "t.u8 ", &u), GGUFGUARD_ERR_NOT_FOUND);
  EXPECT_EQ(ggufguard_get_uint64(r.r, nullptr, &u), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_get_uint64(nullptr, "t.u8", &u), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_get_uint64(r.r, "t.u8", nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_get_string(r.r, "general.architecture", nullptr, &n), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_get_array_string(r.r, "t.strs", 0, &s, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_finding_at(r.r, SIZE_MAX, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_kv_at(nullptr, 0, nullptr, nullptr, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_report_valid(nullptr), 0);
  EXPECT_EQ(ggufguard_tensor_count(nullptr), 0u);
  EXPECT_EQ(ggufguard_kv_count(nullptr), 0u);
  ggufguard_report* out = reinterpret_cast<ggufguard_report*>(1);
  EXPECT_EQ(ggufguard_validate_buffer(nullptr, 10, nullptr, &out), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, nullptr),
            GGUFGUARD_ERR_INVALID_ARGUMENT);
  ggufguard_report_free(nullptr);
  ggufguard_policy_free(nullptr);
  ggufguard_mapping_free(nullptr);
}

TEST(CApi, InvalidFileIsAReportNotAnError) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama")).AddTensor("w", {4}, 0, {.offset = 1});
  const testing::BuiltFile f = b.Build();
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &r.r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_valid(r.r), 0);
  ASSERT_GT(ggufguard_finding_count(r.r), 0u);
  bool misaligned = false;
  for (size_t i = 0; i < ggufguard_finding_count(r.r); ++i) {
    ggufguard_finding finding;
    ASSERT_EQ(ggufguard_finding_at(r.r, i, &finding), GGUFGUARD_OK);
    if (std::string(finding.rule) == "GG6001") {
      misaligned = true;
      EXPECT_STREQ(finding.name, "tensor-misaligned");
      EXPECT_EQ(finding.severity, GGUFGUARD_SEVERITY_ERROR);
      // At the info's offset field: after the name (length + "w"), n_dims,
      // one dim and the type.
      EXPECT_EQ(finding.offset, f.tensor_info_offsets[0] + 8 + 1 + 4 + 8 + 4) << finding.message;
    }
  }
  EXPECT_TRUE(misaligned);
  // No trusted table, no mapping.
  EXPECT_EQ(ggufguard_tensor_count(r.r), 0u);
  ggufguard_tensor t;
  EXPECT_EQ(ggufguard_tensor_at(r.r, 0, &t), GGUFGUARD_ERR_NOT_VALID);
  ggufguard_mapping* m = nullptr;
  EXPECT_EQ(ggufguard_map_path(r.r, "/dev/null", &m), GGUFGUARD_ERR_NOT_VALID);
  EXPECT_EQ(m, nullptr);
  // Metadata of an invalid file stays readable, for a report.
  const char* s;
  size_t n;
  ASSERT_EQ(ggufguard_get_string(r.r, "general.architecture", &s, &n), GGUFGUARD_OK);
  EXPECT_EQ(std::string_view(s, n), "llama");
}

// A gatekeeper that fetched a file's first bytes (an HTTP range) and knows
// its size: the verdict on the header equals the whole file's where the
// data section does not decide it, the size-dependent rules run, and a
// prefix that stops inside the header is an error naming what it needs.
TEST(CApi, PrefixWithTheFileSizeValidatesTheHeader) {
  auto has_rule = [](const ggufguard_report* r, const char* code) {
    for (size_t i = 0; i < ggufguard_finding_count(r); ++i) {
      ggufguard_finding f;
      if (ggufguard_finding_at(r, i, &f) == GGUFGUARD_OK && std::string(f.rule) == code) return true;
    }
    return false;
  };
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  ReportPtr whole;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &whole.r), GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_report_valid(whole.r), 1);
  EXPECT_EQ(ggufguard_report_header_only(whole.r), 0);
  {
    // The report keeps its own copy: the caller's bytes are gone before
    // the report is read (ASan would see a read of them).
    std::vector<uint8_t> prefix(f.bytes.begin(), f.bytes.begin() + static_cast<ptrdiff_t>(f.data_offset));
    ReportPtr r;
    ASSERT_EQ(ggufguard_validate_prefix(prefix.data(), prefix.size(), f.file_size, nullptr, &r.r), GGUFGUARD_OK)
        << ggufguard_last_error();
    prefix.clear();
    prefix.shrink_to_fit();
    EXPECT_EQ(ggufguard_report_valid(r.r), 1);
    EXPECT_EQ(ggufguard_report_header_only(r.r), 1);
    EXPECT_EQ(ggufguard_report_file_size(r.r), f.file_size);
    ASSERT_EQ(ggufguard_tensor_count(r.r), ggufguard_tensor_count(whole.r));
    ggufguard_tensor a, b;
    ASSERT_EQ(ggufguard_tensor_at(r.r, 0, &a), GGUFGUARD_OK);
    ASSERT_EQ(ggufguard_tensor_at(whole.r, 0, &b), GGUFGUARD_OK);
    EXPECT_EQ(std::string_view(a.name, a.name_length), std::string_view(b.name, b.name_length));
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.size, b.size);
    const char* arch;
    size_t n;
    ASSERT_EQ(ggufguard_get_string(r.r, "general.architecture", &arch, &n), GGUFGUARD_OK);
    EXPECT_EQ(std::string_view(arch, n), "llama");
  }
  // The same header in a file 100 bytes shorter than its tensors need.
  ReportPtr cut;
  ASSERT_EQ(ggufguard_validate_prefix(f.bytes.data(), f.data_offset, f.file_size - 100, nullptr, &cut.r),
            GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_valid(cut.r), 0);
  EXPECT_TRUE(has_rule(cut.r, RuleCode(RuleId::kTensorOutOfBounds).c_str()));
  // Too few bytes for the header, and more bytes than the file has.
  ggufguard_report* none = nullptr;
  EXPECT_EQ(ggufguard_validate_prefix(f.bytes.data(), f.header_end - 10, f.file_size, nullptr, &none),
            GGUFGUARD_ERR_IO);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(std::string(ggufguard_last_error()).find("needs at least"), std::string::npos) << ggufguard_last_error();
  EXPECT_EQ(ggufguard_validate_prefix(f.bytes.data(), f.bytes.size(), f.bytes.size() - 1, nullptr, &none),
            GGUFGUARD_ERR_IO);
  EXPECT_EQ(ggufguard_validate_prefix(nullptr, 10, 10, nullptr, &none), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_validate_prefix(f.bytes.data(), 10, 10, nullptr, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
}

TEST(CApi, TruncatedFilesNeverReadPastTheirBytes) {
  // Every prefix of a file with arrays: the getters may say less, never
  // read more than there is (ASan watches the copy's end).
  const testing::BuiltFile f = EveryType();
  for (size_t cut = 0; cut < f.bytes.size(); ++cut) {
    std::vector<uint8_t> prefix(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    ReportPtr r;
    ASSERT_EQ(ggufguard_validate_buffer(prefix.data(), prefix.size(), nullptr, &r.r), GGUFGUARD_OK);
    EXPECT_EQ(ggufguard_report_valid(r.r), 0) << cut;
    for (const char* key : {"t.strs", "t.i32s", "t.f32s", "t.u64big", "general.architecture"}) {
      const char* s;
      size_t n;
      int64_t i;
      uint64_t u;
      for (uint64_t k = 0; k < 4; ++k) {
        if (ggufguard_get_array_string(r.r, key, k, &s, &n) == GGUFGUARD_OK) {
          ASSERT_GE(reinterpret_cast<const uint8_t*>(s), prefix.data());
          ASSERT_LE(reinterpret_cast<const uint8_t*>(s) + n, prefix.data() + prefix.size());
        }
        (void)ggufguard_get_array_int64(r.r, key, k, &i);
      }
      (void)ggufguard_get_uint64(r.r, key, &u);
      if (ggufguard_get_string(r.r, key, &s, &n) == GGUFGUARD_OK) {
        ASSERT_LE(reinterpret_cast<const uint8_t*>(s) + n, prefix.data() + prefix.size());
      }
    }
  }
}

TEST(CApi, PoliciesByNameAndDocument) {
  ggufguard_policy* p = reinterpret_cast<ggufguard_policy*>(1);
  EXPECT_EQ(ggufguard_policy_builtin("lenient", &p), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ggufguard_policy_builtin(nullptr, &p), GGUFGUARD_ERR_INVALID_ARGUMENT);
  const std::string bad = R"({"base": "default", "limits": {"no_such_limit": 1}})";
  EXPECT_EQ(ggufguard_policy_from_json(bad.data(), bad.size(), &p), GGUFGUARD_ERR_POLICY);
  EXPECT_NE(std::string(ggufguard_last_error()).find("no_such_limit"), std::string::npos) << ggufguard_last_error();
  EXPECT_EQ(ggufguard_policy_from_json("{", 1, &p), GGUFGUARD_ERR_POLICY);

  // A key outside the spec grammar: accepted by default, an error under
  // strict; and a document that lowers the KV count limit below the file's.
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))  // vocabulary-only
      .AddKv("Bad-Key", GgufValue::U8(1));
  const testing::BuiltFile f = b.Build();
  auto verdict = [&](const ggufguard_policy* policy) {
    ReportPtr r;
    EXPECT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), policy, &r.r), GGUFGUARD_OK);
    return ggufguard_report_valid(r.r);
  };
  ggufguard_policy* strict = nullptr;
  ASSERT_EQ(ggufguard_policy_builtin("strict", &strict), GGUFGUARD_OK);
  const std::string doc = R"({"base": "default", "limits": {"max_kv_count": 1}})";
  ggufguard_policy* custom = nullptr;
  ASSERT_EQ(ggufguard_policy_from_json(doc.data(), doc.size(), &custom), GGUFGUARD_OK) << ggufguard_last_error();
  EXPECT_EQ(verdict(nullptr), 1);
  EXPECT_EQ(verdict(strict), 0);
  EXPECT_EQ(verdict(custom), 0);
  ggufguard_policy_free(strict);
  ggufguard_policy_free(custom);
}

TEST(CApi, PathAndDescriptorAgreeWithTheBuffer) {
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  const std::string path = testing::TempPath("tiny.gguf");
  testing::WriteFileBytes(path, f.bytes);
  ReportPtr from_path, from_fd, from_pipe;
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &from_path.r), GGUFGUARD_OK);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ggufguard_validate_fd(fd, nullptr, &from_fd.r), GGUFGUARD_OK);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 0) << "the caller's offset moved";
  ::close(fd);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], f.bytes.data(), f.bytes.size()), static_cast<ssize_t>(f.bytes.size()));
  ::close(pipe_fds[1]);
  ASSERT_EQ(ggufguard_validate_fd(pipe_fds[0], nullptr, &from_pipe.r), GGUFGUARD_OK);
  ::close(pipe_fds[0]);
  for (const ReportPtr* r : {&from_path, &from_fd, &from_pipe}) {
    EXPECT_EQ(ggufguard_report_valid(r->r), 1);
    EXPECT_EQ(ggufguard_report_file_size(r->r), f.bytes.size());
    EXPECT_EQ(ggufguard_tensor_count(r->r), 4u);
    const char* s;
    size_t n;
    ASSERT_EQ(ggufguard_get_array_string(r->r, "tokenizer.ggml.tokens", 6, &s, &n), GGUFGUARD_OK);
    EXPECT_EQ(std::string_view(s, n), "ab");
  }
  ::unlink(path.c_str());

  ReportPtr missing;
  EXPECT_EQ(ggufguard_validate_path(testing::TempPath("missing.gguf").c_str(), nullptr, &missing.r), GGUFGUARD_ERR_IO);
  EXPECT_EQ(missing.r, nullptr);
  EXPECT_NE(std::string(ggufguard_last_error()), "");
  EXPECT_EQ(ggufguard_validate_fd(-1, nullptr, &missing.r), GGUFGUARD_ERR_IO);
  EXPECT_EQ(ggufguard_validate_path("/", nullptr, &missing.r), GGUFGUARD_ERR_IO);
}

TEST(CApi, DeepChecksTheDataOnEveryRoute) {
  const testing::BuiltFile bad = testing::TinyModelWithCleanData(0x7fc00000u);
  const testing::BuiltFile clean = testing::TinyModelWithCleanData();
  const uint64_t data_bytes = (56 + 8 + 8 + 56) * 4;  // the four F32 tensors
  const std::string path = testing::TempPath("deep_nan.gguf");
  testing::WriteFileBytes(path, bad.bytes);
  std::vector<ReportPtr> reports(6);
  ASSERT_EQ(ggufguard_validate_path_deep(path.c_str(), nullptr, 0, &reports[0].r), GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_validate_path_deep(path.c_str(), nullptr, 2, &reports[1].r), GGUFGUARD_OK);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ggufguard_validate_fd_deep(fd, nullptr, 1, &reports[2].r), GGUFGUARD_OK);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 0) << "the caller's offset moved";
  ::close(fd);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], bad.bytes.data(), bad.bytes.size()), static_cast<ssize_t>(bad.bytes.size()));
  ::close(pipe_fds[1]);
  ASSERT_EQ(ggufguard_validate_fd_deep(pipe_fds[0], nullptr, 0, &reports[3].r), GGUFGUARD_OK);
  ::close(pipe_fds[0]);
  ASSERT_EQ(ggufguard_validate_buffer_deep(bad.bytes.data(), bad.bytes.size(), nullptr, 0, &reports[4].r),
            GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_validate_buffer_deep(bad.bytes.data(), bad.bytes.size(), nullptr, 2, &reports[5].r),
            GGUFGUARD_OK);
  ::unlink(path.c_str());
  for (size_t k = 0; k < reports.size(); ++k) {
    const ggufguard_report* r = reports[k].r;
    SCOPED_TRACE(k);
    EXPECT_EQ(ggufguard_report_valid(r), 0);
    EXPECT_EQ(ggufguard_report_deep_ran(r), 1);
    EXPECT_EQ(ggufguard_report_deep_checked_tensors(r), 4u);
    EXPECT_EQ(ggufguard_report_deep_checked_bytes(r), data_bytes);
    EXPECT_EQ(ggufguard_report_deep_bad_values(r), 1u);
    EXPECT_EQ(ggufguard_report_deep_unchecked_bytes(r), 0u);
    EXPECT_EQ(ggufguard_report_deep_tensors_suppressed(r), 0u);
    // The finding says where.
    bool found = false;
    for (size_t i = 0; i < ggufguard_finding_count(r); ++i) {
      ggufguard_finding f;
      ASSERT_EQ(ggufguard_finding_at(r, i, &f), GGUFGUARD_OK);
      if (std::string(f.rule) != "GG6009") continue;
      found = true;
      EXPECT_STREQ(f.name, "tensor-data-non-finite");
      EXPECT_EQ(f.severity, GGUFGUARD_SEVERITY_ERROR);
      EXPECT_EQ(f.offset, bad.tensor_data_offsets[3] + 4 * 5) << f.message;
    }
    EXPECT_TRUE(found);
    // Per tensor: the one with the NaN first, then the others in file order.
    ASSERT_EQ(ggufguard_deep_tensor_count(r), 4u);
    ggufguard_deep_tensor t;
    ASSERT_EQ(ggufguard_deep_tensor_at(r, 0, &t), GGUFGUARD_OK);
    EXPECT_STREQ(t.name, "output.weight");
    EXPECT_EQ(t.name_length, std::strlen("output.weight"));
    EXPECT_EQ(t.tensor, 3u);
    EXPECT_EQ(t.ggml_type, 0u);
    EXPECT_EQ(t.checked_bytes, 56u * 4);
    EXPECT_EQ(t.bad_values, 1u);
    uint64_t sum = t.checked_bytes;
    for (size_t i = 1; i < 4; ++i) {
      ASSERT_EQ(ggufguard_deep_tensor_at(r, i, &t), GGUFGUARD_OK);
      EXPECT_EQ(t.tensor, i - 1);
      EXPECT_EQ(t.bad_values, 0u);
      sum += t.checked_bytes;
    }
    EXPECT_EQ(sum, data_bytes);
    EXPECT_EQ(ggufguard_deep_tensor_at(r, 4, &t), GGUFGUARD_ERR_RANGE);
    EXPECT_EQ(ggufguard_deep_tensor_at(r, SIZE_MAX, &t), GGUFGUARD_ERR_RANGE);
    EXPECT_EQ(ggufguard_deep_tensor_at(r, 0, nullptr), GGUFGUARD_ERR_INVALID_ARGUMENT);
  }

  // Clean data: valid, and the trusted table is there as without --deep.
  ReportPtr ok;
  ASSERT_EQ(ggufguard_validate_buffer_deep(clean.bytes.data(), clean.bytes.size(), nullptr, 0, &ok.r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_valid(ok.r), 1);
  EXPECT_EQ(ggufguard_report_deep_ran(ok.r), 1);
  EXPECT_EQ(ggufguard_report_deep_checked_bytes(ok.r), data_bytes);
  EXPECT_EQ(ggufguard_report_deep_bad_values(ok.r), 0u);
  EXPECT_EQ(ggufguard_tensor_count(ok.r), 4u);

  // Without --deep the data is not read: the same file is valid.
  ReportPtr shallow;
  ASSERT_EQ(ggufguard_validate_buffer(bad.bytes.data(), bad.bytes.size(), nullptr, &shallow.r), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_valid(shallow.r), 1);
  EXPECT_EQ(ggufguard_report_deep_ran(shallow.r), 0);
  EXPECT_EQ(ggufguard_report_deep_checked_bytes(shallow.r), 0u);
  EXPECT_EQ(ggufguard_deep_tensor_count(shallow.r), 0u);
  ggufguard_deep_tensor t;
  EXPECT_EQ(ggufguard_deep_tensor_at(shallow.r, 0, &t), GGUFGUARD_ERR_RANGE);

  // A policy that makes GG6009 a warning: the file passes, the count stays.
  ggufguard_policy* lenient = nullptr;
  const std::string doc = R"({"base": "default", "severities": {"GG6009": "warning"}})";
  ASSERT_EQ(ggufguard_policy_from_json(doc.data(), doc.size(), &lenient), GGUFGUARD_OK) << ggufguard_last_error();
  ReportPtr warned;
  ASSERT_EQ(ggufguard_validate_buffer_deep(bad.bytes.data(), bad.bytes.size(), lenient, 1, &warned.r), GGUFGUARD_OK);
  ggufguard_policy_free(lenient);
  EXPECT_EQ(ggufguard_report_valid(warned.r), 1);
  EXPECT_EQ(ggufguard_report_deep_bad_values(warned.r), 1u);

  // Arguments: too many threads, NULLs; handles are left NULL.
  ReportPtr refused;
  refused.r = reinterpret_cast<ggufguard_report*>(&refused);  // must be reset to NULL
  EXPECT_EQ(ggufguard_validate_buffer_deep(bad.bytes.data(), bad.bytes.size(), nullptr, 1025, &refused.r),
            GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(refused.r, nullptr);
  EXPECT_NE(std::string(ggufguard_last_error()), "");
  EXPECT_EQ(ggufguard_validate_path_deep(nullptr, nullptr, 0, &refused.r), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_validate_path_deep(testing::TempPath("missing.gguf").c_str(), nullptr, 0, &refused.r), GGUFGUARD_ERR_IO);
  EXPECT_EQ(ggufguard_validate_fd_deep(-1, nullptr, 0, &refused.r), GGUFGUARD_ERR_IO);
  EXPECT_EQ(ggufguard_validate_buffer_deep(nullptr, 1, nullptr, 0, &refused.r), GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ggufguard_validate_buffer_deep(bad.bytes.data(), bad.bytes.size(), nullptr, 0, nullptr),
            GGUFGUARD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(refused.r, nullptr);
  EXPECT_EQ(ggufguard_report_deep_ran(nullptr), 0);
  EXPECT_EQ(ggufguard_report_deep_bad_values(nullptr), 0u);
  EXPECT_EQ(ggufguard_deep_tensor_count(nullptr), 0u);
  EXPECT_EQ(ggufguard_deep_tensor_at(nullptr, 0, &t), GGUFGUARD_ERR_INVALID_ARGUMENT);
}

TEST(CppApi, DeepSummaryThroughTheWrapper) {
  const testing::BuiltFile bad = testing::TinyModelWithCleanData(0x7fc00000u);
  const std::string path = testing::TempPath("deep_cpp.gguf");
  testing::WriteFileBytes(path, bad.bytes);
  const api::Report by_path = api::ValidateDeep(path.c_str(), nullptr, 2);
  const api::Report in_memory = api::ValidateBufferDeep(bad.bytes.data(), bad.bytes.size());
  ::unlink(path.c_str());
  for (const api::Report* r : {&by_path, &in_memory}) {
    EXPECT_FALSE(r->valid());
    const std::optional<api::DeepSummary> d = r->deep();
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->checked_tensors, 4u);
    EXPECT_EQ(d->checked_bytes, (56u + 8 + 8 + 56) * 4);
    EXPECT_EQ(d->bad_values, 1u);
    EXPECT_EQ(d->unchecked_bytes, 0u);
    EXPECT_EQ(d->tensors_suppressed, 0u);
    ASSERT_EQ(d->tensors.size(), 4u);
    EXPECT_EQ(d->tensors[0].name, "output.weight");
    EXPECT_EQ(d->tensors[0].tensor, 3u);
    EXPECT_EQ(d->tensors[0].bad_values, 1u);
  }
  EXPECT_FALSE(api::ValidateBuffer(bad.bytes.data(), bad.bytes.size()).deep().has_value());
  try {
    api::ValidateBufferDeep(bad.bytes.data(), bad.bytes.size(), nullptr, 5000);
    ADD_FAILURE() << "5000 threads accepted";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), GGUFGUARD_ERR_INVALID_ARGUMENT);
  }
}

// The wrapper's view of the table's trust, the byte order and the
// suppressed count; and the table is a copy: bytes of the caller's buffer
// changed after validation (the caller's bug) do not reach it.
TEST(CppApi, TableTrustAndCountsThroughTheWrapper) {
  testing::BuiltFile f = testing::MakeTinyModel().Build();
  const api::Report r = api::ValidateBuffer(f.bytes.data(), f.bytes.size());
  EXPECT_TRUE(r.tensor_table_trusted());
  EXPECT_FALSE(r.big_endian());
  EXPECT_EQ(r.findings_suppressed(), 0u);
  const ggufguard_tensor before = r.tensor(0);
  std::fill(f.bytes.begin() + static_cast<ptrdiff_t>(f.tensor_info_offsets[0]),
            f.bytes.begin() + static_cast<ptrdiff_t>(f.data_offset), 0xff);
  const ggufguard_tensor after = r.tensor(0);
  EXPECT_EQ(std::vector<uint64_t>(after.ne, after.ne + 4), std::vector<uint64_t>(before.ne, before.ne + 4));
  EXPECT_EQ(after.ne[0], 8u);
  EXPECT_EQ(after.offset, before.offset);

  const testing::BuiltFile lying = TinyModelWith(3, {.offset = 0}, std::nullopt);
  const api::Policy forgiving = api::Policy::FromJson(PolicyForgiving(lying, "off"));
  const api::Report lie = api::ValidateBuffer(lying.bytes.data(), lying.bytes.size(), &forgiving);
  EXPECT_TRUE(lie.valid());
  EXPECT_FALSE(lie.tensor_table_trusted());
  EXPECT_EQ(lie.tensor_count(), 0u);
  try {
    lie.tensor(0);
    ADD_FAILURE() << "a tensor of an untrusted table";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), GGUFGUARD_ERR_NOT_VALID);
  }
}

TEST(CppApi, PrefixThroughTheWrapper) {
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  const api::Report whole = api::ValidateBuffer(f.bytes.data(), f.bytes.size());
  EXPECT_FALSE(whole.header_only());
  std::optional<api::Report> header;
  {
    std::vector<uint8_t> prefix(f.bytes.begin(), f.bytes.begin() + static_cast<ptrdiff_t>(f.data_offset));
    header.emplace(api::ValidatePrefix(prefix.data(), prefix.size(), f.file_size));
  }  // the prefix is freed: the report holds its own copy
  EXPECT_TRUE(header->valid());
  EXPECT_TRUE(header->header_only());
  EXPECT_EQ(header->file_size(), f.file_size);
  ASSERT_EQ(header->tensor_count(), whole.tensor_count());
  for (size_t i = 0; i < whole.tensor_count(); ++i) {
    // ne is read back from the report's copy of the header, not the freed prefix.
    const ggufguard_tensor a = header->tensor(i), b = whole.tensor(i);
    EXPECT_EQ(std::vector<uint64_t>(a.ne, a.ne + 4), std::vector<uint64_t>(b.ne, b.ne + 4)) << i;
    EXPECT_EQ(a.offset, b.offset) << i;
    EXPECT_EQ(a.size, b.size) << i;
  }
  EXPECT_EQ(header->get_string("general.architecture"), std::optional<std::string_view>("llama"));
  try {
    api::ValidatePrefix(f.bytes.data(), 20, f.file_size);
    ADD_FAILURE() << "a 20-byte prefix accepted";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), GGUFGUARD_ERR_IO);
    EXPECT_NE(std::string(e.what()).find("needs at least"), std::string::npos) << e.what();
  }
}

TEST(CApi, MappingHandsOutTheValidatedBytes) {
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  const std::string path = testing::TempPath("map.gguf");
  testing::WriteFileBytes(path, f.bytes);
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r.r), GGUFGUARD_OK);
  ggufguard_mapping* m = nullptr;
  ASSERT_EQ(ggufguard_map_path(r.r, path.c_str(), &m), GGUFGUARD_OK) << ggufguard_last_error();
  ggufguard_report_free(r.r);  // the mapping keeps its own table
  r.r = nullptr;
  ASSERT_EQ(ggufguard_mapping_tensor_count(m), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const void* data;
    uint64_t size;
    ASSERT_EQ(ggufguard_mapping_tensor_data(m, i, &data, &size), GGUFGUARD_OK);
    ASSERT_EQ(size, f.tensor_sizes[i]);
    EXPECT_EQ(std::memcmp(data, f.bytes.data() + f.tensor_data_offsets[i], size), 0) << i;
  }
  const void* data;
  uint64_t size;
  EXPECT_EQ(ggufguard_mapping_tensor_data(m, 4, &data, &size), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_mapping_tensor_data(m, SIZE_MAX, &data, &size), GGUFGUARD_ERR_RANGE);
  EXPECT_EQ(ggufguard_mapping_tensor_data(nullptr, 0, &data, &size), GGUFGUARD_ERR_INVALID_ARGUMENT);
  ggufguard_mapping_free(m);

  // A file that grew since validation, and another file of the same size.
  ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r.r), GGUFGUARD_OK);
  const std::string twin = testing::TempPath("twin.gguf");
  testing::WriteFileBytes(twin, f.bytes);
  m = nullptr;
  EXPECT_EQ(ggufguard_map_path(r.r, twin.c_str(), &m), GGUFGUARD_ERR_CHANGED);
  std::vector<uint8_t> grown = f.bytes;
  grown.push_back(0);
  testing::WriteFileBytes(path, grown);
  EXPECT_EQ(ggufguard_map_path(r.r, path.c_str(), &m), GGUFGUARD_ERR_CHANGED);
  EXPECT_EQ(m, nullptr);
  // From a buffer, only the size can be compared.
  ReportPtr from_buffer;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &from_buffer.r), GGUFGUARD_OK);
  ASSERT_EQ(ggufguard_map_path(from_buffer.r, twin.c_str(), &m), GGUFGUARD_OK);
  ggufguard_mapping_free(m);
  EXPECT_EQ(ggufguard_map_path(from_buffer.r, path.c_str(), &m), GGUFGUARD_ERR_CHANGED);
  EXPECT_EQ(ggufguard_map_path(from_buffer.r, testing::TempPath("missing").c_str(), &m), GGUFGUARD_ERR_IO);
  // A FIFO in the file's place: refused at once, not an open that waits
  // for a writer forever.
  const std::string fifo = testing::TempPath("map.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ggufguard_map_path(from_buffer.r, fifo.c_str(), &m), GGUFGUARD_ERR_IO);
  EXPECT_NE(std::string(ggufguard_last_error()).find("regular file"), std::string::npos) << ggufguard_last_error();
  EXPECT_EQ(m, nullptr);
  ::unlink(fifo.c_str());
  ::unlink(path.c_str());
  ::unlink(twin.c_str());
}

// A policy may make a file with an overlapping, misaligned, out-of-file or
// unsized tensor valid (the verdict is the gatekeeper's to set), but the
// table a loader reads keeps its promise whatever the policy: it is not
// handed out, and the file is not mapped. Before, ggufguard_tensor_at gave
// the overlapping extents of such a "valid" report.
TEST(CApi, NoPolicyMakesTheTensorTableLie) {
  struct Case {
    const char* name;
    testing::TensorOptions lie;  // for output.weight, the last tensor
    const char* reason;
    std::optional<uint32_t> type = std::nullopt;
  };
  const Case cases[] = {
      {"overlap", {.offset = 0}, "shares bytes"},
      {"misaligned", {.offset = 4}, "not aligned"},
      {"out of the file", {.offset = uint64_t{1} << 40}, "outside"},
      {"offset wraps", {.offset = UINT64_MAX - 31}, "no computable size or offset"},
      {"unknown type", {.byte_size = 224}, "no computable size", 200},
  };
  const std::string path = testing::TempPath("lying_table.gguf");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const testing::BuiltFile f = TinyModelWith(3, c.lie, c.type);
    testing::WriteFileBytes(path, f.bytes);
    ReportPtr strict;
    ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &strict.r), GGUFGUARD_OK);
    EXPECT_EQ(ggufguard_report_valid(strict.r), 0);
    EXPECT_EQ(ggufguard_report_tensor_table_trusted(strict.r), 0);
    for (const char* severity : {"off", "info", "warning"}) {
      SCOPED_TRACE(severity);
      const std::string doc = PolicyForgiving(f, severity);
      ggufguard_policy* policy = nullptr;
      ASSERT_EQ(ggufguard_policy_from_json(doc.data(), doc.size(), &policy), GGUFGUARD_OK) << ggufguard_last_error();
      ReportPtr r;
      ASSERT_EQ(ggufguard_validate_path(path.c_str(), policy, &r.r), GGUFGUARD_OK);
      EXPECT_EQ(ggufguard_report_valid(r.r), 1) << doc;
      EXPECT_EQ(ggufguard_report_tensor_table_trusted(r.r), 0);
      EXPECT_EQ(ggufguard_tensor_count(r.r), 0u);
      ggufguard_tensor t;
      EXPECT_EQ(ggufguard_tensor_at(r.r, 0, &t), GGUFGUARD_ERR_NOT_VALID);
      const std::string why = ggufguard_last_error();
      EXPECT_NE(why.find("no tensor table is handed out"), std::string::npos) << why;
      EXPECT_NE(why.find(c.reason), std::string::npos) << why;
      ggufguard_mapping* m = nullptr;
      EXPECT_EQ(ggufguard_map_path(r.r, path.c_str(), &m), GGUFGUARD_ERR_NOT_VALID);
      EXPECT_EQ(m, nullptr);
      // The same policy on the honest file: its table is handed out, so
      // the refusal above is the lie's, not the policy's.
      const testing::BuiltFile honest = testing::MakeTinyModel().Build();
      ReportPtr h;
      ASSERT_EQ(ggufguard_validate_buffer(honest.bytes.data(), honest.bytes.size(), policy, &h.r), GGUFGUARD_OK);
      EXPECT_EQ(ggufguard_report_tensor_table_trusted(h.r), 1);
      EXPECT_EQ(ggufguard_tensor_count(h.r), 4u);
      ggufguard_policy_free(policy);
    }
  }
  ::unlink(path.c_str());
}

// Under a policy that disables every rule, whatever a file holds: any table
// handed out keeps its promise (checked here from the table alone), no
// getter reports an internal error, and every file that is valid under the
// default policy has its table (the re-check is never stricter than the
// rules).
TEST(CApi, EveryTableHandedOutKeepsItsPromise) {
  std::string all_off = R"({"base": "default", "disable": [)";
  for (size_t i = 0; i < ggufguard_rule_count(); ++i) {
    ggufguard_rule_info info;
    ASSERT_EQ(ggufguard_rule_at(i, &info), GGUFGUARD_OK);
    all_off += (i ? ", \"" : "\"") + std::string(info.name) + "\"";
  }
  all_off += "]}";
  ggufguard_policy* off = nullptr;
  ASSERT_EQ(ggufguard_policy_from_json(all_off.data(), all_off.size(), &off), GGUFGUARD_OK) << ggufguard_last_error();
  std::vector<fs::path> files;
  for (const fs::path& root : {fs::path(GGUFGUARD_SOURCE_DIR) / "corpus", testing::SharedDir() / "corpus-real"}) {
    if (!fs::is_directory(root)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file() && e.path().extension() == ".gguf") files.push_back(e.path());
    }
  }
  ASSERT_GT(files.size(), 150u);
  int trusted = 0, refused = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    ReportPtr lenient, normal;
    ASSERT_EQ(ggufguard_validate_path(file.c_str(), off, &lenient.r), GGUFGUARD_OK);
    ASSERT_EQ(ggufguard_validate_path(file.c_str(), nullptr, &normal.r), GGUFGUARD_OK);
    if (ggufguard_report_valid(normal.r)) {
      EXPECT_EQ(ggufguard_report_tensor_table_trusted(normal.r), 1);
    }
    const uint64_t file_size = ggufguard_report_file_size(lenient.r);
    if (!ggufguard_report_tensor_table_trusted(lenient.r)) {
      ++refused;
      ggufguard_tensor t;
      const ggufguard_status s = ggufguard_tensor_at(lenient.r, 0, &t);
      EXPECT_EQ(s, GGUFGUARD_ERR_NOT_VALID) << ggufguard_last_error();
      continue;
    }
    ++trusted;
    // The alignment the file asks for (32 when it names none, or names one
    // of another type, which the rules refuse and the disabled policy lets
    // through: the parser then lays the file out at 32).
    uint64_t alignment = 32;
    int alignment_type = -1;
    if (ggufguard_get_type(lenient.r, "general.alignment", &alignment_type) == GGUFGUARD_OK &&
        alignment_type == GGUFGUARD_TYPE_UINT32) {
      ASSERT_EQ(ggufguard_get_uint64(lenient.r, "general.alignment", &alignment), GGUFGUARD_OK);
    }
    std::vector<std::pair<uint64_t, uint64_t>> extents;
    for (size_t i = 0; i < ggufguard_tensor_count(lenient.r); ++i) {
      ggufguard_tensor t;
      ASSERT_EQ(ggufguard_tensor_at(lenient.r, i, &t), GGUFGUARD_OK) << ggufguard_last_error();
      ASSERT_LE(t.size, file_size);
      ASSERT_LE(t.offset, file_size - t.size);
      ASSERT_LE(t.n_dims, 4u);
      if (alignment != 0 && (alignment & (alignment - 1)) == 0) {
        EXPECT_EQ(t.offset % alignment, 0u) << i;
      }
      if (t.size > 0) extents.emplace_back(t.offset, t.offset + t.size);  // one of no bytes shares none
    }
    std::sort(extents.begin(), extents.end());
    uint64_t covered_end = 0;  // a running maximum: [0,100) [60,70) overlap however many lie between
    for (const auto& [begin, end] : extents) {
      EXPECT_GE(begin, covered_end);
      covered_end = std::max(covered_end, end);
    }
    ggufguard_mapping* m = nullptr;
    if (file_size > 0 && file_size != fs::file_size(file)) {
      // A llamafile (GG9166): the report is its GGUF member's, which a
      // mapping of the whole file would misplace; it is refused.
      EXPECT_EQ(ggufguard_map_path(lenient.r, file.c_str(), &m), GGUFGUARD_ERR_NOT_VALID);
      EXPECT_NE(std::string(ggufguard_last_error()).find("llamafile"), std::string::npos) << ggufguard_last_error();
    } else if (file_size > 0) {
      EXPECT_EQ(ggufguard_map_path(lenient.r, file.c_str(), &m), GGUFGUARD_OK) << ggufguard_last_error();
      ggufguard_mapping_free(m);
    }
  }
  // Both kinds are there: corpus/ holds files whose tables lie.
  EXPECT_GT(trusted, 50);
  EXPECT_GT(refused, 10);
  ggufguard_policy_free(off);
}

// A big-endian file is valid (GG2005 is a note), and a loader can tell:
// the table's data is the file's bytes, in the file's order.
TEST(CApi, ByteOrderIsReported) {
  for (bool big : {false, true}) {
    const testing::TinyModel model = testing::MakeTinyModel();
    GgufBuilder b;
    b.set_big_endian(big);
    for (const auto& [key, value] : model.kvs) b.AddKv(key, value);
    for (const testing::TinyModel::Tensor& t : model.tensors) {
      uint64_t n = 1;
      for (uint64_t d : t.dims) n *= d;
      std::vector<uint8_t> ones;
      for (uint64_t i = 0; i < n; ++i) ones.insert(ones.end(), {0x00, 0x00, 0x80, 0x3f});  // 1.0f
      b.AddTensor(t.name, t.dims, t.type, {.data = ones});
    }
    const testing::BuiltFile f = b.Build();
    const std::string path = testing::TempPath(big ? "big.gguf" : "little.gguf");
    testing::WriteFileBytes(path, f.bytes);
    ReportPtr r;
    ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r.r), GGUFGUARD_OK);
    EXPECT_EQ(ggufguard_report_valid(r.r), 1);
    EXPECT_EQ(ggufguard_report_big_endian(r.r), big ? 1 : 0);
    // The mapping hands out the file's bytes, not converted: 1.0f is
    // 00 00 80 3f little-endian, 3f 80 00 00 in a big-endian file.
    ggufguard_mapping* m = nullptr;
    ASSERT_EQ(ggufguard_map_path(r.r, path.c_str(), &m), GGUFGUARD_OK) << ggufguard_last_error();
    const void* data = nullptr;
    uint64_t size = 0;
    ASSERT_EQ(ggufguard_mapping_tensor_data(m, 0, &data, &size), GGUFGUARD_OK);
    ASSERT_GE(size, 4u);
    const auto* bytes = static_cast<const uint8_t*>(data);
    const std::vector<uint8_t> one_big = {0x3f, 0x80, 0x00, 0x00}, one_little = {0x00, 0x00, 0x80, 0x3f};
    EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + 4), big ? one_big : one_little);
    ggufguard_mapping_free(m);
    ::unlink(path.c_str());
  }
  EXPECT_EQ(ggufguard_report_big_endian(nullptr), 0);
}

// Findings past a rule's listing limit are counted, and the count is there.
TEST(CApi, SuppressedFindingsAreCounted) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama")).AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"));
  for (int i = 0; i < 7; ++i) b.AddKv("no.such.key_" + std::to_string(i), GgufValue::U8(1));
  const testing::BuiltFile f = b.Build();
  const std::string doc = R"({"base": "default", "limits": {"max_findings_per_rule": 2}})";
  ggufguard_policy* policy = nullptr;
  ASSERT_EQ(ggufguard_policy_from_json(doc.data(), doc.size(), &policy), GGUFGUARD_OK) << ggufguard_last_error();
  ReportPtr r;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), policy, &r.r), GGUFGUARD_OK);
  size_t listed = 0;
  for (size_t i = 0; i < ggufguard_finding_count(r.r); ++i) {
    ggufguard_finding finding;
    ASSERT_EQ(ggufguard_finding_at(r.r, i, &finding), GGUFGUARD_OK);
    listed += std::string(finding.name) == "unknown-key";
  }
  EXPECT_EQ(listed, 2u);
  EXPECT_EQ(ggufguard_report_findings_suppressed(r.r), 5u);
  EXPECT_EQ(ggufguard_report_findings_suppressed(nullptr), 0u);
  ggufguard_policy_free(policy);
}

// The real files: the C API's verdict and table are the C++ validator's.
TEST(CApi, RealCorpusVerdictsAndTables) {
  GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS();
  const fs::path dir = testing::RealCorpusDir();
  int files = 0;
  for (const char* sub : {"valid", "malformed"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(dir / sub)) {
      ++files;
      const std::string path = e.path().string();
      ReportPtr r;
      ASSERT_EQ(ggufguard_validate_path(path.c_str(), nullptr, &r.r), GGUFGUARD_OK) << path;
      const bool want_valid = std::string(sub) == "valid";
      EXPECT_EQ(ggufguard_report_valid(r.r), want_valid ? 1 : 0) << path;
      if (!want_valid) {
        EXPECT_GT(ggufguard_finding_count(r.r), 0u) << path;
        continue;
      }
      std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(e.path());
      ASSERT_TRUE(bytes.has_value());
      const Report cpp = ValidateBytes(*bytes, DefaultPolicy());
      ASSERT_EQ(ggufguard_tensor_count(r.r), cpp.header.tensors.size()) << path;
      for (size_t i = 0; i < cpp.header.tensors.size(); ++i) {
        ggufguard_tensor t;
        ASSERT_EQ(ggufguard_tensor_at(r.r, i, &t), GGUFGUARD_OK);
        EXPECT_EQ(std::string_view(t.name, t.name_length), cpp.header.tensors[i].name);
        EXPECT_EQ(t.offset, cpp.header.tensors[i].absolute_offset);
        EXPECT_EQ(t.size, cpp.header.tensors[i].byte_size);
      }
      uint64_t count = 0;
      int type = -1;
      if (ggufguard_get_array(r.r, "tokenizer.ggml.tokens", &type, &count) == GGUFGUARD_OK) {
        EXPECT_EQ(type, GGUFGUARD_TYPE_STRING);
        const char* s;
        size_t n;
        EXPECT_EQ(ggufguard_get_array_string(r.r, "tokenizer.ggml.tokens", count - 1, &s, &n), GGUFGUARD_OK);
        EXPECT_EQ(ggufguard_get_array_string(r.r, "tokenizer.ggml.tokens", count, &s, &n), GGUFGUARD_ERR_RANGE);
      }
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace ggufguard
