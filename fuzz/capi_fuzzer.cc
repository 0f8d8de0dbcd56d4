// capi_fuzzer: the C API (include/ggufguard/ggufguard.h) as a C or FFI
// caller drives it, on arbitrary bytes: validate the buffer, then call every
// getter with every key the file has, with keys one byte off from them, and
// with indices at, past and far past each array's end, derived from the
// input.
//
// Checks:
//   - validating a buffer never fails as a call: an invalid file is a report;
//   - the C report says what the C++ report says (verdict, finding count,
//     KV and tensor counts);
//   - every pointer a getter returns lies inside the input, with its length;
//   - a getter that fails leaves no result and names a status;
//   - a valid file, written to a memfd and mapped, hands out exactly the
//     bytes at each tensor's offset;
//   - a valid file under the default policy has a trusted table, and under
//     a policy that disables every rule any table handed out still keeps
//     its promise (inside the file, no two tensors sharing a byte).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "ggufguard/ggufguard.h"

namespace ggufguard::fuzz {
namespace {

struct Input {
  const uint8_t* begin;
  size_t size;
  bool Holds(const void* p, uint64_t n) const {
    const uint8_t* q = static_cast<const uint8_t*>(p);
    return q >= begin && static_cast<uint64_t>(q - begin) <= size && n <= size - static_cast<uint64_t>(q - begin);
  }
};

void CheckStatus(ggufguard_status s) {
  GGUFGUARD_FUZZ_CHECK(s >= GGUFGUARD_OK && s <= GGUFGUARD_ERR_INTERNAL && s != GGUFGUARD_ERR_INTERNAL &&
                           s != GGUFGUARD_ERR_NO_MEMORY,
                       std::string("getter status ") + ggufguard_status_name(s) + ": " + ggufguard_last_error());
}

// Every getter on one key; arrays at the indices in `indices`.
void ProbeKey(const ggufguard_report* r, const char* key, const std::vector<uint64_t>& indices, const Input& in) {
  const char* s = nullptr;
  size_t n = 0;
  int64_t i64;
  uint64_t u64;
  double f64;
  int b;
  int type = -1;
  const ggufguard_status type_status = ggufguard_get_type(r, key, &type);
  CheckStatus(type_status);
  ggufguard_status st = ggufguard_get_string(r, key, &s, &n);
  CheckStatus(st);
  if (st == GGUFGUARD_OK) {
    GGUFGUARD_FUZZ_CHECK(type == GGUFGUARD_TYPE_STRING, "a string from a non-string");
    GGUFGUARD_FUZZ_CHECK(in.Holds(s, n), "a string outside the input");
  }
  CheckStatus(ggufguard_get_int64(r, key, &i64));
  CheckStatus(ggufguard_get_uint64(r, key, &u64));
  st = ggufguard_get_float64(r, key, &f64);
  CheckStatus(st);
  GGUFGUARD_FUZZ_CHECK(st != GGUFGUARD_OK || type == GGUFGUARD_TYPE_FLOAT32 || type == GGUFGUARD_TYPE_FLOAT64,
                       "a float from a non-float");
  CheckStatus(ggufguard_get_bool(r, key, &b));
  int element_type = -1;
  uint64_t count = 0;
  st = ggufguard_get_array(r, key, &element_type, &count);
  CheckStatus(st);
  if (st != GGUFGUARD_OK) return;
  GGUFGUARD_FUZZ_CHECK(type == GGUFGUARD_TYPE_ARRAY, "an array from a non-array");
  std::vector<uint64_t> at = indices;
  for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{2}}) {
    at.push_back(count - 1 + d);  // the last, one past, two past (wraps for count 0)
  }
  for (uint64_t index : at) {
    st = ggufguard_get_array_string(r, key, index, &s, &n);
    CheckStatus(st);
    if (st == GGUFGUARD_OK) {
      GGUFGUARD_FUZZ_CHECK(index < count, "an element past the count");
      GGUFGUARD_FUZZ_CHECK(in.Holds(s, n), "an array string outside the input");
    }
    st = ggufguard_get_array_int64(r, key, index, &i64);
    CheckStatus(st);
    GGUFGUARD_FUZZ_CHECK(st != GGUFGUARD_OK || index < count, "an element past the count");
    CheckStatus(ggufguard_get_array_uint64(r, key, index, &u64));
    CheckStatus(ggufguard_get_array_float64(r, key, index, &f64));
    CheckStatus(ggufguard_get_array_bool(r, key, index, &b));
  }
}

// A valid file through a descriptor and a mapping: the same bytes.
void CheckMapping(const ggufguard_report* from_buffer, const Input& in) {
  int fd = ::memfd_create("capi_fuzzer", MFD_CLOEXEC);
  if (fd < 0) return;  // no memfd here: nothing to check
  size_t done = 0;
  while (done < in.size) {
    ssize_t w = ::write(fd, in.begin + done, in.size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ggufguard_report* from_fd = nullptr;
  GGUFGUARD_FUZZ_CHECK(ggufguard_validate_fd(fd, nullptr, &from_fd) == GGUFGUARD_OK, ggufguard_last_error());
  GGUFGUARD_FUZZ_CHECK(ggufguard_report_valid(from_fd) == 1, "valid from a buffer, invalid from a descriptor");
  ggufguard_mapping* m = nullptr;
  GGUFGUARD_FUZZ_CHECK(ggufguard_map_fd(from_fd, fd, &m) == GGUFGUARD_OK, ggufguard_last_error());
  const size_t n = ggufguard_tensor_count(from_buffer);
  GGUFGUARD_FUZZ_CHECK(ggufguard_mapping_tensor_count(m) == n, "mapping tensor count");
  for (size_t i = 0; i <= n; ++i) {
    const void* p = nullptr;
    uint64_t size = 0;
    ggufguard_status st = ggufguard_mapping_tensor_data(m, i, &p, &size);
    if (i == n) {
      GGUFGUARD_FUZZ_CHECK(st == GGUFGUARD_ERR_RANGE, "a tensor past the table");
      break;
    }
    ggufguard_tensor t;
    GGUFGUARD_FUZZ_CHECK(st == GGUFGUARD_OK && ggufguard_tensor_at(from_buffer, i, &t) == GGUFGUARD_OK, "tensor");
    GGUFGUARD_FUZZ_CHECK(size == t.size && std::memcmp(p, in.begin + t.offset, size) == 0,
                         "mapped bytes differ from the file's");
  }
  ggufguard_mapping_free(m);
  ggufguard_report_free(from_fd);
  ::close(fd);
}

// A policy that disables every rule: the verdict is then "valid" for any
// file whose header parses, and only the table's own check stands between
// a lying tensor and the caller.
const ggufguard_policy* AllRulesOff() {
  static const ggufguard_policy* const policy = [] {
    std::string doc = R"({"base": "default", "disable": [)";
    for (size_t i = 0; i < ggufguard_rule_count(); ++i) {
      ggufguard_rule_info info;
      if (ggufguard_rule_at(i, &info) != GGUFGUARD_OK) __builtin_trap();
      doc += (i ? ", \"" : "\"") + std::string(info.name) + "\"";
    }
    doc += "]}";
    ggufguard_policy* p = nullptr;
    if (ggufguard_policy_from_json(doc.data(), doc.size(), &p) != GGUFGUARD_OK) __builtin_trap();
    return p;
  }();
  return policy;
}

void CheckTableUnderNoRules(const Input& in) {
  ggufguard_report* r = nullptr;
  GGUFGUARD_FUZZ_CHECK(ggufguard_validate_buffer(in.begin, in.size, AllRulesOff(), &r) == GGUFGUARD_OK && r,
                       std::string("validate_buffer failed: ") + ggufguard_last_error());
  const size_t n = ggufguard_tensor_count(r);
  GGUFGUARD_FUZZ_CHECK(n == 0 || ggufguard_report_tensor_table_trusted(r) == 1, "tensors without a trusted table");
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (size_t i = 0; i < n; ++i) {
    ggufguard_tensor t;
    GGUFGUARD_FUZZ_CHECK(ggufguard_tensor_at(r, i, &t) == GGUFGUARD_OK, "tensor_at in a trusted table");
    GGUFGUARD_FUZZ_CHECK(t.offset <= in.size && t.size <= in.size - t.offset && t.n_dims <= 4,
                         "a lenient policy's table has a tensor outside the file");
    if (t.size > 0) extents.emplace_back(t.offset, t.offset + t.size);
  }
  std::sort(extents.begin(), extents.end());
  uint64_t covered_end = 0;  // a running maximum, not the neighbour's end
  for (const auto& [begin, end] : extents) {
    GGUFGUARD_FUZZ_CHECK(begin >= covered_end, "a lenient policy's table has an overlap");
    covered_end = std::max(covered_end, end);
  }
  if (ggufguard_report_tensor_table_trusted(r) == 0) {
    ggufguard_tensor t;
    GGUFGUARD_FUZZ_CHECK(ggufguard_tensor_at(r, 0, &t) == GGUFGUARD_ERR_NOT_VALID, "an untrusted table's status");
  }
  ggufguard_report_free(r);
}

void Run(const uint8_t* data, size_t size) {
  const Input in{data, size};
  ggufguard_report* r = nullptr;
  GGUFGUARD_FUZZ_CHECK(ggufguard_validate_buffer(data, size, nullptr, &r) == GGUFGUARD_OK && r != nullptr,
                       std::string("validate_buffer failed: ") + ggufguard_last_error());
  const Report cpp = ValidateBytes(absl::MakeConstSpan(data, size), DefaultPolicy());
  GGUFGUARD_FUZZ_CHECK((ggufguard_report_valid(r) == 1) == cpp.valid(), "verdicts differ");
  GGUFGUARD_FUZZ_CHECK(ggufguard_finding_count(r) == cpp.findings.size(), "finding counts differ");
  GGUFGUARD_FUZZ_CHECK(ggufguard_kv_count(r) == cpp.header.kvs.size(), "KV counts differ");
  GGUFGUARD_FUZZ_CHECK(ggufguard_tensor_count(r) == (cpp.valid() ? cpp.header.tensors.size() : 0),
                       "tensor counts differ");
  GGUFGUARD_FUZZ_CHECK(ggufguard_report_tensor_table_trusted(r) == (cpp.valid() ? 1 : 0),
                       std::string("a valid file without its table: ") + ggufguard_last_error());
  GGUFGUARD_FUZZ_CHECK(ggufguard_report_big_endian(r) == (cpp.header.byte_order == ByteOrder::kBig ? 1 : 0),
                       "byte orders differ");
  CheckTableUnderNoRules(in);

  for (size_t i = 0; i <= ggufguard_finding_count(r); ++i) {
    ggufguard_finding f;
    ggufguard_status st = ggufguard_finding_at(r, i, &f);
    GGUFGUARD_FUZZ_CHECK((st == GGUFGUARD_OK) == (i < ggufguard_finding_count(r)), "finding_at bounds");
    if (st == GGUFGUARD_OK) GGUFGUARD_FUZZ_CHECK(f.rule && f.name && f.message, "a NULL finding field");
  }
  for (size_t i = 0; i <= ggufguard_tensor_count(r); ++i) {
    ggufguard_tensor t;
    ggufguard_status st = ggufguard_tensor_at(r, i, &t);
    if (i == ggufguard_tensor_count(r)) {
      GGUFGUARD_FUZZ_CHECK(st != GGUFGUARD_OK, "a tensor past the table");
      break;
    }
    GGUFGUARD_FUZZ_CHECK(st == GGUFGUARD_OK && t.offset <= size && t.size <= size - t.offset,
                         "a tensor outside the file");
  }

  // The deep route: the same verdict as the library's, its getters in
  // bounds, and a name for every listed tensor.
  {
    ggufguard_report* deep = nullptr;
    GGUFGUARD_FUZZ_CHECK(ggufguard_validate_buffer_deep(data, size, nullptr, 1, &deep) == GGUFGUARD_OK && deep,
                         std::string("validate_buffer_deep failed: ") + ggufguard_last_error());
    const Report cpp_deep = ValidateBytes(absl::MakeConstSpan(data, size), DefaultPolicy(), DeepOptions{.enabled = true, .jobs = 1});
    GGUFGUARD_FUZZ_CHECK((ggufguard_report_valid(deep) == 1) == cpp_deep.valid(), "deep verdicts differ");
    GGUFGUARD_FUZZ_CHECK((ggufguard_report_deep_ran(deep) == 1) == cpp_deep.deep.ran, "deep ran differs");
    GGUFGUARD_FUZZ_CHECK(ggufguard_report_deep_bad_values(deep) == cpp_deep.deep.bad_values, "deep counts differ");
    const size_t n = ggufguard_deep_tensor_count(deep);
    for (size_t i = 0; i <= n; ++i) {
      ggufguard_deep_tensor t;
      const ggufguard_status st = ggufguard_deep_tensor_at(deep, i, &t);
      GGUFGUARD_FUZZ_CHECK((st == GGUFGUARD_OK) == (i < n), "deep_tensor_at bounds");
      if (st == GGUFGUARD_OK) GGUFGUARD_FUZZ_CHECK(t.name != nullptr && t.checked_bytes <= size, "a deep tensor");
    }
    ggufguard_report_free(deep);
  }

  // Indices from the input itself, so that libFuzzer steers them.
  std::vector<uint64_t> indices = {0, UINT64_MAX, UINT64_MAX / 2, uint64_t{1} << 32};
  if (size >= 8) {
    uint64_t v;
    std::memcpy(&v, data + size - 8, 8);
    indices.push_back(v);
    indices.push_back(v & 0xffff);
  }
  const size_t kv_count = ggufguard_kv_count(r);
  for (size_t i = 0; i <= kv_count && i < 64; ++i) {
    const char* key = nullptr;
    size_t key_length = 0;
    int type = -1;
    ggufguard_status st = ggufguard_kv_at(r, i, &key, &key_length, &type);
    if (i == kv_count) {
      GGUFGUARD_FUZZ_CHECK(st == GGUFGUARD_ERR_RANGE, "a key past the end");
      break;
    }
    GGUFGUARD_FUZZ_CHECK(st == GGUFGUARD_OK && key != nullptr && key[key_length] == '\0', "kv_at");
    ProbeKey(r, key, indices, in);
    // One byte off: shorter, longer, the last byte changed.
    std::string near(key, key_length);
    ProbeKey(r, (near + "x").c_str(), indices, in);
    if (!near.empty()) {
      ProbeKey(r, near.substr(0, near.size() - 1).c_str(), indices, in);
      near.back() = static_cast<char>(near.back() ^ 1);
      ProbeKey(r, near.c_str(), indices, in);
    }
  }
  ProbeKey(r, "", indices, in);
  ProbeKey(r, std::string(reinterpret_cast<const char*>(data), size < 32 ? size : 32).c_str(), indices, in);

  // A llamafile (no GGUF magic, GG9166) is judged as its member, and its
  // report maps nothing (docs/library.md): only a GGUF is mapped.
  const bool gguf_magic = in.size >= 4 && std::memcmp(in.begin, "GGUF", 4) == 0;
  if (ggufguard_report_valid(r) && gguf_magic) CheckMapping(r, in);
  ggufguard_report_free(r);
}

}  // namespace
}  // namespace ggufguard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ggufguard::fuzz::Run(data, size);
  return 0;
}
